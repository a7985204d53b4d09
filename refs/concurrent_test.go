package refs_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// TestConcurrentUse drives one small registry from many goroutines at
// once (R7). Run it under -race. Evictions happen throughout, and the
// eviction callback calls back into the registry. The flood runs 64
// goroutines, far more than processors, on a registry of one record, so
// nearly every call finds the lock held and many wait past its tries.
func TestConcurrentUse(t *testing.T) {
	t.Run("8-workers", func(t *testing.T) { concurrentUse(t, 8, 16) })
	t.Run("flood-64-workers-bound-1", func(t *testing.T) { concurrentUse(t, 64, 1) })
}

func concurrentUse(t *testing.T, workers, capacity int) {
	ctx := t.Context()
	rounds := 24000 / workers
	const uris = 64
	// Each uri has two spellings with one canonical form.
	spell := func(n, variant int) string {
		if variant == 0 {
			return fmt.Sprintf("https://files.example/c/%d?token=secret", n)
		}
		return fmt.Sprintf("HTTPS://FILES.example:443/c/%d?token=secret", n)
	}
	var evictions atomic.Int64
	var g *refs.Registry
	g = newReg(t, refs.Config{
		Capacity: capacity,
		// A store as well as the registry's own memory, so the calls made
		// without the lock race with everything else.
		Marks:   refs.NewMemoryMarks(0),
		Remover: &fakeRemover{},
		OnEvict: func(r refs.Record, _ refs.EvictReason) {
			evictions.Add(1)
			if n := g.Len(); n > g.Cap() {
				panic(fmt.Sprintf("Len %d over Cap %d inside the callback", n, g.Cap()))
			}
		},
	})

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		issued  = map[string]string{} // id -> canonical uri it was issued for
		failure = make(chan string, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := map[string]string{}
			var ids []string
			fail := func(format string, args ...any) {
				select {
				case failure <- fmt.Sprintf(format, args...):
				default:
				}
			}
			for i := range rounds {
				n := (i*7 + w*13) % uris
				u := spell(n, (i+w)%2)
				server := fmt.Sprintf("srv%d", w%3)
				if w%4 == 3 {
					server = "" // some workers relay serverless content
				}
				var e convert.Entry
				switch i % 6 {
				case 0, 1:
					e = g.Register(ctx, convert.Registration{Testimony: plain(u), Server: server, Never: i%97 == 0})
				case 2:
					var ok bool
					if e, ok = g.MarkNever(ctx, u, "srv-mark"); !ok {
						fail("N1: MarkNever with a server reported false")
					}
				case 3:
					if len(ids) > 0 {
						g.Entry(ids[i%len(ids)])
					}
					g.EntryForURI(u)
					continue
				case 4:
					if len(ids) > 0 {
						err := g.Save(ids[i%len(ids)], convert.Copy{Path: "store/" + ids[i%len(ids)], Bytes: 1}, plain(u))
						if err != nil && !errors.Is(err, refs.ErrGone) && !errors.Is(err, refs.ErrMarked) {
							fail("F19: Save = %v", err)
						}
					}
					g.Marked(ctx, u)
					g.MarkedHere(u)
					continue
				case 5:
					if len(ids) > 0 {
						id := ids[i%len(ids)]
						if rec, ok := g.Lookup(id); ok {
							if got := uriform.Canonical(rec.URI); got != mine[id] {
								fail("R4/R7: id %s resolves to %q, want a record for %q", id, got, mine[id])
							}
						} else if _, err := g.Resolve(id); !errors.Is(err, refs.ErrUnknownReference) {
							fail("R4: Resolve of an evicted id = %v", err)
						}
					}
					if n := g.Len(); n > capacity {
						fail("R3: Len %d over capacity %d", n, capacity)
					}
					continue
				}
				key := uriform.Canonical(u)
				if prev, ok := mine[e.ID]; ok && prev != key {
					fail("R1: id %s issued for %q and %q", e.ID, prev, key)
				}
				if _, ok := mine[e.ID]; !ok {
					ids = append(ids, e.ID)
				}
				mine[e.ID] = key
			}
			mu.Lock()
			defer mu.Unlock()
			for id, key := range mine {
				if prev, ok := issued[id]; ok && prev != key {
					fail("R1: id %s issued for %q and %q", id, prev, key)
				}
				issued[id] = key
			}
		}()
	}
	wg.Wait()
	close(failure)
	for f := range failure {
		t.Error(f)
	}

	if n := g.Len(); n > g.Cap() || g.Cap() != capacity {
		t.Errorf("R3: Len %d, Cap %d; want Len <= Cap = %d", n, g.Cap(), capacity)
	}
	if evictions.Load() == 0 {
		t.Errorf("setup: no evictions happened; the capacity is too large to test R3 under load")
	}
	live := 0
	for id, key := range issued {
		rec, ok := g.Lookup(id)
		if !ok {
			continue
		}
		live++
		if got := uriform.Canonical(rec.URI); got != key {
			t.Errorf("R4/R7: id %s resolves to %q, want a record for %q", id, got, key)
		}
		if rec.Never && rec.Copy != nil {
			t.Errorf("N3: marked record %s still names a copy", id)
		}
	}
	if live != g.Len() {
		t.Errorf("R2/R7: %d issued ids resolve, but Len is %d", live, g.Len())
	}
	for n := range uris {
		a, okA := g.ByURI(spell(n, 0))
		b, okB := g.ByURI(spell(n, 1))
		if okA != okB || a.ID != b.ID {
			t.Errorf("N8/R2: the two spellings of uri %d map to %q (%t) and %q (%t)", n, a.ID, okA, b.ID, okB)
		}
	}
}
