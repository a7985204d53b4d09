package memtest

import "testing"

var kept, dropped [][]byte

// TestHeld checks that Held counts what run keeps alive and not what it
// drops.
func TestHeld(t *testing.T) {
	if held := Held(func() { kept = append(kept, make([]byte, 8<<20)) }); held < 8<<20 {
		t.Errorf("8 MiB kept alive: Held = %d", held)
	}
	if held := Held(func() { dropped = append(dropped, make([]byte, 8<<20)); dropped = nil }); held > 1<<20 {
		t.Errorf("8 MiB dropped: Held = %d", held)
	}
	kept = nil
}
