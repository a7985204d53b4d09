package refs_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// eviction is one call of the eviction callback.
type eviction struct {
	ID     string
	URI    string
	Reason refs.EvictReason
}

// evictLog records eviction callbacks.
type evictLog struct {
	mu    sync.Mutex
	calls []eviction
	recs  []refs.Record
}

func (l *evictLog) onEvict(r refs.Record, why refs.EvictReason) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, eviction{ID: r.ID, URI: r.URI, Reason: why})
	l.recs = append(l.recs, r)
}

func (l *evictLog) got() []eviction {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]eviction(nil), l.calls...)
}

func TestEvictionCallback(t *testing.T) {
	ctx := t.Context()
	a, b, c := uriN(1), uriN(2), uriN(3)
	tests := []struct {
		name, reason string
		// act runs on a registry of capacity 2 that holds a then b, and
		// returns the evictions it expects, given their ids.
		act func(g *refs.Registry, ids map[string]string) []eviction
	}{
		{
			name:   "capacity",
			reason: "a capacity eviction reports EvictCapacity with the evicted record (R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				g.Register(ctx, from("srv", plain(c)))
				return []eviction{{ids[a], a, refs.EvictCapacity}}
			},
		},
		{
			name:   "capacity-by-mark-never",
			reason: "a record MarkNever creates can evict too, reported as capacity (R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				g.MarkNever(ctx, c, "srv")
				return []eviction{{ids[a], a, refs.EvictCapacity}}
			},
		},
		{
			name:   "removed",
			reason: "Remove reports EvictRemoved (R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				if !g.Remove(ids[b]) {
					panic("Remove of a held id reported false")
				}
				return []eviction{{ids[b], b, refs.EvictRemoved}}
			},
		},
		{
			name:   "remove-absent",
			reason: "removing an id not held reports nothing and returns false (R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				g.Remove(ids[b])
				if g.Remove(ids[b]) || g.Remove("ref_unknown_fixture") {
					panic("Remove of an absent id reported true")
				}
				return []eviction{{ids[b], b, refs.EvictRemoved}}
			},
		},
		{
			name:   "re-register-is-not-eviction",
			reason: "registering a held uri again overwrites; overwrite is never an eviction (anti-pattern 2)",
			act: func(g *refs.Registry, _ map[string]string) []eviction {
				g.Register(ctx, from("srv", named(a, "renamed")))
				g.Register(ctx, from("other", named(a, "again")))
				g.Register(ctx, from("", named(b, "relay")))
				g.Register(ctx, from("srv", plain("HTTPS://files.example/r/2")))
				return nil
			},
		},
		{
			name:   "mark-is-not-eviction",
			reason: "marking a held record changes it in place (anti-pattern 2)",
			act: func(g *refs.Registry, _ map[string]string) []eviction {
				g.Register(ctx, never("srv", plain(a)))
				g.MarkNever(ctx, b, "srv")
				return nil
			},
		},
		{
			name:   "reads-are-not-eviction",
			reason: "lookups and saves evict nothing (R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				g.Lookup(ids[a])
				g.Entry(ids[b])
				g.ByURI(a)
				g.EntryForURI(b)
				_ = g.Save(ids[a], convert.Copy{Path: "p"}, plain(a))
				g.Lookup("ref_unknown_fixture")
				return nil
			},
		},
		{
			name:   "several-in-order",
			reason: "each capacity eviction is reported once, least recent first (R3, R8)",
			act: func(g *refs.Registry, ids map[string]string) []eviction {
				g.Entry(ids[a])
				g.Register(ctx, from("srv", plain(c)))
				g.Register(ctx, from("srv", plain(uriN(4))))
				return []eviction{{ids[b], b, refs.EvictCapacity}, {ids[a], a, refs.EvictCapacity}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log evictLog
			g := newReg(t, refs.Config{Capacity: 2, OnEvict: log.onEvict})
			ids := map[string]string{}
			for _, u := range []string{a, b} {
				ids[u] = g.Register(ctx, from("srv", plain(u))).ID
			}
			want := tt.act(g, ids)
			if diff := cmp.Diff(want, log.got()); diff != "" {
				t.Errorf("R8: eviction callbacks (-want +got) (%s):\n%s", tt.reason, diff)
			}
		})
	}
}

func TestEvictionSnapshot(t *testing.T) {
	ctx := t.Context()
	var log evictLog
	g := newReg(t, refs.Config{Capacity: 1, OnEvict: log.onEvict})
	e := g.Register(ctx, from("s1", named(secretURI, "take")))
	g.Register(ctx, from("s2", named(secretURI, "take 2")))
	saved := convert.Copy{Path: "store/take.wav", Bytes: 7, MimeType: "audio/wav"}
	if err := g.Save(e.ID, saved, named(secretURI, "take 2")); err != nil {
		t.Fatalf("setup: Save = %v", err)
	}
	// Written out rather than read back through Lookup, which builds its
	// snapshot the same way the callback's is built.
	want := refs.Record{
		ID:        e.ID,
		URI:       secretURI,
		Testimony: named(secretURI, "take 2"),
		Servers:   []string{"s1", "s2"},
		Copy:      &saved,
	}
	g.Register(ctx, from("s1", plain(uriN(1))))

	if len(log.recs) != 1 {
		t.Fatalf("R8: %d evictions, want 1", len(log.recs))
	}
	if diff := cmp.Diff(want, log.recs[0]); diff != "" {
		t.Errorf("R8/F20: the callback's snapshot differs from the record it evicted (-want +got):\n%s", diff)
	}
}

