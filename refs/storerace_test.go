package refs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// callbackRemover counts removals per path and calls back into its
// registry from each.
type callbackRemover struct {
	g     *refs.Registry
	mu    sync.Mutex
	count map[string]int
}

func (r *callbackRemover) Remove(ctx context.Context, path string) error {
	r.mu.Lock()
	r.count[path]++
	r.mu.Unlock()
	r.g.Marked(ctx, "https://files.example/r/1")
	r.g.Register(ctx, from("a", plain("https://files.example/r/2")))
	return nil
}

// callbackStore is a MemoryMarks that calls back into its registry from
// every read.
type callbackStore struct {
	*refs.MemoryMarks
	g *refs.Registry
}

func (s *callbackStore) Marked(ctx context.Context, key string) (bool, error) {
	if s.g != nil {
		s.g.Len()
		s.g.MarkedHere("https://files.example/r/3")
	}
	return s.MemoryMarks.Marked(ctx, key)
}

// TestStoreCallbacksRaceRegistry pins R7 and N3 where a registry asks its
// mark store on every registration and withdraws held copies when the
// store reports a mark: with a store and a Remover that call back into the
// registry, and Register (held, new, other spellings), Marked, Save,
// Remove and another host's marks racing on a small registry, nothing
// deadlocks or races (-race), and no copy is removed twice.
func TestStoreCallbacksRaceRegistry(t *testing.T) {
	ctx := t.Context()
	store := &callbackStore{MemoryMarks: refs.NewMemoryMarks(0)}
	rm := &callbackRemover{count: map[string]int{}}
	g := newReg(t, refs.Config{Marks: store, Remover: rm, Capacity: 8})
	store.g, rm.g = g, g
	other := newReg(t, refs.Config{Marks: store.MemoryMarks})
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				u := uriN(i % 12)
				switch (i + w) % 6 {
				case 0, 1:
					e := g.Register(ctx, from("a", plain(u)))
					g.Save(e.ID, convert.Copy{Path: fmt.Sprintf("p/%s", e.ID), Bytes: 1}, plain(u))
				case 2:
					g.Register(ctx, from("", plain("HTTPS://FILES.EXAMPLE/r/"+fmt.Sprint(i%12))))
				case 3:
					g.Marked(ctx, u)
				case 4:
					if i%97 == 0 {
						other.Register(ctx, convert.Registration{Testimony: plain(u), Server: "b", Never: true})
					}
				case 5:
					if e, ok := g.ByURI(u); ok && i%13 == 0 {
						g.Remove(e.ID)
					}
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("deadlock")
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for p, n := range rm.count {
		if n > 1 {
			t.Errorf("Remover called %d times for %s", n, p)
		}
	}
	t.Logf("%d copies removed", len(rm.count))
}
