package refs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/memtest"
	"github.com/mcplrefs/refcore/refs"
)

// refusingStore is a MarkStore that is down: it keeps nothing, so the
// registry keeps each mark to try the store again.
type refusingStore struct{}

func (refusingStore) Mark(context.Context, string, string) error { return errors.New("store down") }

func (refusingStore) Marked(context.Context, string) (bool, error) { return false, nil }

// TestMarksKeepNoURIs marks uris that carry a long fragment, which their
// canonical key leaves out, and then evicts every marked record. The
// marks outlive the records, in the registry's memory and, while the mark
// store is down, in the list of marks to store again; both must hold only
// their keys: a key cut from its uri would keep the whole uri alive for as
// long as the mark (N7, N8).
func TestMarksKeepNoURIs(t *testing.T) {
	for _, store := range []refs.MarkStore{nil, refusingStore{}} {
		t.Run(fmt.Sprintf("store=%T", store), func(t *testing.T) { marksKeepNoURIs(t, store) })
	}
}

func marksKeepNoURIs(t *testing.T, store refs.MarkStore) {
	const n = 500
	frag := "#" + strings.Repeat("f", 16<<10)
	reg, err := refs.New(refs.Config{Capacity: 16, Marks: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	held := memtest.Held(func() {
		for i := range n {
			// Each uri is built here and dropped once registered.
			uri := fmt.Sprintf("https://files.example/%d", i) + frag
			reg.Register(t.Context(), convert.Registration{
				Testimony: convert.Testimony{URI: uri, Present: convert.FieldURI, Disposition: "never"},
				Server:    "srv", Never: true,
			})
		}
		for i := range 16 { // evicts every marked record
			reg.Register(t.Context(), convert.Registration{
				Testimony: convert.Testimony{URI: fmt.Sprintf("https://files.example/plain/%d", i), Present: convert.FieldURI},
				Server:    "srv",
			})
		}
	})
	for _, i := range []int{0, n - 1} {
		uri := fmt.Sprintf("https://files.example/%d", i)
		if _, ok := reg.ByURI(uri); ok || !reg.MarkedHere(uri) {
			t.Fatalf("%s: want it evicted and still marked", uri)
		}
	}
	// The keys are about 25 bytes each; the uris were 16 KiB each.
	if held > 1<<20 {
		t.Errorf("%d marks of evicted records keep %d bytes of heap alive; want at most 1 MiB", n, held)
	}
	runtime.KeepAlive(reg)
}

// TestSaveReplacingCopyRemovesTheOld saves a second copy for a record
// that names one already, as two fetchers of one registry may: a copy at
// another path is no longer named by anything and goes through the
// Remover, while one at the same path is the new copy and stays (F19,
// F20).
func TestSaveReplacingCopyRemovesTheOld(t *testing.T) {
	for _, tt := range []struct {
		name, second string
		removed      []string
	}{
		{"other-path", "store/take.csv", []string{"store/take.json"}},
		{"same-path", "store/take.json", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var removed []string
			rm := removerFunc(func(_ context.Context, path string) error { removed = append(removed, path); return nil })
			reg, err := refs.New(refs.Config{Remover: rm})
			if err != nil {
				t.Fatal(err)
			}
			tm := convert.Testimony{URI: "https://files.example/take", Present: convert.FieldURI}
			e := reg.Register(t.Context(), convert.Registration{Testimony: tm, Server: "srv"})
			for _, path := range []string{"store/take.json", tt.second} {
				if err := reg.Save(e.ID, convert.Copy{Path: path, Bytes: 4}, tm); err != nil {
					t.Fatal(err)
				}
			}
			if rec, _ := reg.Lookup(e.ID); rec.Copy == nil || rec.Copy.Path != tt.second {
				t.Errorf("the record names %+v, want the copy at %s", rec.Copy, tt.second)
			}
			if !slices.Equal(removed, tt.removed) {
				t.Errorf("removed %q, want %q", removed, tt.removed)
			}
		})
	}
}

type removerFunc func(context.Context, string) error

func (f removerFunc) Remove(ctx context.Context, path string) error { return f(ctx, path) }
