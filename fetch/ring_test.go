package fetch

import (
	"runtime"
	"testing"
	"time"
	"weak"
)

// The ring tests use chunk sizes no Fetcher in the package's tests uses,
// so that no other test's copy takes or gives back their rings.

// TestRingKeptAcrossCollections pins the reuse half of F6's memory rule:
// a ring given back is there for the next copy even when the collector
// runs in between, as it does many times a second in a host that fetches
// several payloads at once (BenchmarkHostFlow/fetchers=8, B/op).
func TestRingKeptAcrossCollections(t *testing.T) {
	const chunk = 3 << 10
	r := getRing(chunk)
	wp := weak.Make(r) // the test itself must not keep r alive
	putRing(r)
	r = nil
	runtime.GC()
	runtime.GC()
	got := getRing(chunk)
	defer putRing(got)
	if weak.Make(got) != wp {
		t.Fatal("a ring given back was not reused after two collections")
	}
	if n := len(got.free); n != len(got.bufs) {
		t.Fatalf("a reused ring offers %d of its %d buffers", n, len(got.bufs))
	}
}

// TestRingReleasedWhenIdle pins the other half: the idle list stops
// holding a ring keepIdle after it came back, so a host that stops
// fetching gets the memory back.
func TestRingReleasedWhenIdle(t *testing.T) {
	setKeepIdle(t, 10*time.Millisecond)
	const chunk = 5 << 10
	r := getRing(chunk)
	wp := weak.Make(r)
	putRing(r)
	r = nil
	deadline := time.Now().Add(10 * time.Second)
	for wp.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("an idle ring was still held 10 s after it came back")
		}
		time.Sleep(5 * time.Millisecond)
		runtime.GC()
	}
	// The list no longer offers the freed ring.
	if got := getRing(chunk); got == nil || len(got.free) != len(got.bufs) {
		t.Fatal("getRing did not make a whole new ring")
	} else {
		putRing(got)
	}
}

// TestRingReleaseRearms checks that a ring given back while another is
// held is itself released later: the release runs again for it.
func TestRingReleaseRearms(t *testing.T) {
	setKeepIdle(t, 50*time.Millisecond)
	const chunk = 7 << 10
	a, b := getRing(chunk), getRing(chunk)
	wa, wb := weak.Make(a), weak.Make(b)
	putRing(a)
	time.Sleep(30 * time.Millisecond)
	putRing(b)
	a, b = nil, nil
	deadline := time.Now().Add(10 * time.Second)
	for wa.Value() != nil || wb.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("rings still held 10 s after they came back: first %t, second %t", wa.Value() != nil, wb.Value() != nil)
		}
		time.Sleep(5 * time.Millisecond)
		runtime.GC()
	}
}

// setKeepIdle sets keepIdle to d for the test, under the idle list's lock
// as the code reads it, and moves a release already due to d from now.
func setKeepIdle(t *testing.T, d time.Duration) {
	idle.Lock()
	old := keepIdle
	keepIdle = d
	if idle.timer != nil {
		idle.timer.Reset(d)
	}
	idle.Unlock()
	t.Cleanup(func() {
		idle.Lock()
		keepIdle = old
		idle.Unlock()
	})
}