// withinDeadline fails the test if f does not return within 5 s, as a
// callback (eviction callback, mark store, remover) run under the
// registry's lock would deadlock when it calls back in (anti-pattern 1).
func withinDeadline(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("R7/R8: %s did not return within 5s: a callback into the registry deadlocked (anti-pattern 1)", what)
	}
}

func TestEvictionCallbackReentrant(t *testing.T) {
	ctx := t.Context()
	var g *refs.Registry
	var mu sync.Mutex
	var seen []string
	reentered := false
	onEvict := func(r refs.Record, why refs.EvictReason) {
		// Every method a host might reach for from a callback.
		_ = g.Len()
		_ = g.Cap()
		if _, ok := g.Lookup(r.ID); ok {
			panic("the evicted record is still held inside its callback")
		}
		if _, err := g.Resolve(r.ID); err == nil {
			panic("the evicted id resolves inside its callback")
		}
		g.ByURI(r.URI)
		g.EntryForURI(r.URI)
		g.Marked(ctx, r.URI)
		g.MarkedHere(r.URI)
		_ = g.Save(r.ID, convert.Copy{Path: "p"}, plain(r.URI))
		_ = g.SaveMarked(r.ID, convert.Copy{Path: "p"}, plain(r.URI))
		g.Register(ctx, from("srv", plain(uriN(0)))) // held: a hit, no eviction

		mu.Lock()
		seen = append(seen, why.String()+" "+r.URI)
		first := !reentered
		reentered = true
		mu.Unlock()
		if first {
			// Bring the evicted uri back: this evicts again from inside
			// the callback, so the callback runs nested.
			g.Register(ctx, from("srv", plain(r.URI)))
			g.MarkNever(ctx, uriN(99), "srv")
			if e, ok := g.Entry(g.Register(ctx, from("srv", plain(r.URI))).ID); !ok || e.Testimony.URI != r.URI {
				panic("the re-registered uri is not held")
			}
		}
	}
	g = newReg(t, refs.Config{Capacity: 3, OnEvict: onEvict})
	withinDeadline(t, "Register causing a capacity eviction", func() {
		g.Register(ctx, from("srv", plain(uriN(0))))
		g.Register(ctx, from("srv", plain(uriN(1))))
		g.Register(ctx, from("srv", plain(uriN(2))))
		g.Register(ctx, from("srv", plain(uriN(0)))) // uri 1 is now least recent
		g.Register(ctx, from("srv", plain(uriN(3)))) // evicts uri 1
	})
	withinDeadline(t, "MarkNever causing a capacity eviction", func() {
		g.MarkNever(ctx, uriN(4), "srv")
	})
	withinDeadline(t, "Remove", func() {
		rec, ok := g.ByURI(uriN(0))
		if !ok {
			panic("uri 0 should be held")
		}
		g.Remove(rec.ID)
	})
	if n := g.Len(); n > g.Cap() {
		t.Errorf("R3: Len %d over Cap %d after re-entrant evictions", n, g.Cap())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Errorf("R8: the callback ran %d times, want at least 3: %v", len(seen), seen)
	}
	if seen[0] != "capacity "+uriN(1) {
		t.Errorf("R3/R8: first eviction %q, want the least recent uri 1", seen[0])
	}
}

func TestEvictionCallbackMayRemove(t *testing.T) {
	ctx := t.Context()
	// A host that drops a companion record when one leaves.
	var g *refs.Registry
	var companion string
	g = newReg(t, refs.Config{Capacity: 2, OnEvict: func(r refs.Record, why refs.EvictReason) {
		if why == refs.EvictCapacity && companion != "" {
			id := companion
			companion = ""
			g.Remove(id)
		}
	}})
	withinDeadline(t, "Remove inside the eviction callback", func() {
		g.Register(ctx, from("srv", plain(uriN(1))))
		companion = g.Register(ctx, from("srv", plain(uriN(2)))).ID
		g.Register(ctx, from("srv", plain(uriN(3))))
	})
	if n := g.Len(); n != 1 {
		t.Errorf("R8: Len = %d after the callback removed its companion, want 1", n)
	}
	if _, ok := g.EntryForURI(uriN(3)); !ok {
		t.Errorf("R3: the record just registered is gone")
	}
}

var _ convert.Registrar = (*refs.Registry)(nil)
