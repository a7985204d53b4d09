package fetch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestCopyTypeKeepsNoHeader fetches references whose server declares a
// media type followed by a 60 KiB parameter, and checks that the saved
// copies' records do not keep those headers alive: a copy's media type is
// a few bytes, and a record lives as long as the host keeps it (L6).
func TestCopyTypeKeepsNoHeader(t *testing.T) {
	const n = 64
	header := "application/x-foo; p=" + strings.Repeat("a", 60<<10)
	e := newEnv(t, body([]byte("\x00\x01\x02\x03\x04\x05\x06\x07"), header))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.ref(serverName, fmt.Sprintf(`{"type":"resource","uri":"$ORIGIN/r%d"}`, i)).ID
	}
	var before, after runtime.MemStats
	runtime.GC() // twice: sync.Pool caches keep what they hold through one
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		if _, err := e.f.Fetch(t.Context(), id, Request{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC() // twice: sync.Pool caches keep what they hold through one
	runtime.GC()
	runtime.ReadMemStats(&after)
	for _, id := range ids {
		rec, ok := e.reg.Lookup(id)
		if !ok || rec.Copy == nil || rec.Copy.MimeType != "application/x-foo" {
			t.Fatalf("record %s: copy %+v, want one of type application/x-foo", id, rec.Copy)
		}
	}
	// The copies are 8 bytes each and their types 16; the headers were
	// 60 KiB each.
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 1<<20 {
		t.Errorf("%d saved copies of 8 bytes keep %d bytes of heap alive; want at most 1 MiB", n, held)
	}
	runtime.KeepAlive(e)
}
