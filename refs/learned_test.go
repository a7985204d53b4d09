package refs

import (
	"context"
	"sync"
	"testing"

	"github.com/mcplrefs/refcore/convert"
)

// pathRemover records the paths it is asked to remove.
type pathRemover struct {
	mu    sync.Mutex
	paths []string
}

func (r *pathRemover) Remove(_ context.Context, path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, path)
	return nil
}

// learnedURI is the uri of the learned-mark tests.
const learnedURI = "https://files.example/take.wav?sig=secret"

// registered returns a registry with a mark store and a pathRemover, and
// the entry it made for learnedURI from server "a". With saved set, the
// record first takes a copy at path(id). With learn set, the store then
// marks the uri, and the registry's memory holds the mark without the
// record carrying it: the state between the two steps of learning a mark,
// as another goroutine's Marked or Register leaves it for a moment.
func registered(t *testing.T, path func(id string) string, learn bool) (*Registry, *pathRemover, convert.Entry) {
	t.Helper()
	ctx := context.Background()
	store := NewMemoryMarks(0)
	rm := &pathRemover{}
	g, err := New(Config{Marks: store, Remover: rm})
	if err != nil {
		t.Fatal(err)
	}
	e := g.Register(ctx, convert.Registration{Testimony: convert.Testimony{URI: learnedURI}, Server: "a"})
	if path != nil {
		if err := g.Save(e.ID, convert.Copy{Path: path(e.ID), Bytes: 1}, convert.Testimony{URI: learnedURI}); err != nil {
			t.Fatal(err)
		}
	}
	if learn {
		key := g.byID[e.ID].key
		if err := store.Mark(ctx, storeKey(key), "b"); err != nil {
			t.Fatal(err)
		}
		g.local.mark(key, learned)
		if !g.MarkedHere(learnedURI) {
			t.Fatal("the learned mark is not seen")
		}
	}
	return g, rm, e
}

// TestSaveMarkedAppliesLearnedMark pins N3 and F18 across the moment a
// mark read from the mark store is learned: the registry remembers the
// mark before it withdraws the record's copy. A copy saved with SaveMarked
// in between (a fetcher that saw the mark and saved into its host-only
// store) must not be withdrawn by that later step, which would hand its
// path to the Remover of the shared store: SaveMarked applies the learned
// mark first, so the record is marked when the copy lands on it.
func TestSaveMarkedAppliesLearnedMark(t *testing.T) {
	ctx := context.Background()
	const uri = learnedURI
	g, rm, e := registered(t, nil, true)

	host := convert.Copy{Path: "/host-only/" + e.ID + ".wav", Bytes: 1}
	if err := g.SaveMarked(e.ID, host, convert.Testimony{URI: uri}); err != nil {
		t.Fatalf("SaveMarked: %v", err)
	}
	// The goroutine that learned the mark, a registration here, now takes
	// the lock and applies it.
	if got := g.Register(ctx, convert.Registration{Testimony: convert.Testimony{URI: uri}, Server: "a"}); !got.Never {
		t.Fatal("the stored mark does not apply")
	}
	rec, _ := g.Lookup(e.ID)
	if !rec.Never || rec.Copy == nil || *rec.Copy != host {
		t.Errorf("record: never %t, copy %+v; want marked, naming the host's copy", rec.Never, rec.Copy)
	}
	if len(rm.paths) != 0 {
		t.Errorf("the Remover was asked to remove %q; want nothing", rm.paths)
	}
}

// TestWithdrawSparesTheNamedPath pins N3 where a store names each copy of
// a record by the record alone, so a copy saved again takes the earlier
// one's path: withdrawing the earlier copy, as applying a mark does, must
// not remove the file the record now names. SaveMarked applying a
// just-learned mark meets it directly, and a mark's withdrawal that
// reaches the Remover after a new copy was saved at the path meets it too.
func TestWithdrawSparesTheNamedPath(t *testing.T) {
	ctx := context.Background()
	const uri = learnedURI
	t.Run("SaveMarked", func(t *testing.T) {
		shared := func(id string) string { return "/shared/" + id + ".wav" }
		g, rm, e := registered(t, shared, true)
		path := shared(e.ID)
		if err := g.SaveMarked(e.ID, convert.Copy{Path: path, Bytes: 2}, convert.Testimony{URI: uri}); err != nil {
			t.Fatal(err)
		}
		if rec, _ := g.Lookup(e.ID); rec.Copy == nil || rec.Copy.Path != path || len(rm.paths) != 0 {
			t.Errorf("record names %+v; the Remover was asked to remove %q; want the new copy named and kept", rec.Copy, rm.paths)
		}
	})
	t.Run("late removal", func(t *testing.T) {
		g, rm, e := registered(t, nil, false)
		path := "/shared/" + e.ID + ".wav"
		// The copy a mark withdrew, whose removal comes after the record
		// took a new copy at the same path.
		if err := g.SaveMarked(e.ID, convert.Copy{Path: path, Bytes: 2}, convert.Testimony{URI: uri}); err != nil {
			t.Fatal(err)
		}
		g.afterWithdraw(ctx, e.ID, &convert.Copy{Path: path, Bytes: 1})
		if len(rm.paths) != 0 {
			t.Errorf("the Remover was asked to remove %q, which the record names", rm.paths)
		}
	})
}
