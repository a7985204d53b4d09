package convert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/memtest"
	"github.com/mcplrefs/refcore/refs"
)

// TestMarksKeepNoTexts ingests texts of 2 MiB that each name one short uri,
// and keeps only what outlives the contents: the registry with its marks,
// or the contents' claims. None may hold the texts, which a uri read out
// of a text's JSON or words is at first a part of (N1, N4, N7).
func TestMarksKeepNoTexts(t *testing.T) {
	const (
		n   = 16
		pad = 2 << 20
	)
	neverText := func(i int) string {
		return fmt.Sprintf(`{"uri":"https://evil.example/%d","disposition":"never"}`, i) + strings.Repeat(" ", pad)
	}
	uri := func(i int) string { return fmt.Sprintf("https://evil.example/%d", i) }
	ingest := func(c *convert.Converter, server string, text func(int) string, keep func(*convert.Content)) {
		for i := range n {
			// Each text is built here and dropped once ingested.
			b, err := json.Marshal(map[string]string{"type": "text", "text": text(i)})
			if err != nil {
				t.Fatal(err)
			}
			ct := c.Ingest(context.Background(), []json.RawMessage{b}, convert.Source{Server: server})
			if keep != nil {
				keep(ct)
			}
		}
	}
	// Each case sets up a converter and says which server the texts come
	// from, what they say, what the host keeps of each content, what
	// happens after them (inside the measure) and how to check that what
	// was kept still knows the uris.
	type setup struct {
		c      *convert.Converter
		server string
		text   func(int) string
		keep   func(*convert.Content)
		after  func()
		check  func() bool
	}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T) setup
	}{
		{"server-marks-after-eviction", func(t *testing.T) setup {
			reg := mustRegistry(t, refs.Config{Capacity: 8})
			c := mustConverter(t, reg, convert.Policy{})
			return setup{c: c, server: "s", text: neverText,
				after: func() {
					for i := range 8 { // evicts every marked record
						c.Ingest(context.Background(), raws(fmt.Sprintf(`{"type":"resource","uri":"https://ok.example/%d"}`, i)), convert.Source{Server: "s"})
					}
				},
				check: func() bool {
					_, held := reg.ByURI(uri(0))
					return !held && reg.MarkedHere(uri(0)) && reg.MarkedHere(uri(n-1))
				}}
		}},
		{"server-marks-records", func(t *testing.T) setup {
			reg := mustRegistry(t, refs.Config{})
			return setup{c: mustConverter(t, reg, convert.Policy{}), server: "s", text: neverText,
				check: func() bool { rec, ok := reg.ByURI(uri(n - 1)); return ok && rec.Never && rec.URI == uri(n-1) }}
		}},
		{"marks-learned-from-store", func(t *testing.T) setup {
			// A registry before a restart marked the uris in the store.
			store := refs.NewMemoryMarks(0)
			before := mustConverter(t, mustRegistry(t, refs.Config{Marks: store}), convert.Policy{})
			for i := range n {
				before.Ingest(context.Background(), raws(`{"type":"resource","uri":"`+uri(i)+`","disposition":"never"}`), convert.Source{Server: "s"})
			}
			reg := mustRegistry(t, refs.Config{Marks: store})
			return setup{c: mustConverter(t, reg, convert.Policy{}), server: "s",
				text:  func(i int) string { return "see " + uri(i) + strings.Repeat(" ", pad) },
				check: func() bool { return reg.MarkedHere(uri(0)) && reg.MarkedHere(uri(n-1)) }}
		}},
		{"serverless-claims", func(t *testing.T) setup {
			var claims []convert.Claims
			return setup{c: mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{}), text: neverText,
				keep:  func(ct *convert.Content) { claims = append(claims, ct.Claims()) },
				check: func() bool { return len(claims) == n && claims[0].Never(uri(0)) && claims[n-1].Never(uri(n-1)) }}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.setup(t)
			held := memtest.Held(func() {
				ingest(s.c, s.server, s.text, s.keep)
				if s.after != nil {
					s.after()
				}
			})
			if !s.check() {
				t.Fatal("the registry or the claims lost what the texts said")
			}
			// What is kept is a few hundred bytes per uri; the texts were
			// 32 MiB together.
			if held > 1<<20 {
				t.Errorf("after %d texts of %d MiB, %d bytes of heap stay alive; want at most 1 MiB", n, pad>>20, held)
			}
		})
	}
}
