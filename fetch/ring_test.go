package fetch

import (
	"runtime"
	"sync"
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
	got, same := reusedAcrossCollections(3 << 10)
	defer putRing(got)
	if !same {
		t.Fatal("a ring given back was not reused after two collections")
	}
	if n := len(got.free); n != len(got.bufs) {
		t.Fatalf("a reused ring offers %d of its %d buffers", n, len(got.bufs))
	}
}

// reusedAcrossCollections takes a new ring of chunk bytes a chunk, gives
// it back, runs two collections and takes a ring again: it returns that
// ring, and whether it is the one given back. It holds the first ring
// only by weak pointer, so that nothing but the idle list keeps it alive.
func reusedAcrossCollections(chunk int) (got *ring, same bool) {
	r := getRing(chunk)
	wp := weak.Make(r)
	putRing(r)
	r = nil
	runtime.GC()
	runtime.GC()
	got = getRing(chunk)
	return got, weak.Make(got) == wp
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

// TestRingFloodBounded is an outsider's flood on the idle list: 32
// goroutines, more than maxIdle, take and give back rings of two chunk
// sizes at once. No ring is handed to two copies at once, each comes
// with every buffer free, the list never names more than maxIdle rings,
// and once keepIdle has passed it holds none of them (F6).
func TestRingFloodBounded(t *testing.T) {
	setKeepIdle(t, 5*time.Millisecond)
	const goroutines, rounds = 32, 50
	chunks := [2]int{9 << 10, 11 << 10}
	var (
		mu    sync.Mutex
		inUse = map[*ring]bool{}
		wg    sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			for k := range rounds {
				r := getRing(chunks[(g+k)%2])
				if len(r.free) != len(r.bufs) {
					t.Errorf("a ring came with %d of its %d buffers free", len(r.free), len(r.bufs))
				}
				mu.Lock()
				if inUse[r] {
					t.Error("one ring was handed to two copies at once")
				}
				inUse[r] = true
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				delete(inUse, r)
				mu.Unlock()
				putRing(r)
				idle.Lock()
				if n := len(idle.rings); n > maxIdle {
					t.Errorf("the idle list names %d rings, more than %d", n, maxIdle)
				}
				idle.Unlock()
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		idle.Lock()
		held := 0
		for _, e := range idle.rings {
			if e.r != nil {
				held++
			}
		}
		pending := idle.timer != nil
		idle.Unlock()
		if held == 0 && !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the flood the idle list still holds %d rings (release pending: %v)", held, pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRingNewestKeptWhenListFull: with the idle list full of rings of
// another chunk size (left by a burst of copies), a ring given back is
// still kept for the next copy, in place of the oldest entry. Found by
// running TestRingFloodBounded before TestRingKeptAcrossCollections: the
// full list refused every newer ring (F6).
func TestRingNewestKeptWhenListFull(t *testing.T) {
	const other, chunk = 13 << 10, 15 << 10
	rings := make([]*ring, maxIdle)
	for i := range rings {
		rings[i] = getRing(other)
	}
	for _, r := range rings {
		putRing(r)
	}
	got, same := reusedAcrossCollections(chunk)
	defer putRing(got)
	if !same {
		t.Fatal("a ring given back to a full idle list was not kept")
	}
	idle.Lock()
	n := len(idle.rings)
	idle.Unlock()
	if n > maxIdle {
		t.Fatalf("the idle list names %d rings, more than %d", n, maxIdle)
	}
	runtime.KeepAlive(rings)
}
