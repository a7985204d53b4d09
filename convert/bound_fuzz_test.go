package convert_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/label"
)

// boundURI is the uri of the reference in the bound tests' content. The
// default policy shows no uri, so no view may carry it (S2).
const boundURI = "https://s.example/p"

// boundBlocks is the bound tests' content: a text, a reference named b,
// an image whose data is b, and a second text.
func boundBlocks(a, b string) []json.RawMessage {
	ta, _ := json.Marshal(a)
	tb, _ := json.Marshal(b)
	return raws(`{"type":"text","text":`+string(ta)+`}`,
		`{"type":"resource","uri":"`+boundURI+`","name":`+string(tb)+`}`,
		`{"type":"image","data":`+string(tb)+`,"mimeType":"image/png"}`,
		`{"type":"text","text":`+string(tb)+`}`)
}

// FuzzViewBound: whatever text a server sends, and whatever view bound a
// host may set (MinViewMax and up), every view (history, wake, push,
// script) stays within the bound, counted in UTF-16 code units, the push
// view stays valid JSON, no view shows the reference's uri, and each view
// shows its first blocks and counts exactly the ones it left out (L5, S2,
// S4, S6).
func FuzzViewBound(f *testing.F) {
	f.Add("plain text", "second", 0)
	f.Add(strings.Repeat("\u0001<>&\"\\\u2028😀\xff", 10), "x", 100)
	f.Add(strings.Repeat("a", 300), strings.Repeat("b", 300), 200)
	f.Add(strings.Repeat("😀", 400), strings.Repeat("\"", 400), 1)
	f.Fuzz(func(t *testing.T, a, b string, extra int) {
		if extra < 0 || extra > 20000 {
			return
		}
		max := convert.MinViewMax + extra
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: max})
		ct := c.Ingest(t.Context(), boundBlocks(a, b), convert.Source{Server: "s", Lane: convert.LanePush})
		// The server's own text, or a name once cleaned, may spell the
		// uri's host; only judge the uri's absence when neither does.
		uriInText := false
		for _, s := range []string{a, b, label.Clean(a), label.Clean(b)} {
			uriInText = uriInText || strings.Contains(s, "s.example")
		}
		var forbidden []string
		if !uriInText {
			forbidden = append(forbidden, "s.example")
		}
		checkViews(t, ct, max, forbidden...)
	})
}

// TestViewBoundRandom drives large random texts of awkward characters
// (controls, HTML-escaped runes, quotes, astral runes, invalid bytes)
// through every view with random bounds from MinViewMax up: each view
// stays within its bound in UTF-16 code units and valid UTF-8, the push
// view stays valid JSON, no view shows the reference's uri (the alphabet
// cannot spell it), and each view counts exactly the blocks it left out
// (L5, S2, S4, S6).
func TestViewBoundRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\u0001", "<", "\"", "\\", "\u2028", "😀", "\xff", "é", "\n"}
	for i := 0; i < 200; i++ {
		var a, b strings.Builder
		for j := rng.IntN(20000); j > 0; j-- {
			a.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		for j := rng.IntN(20000); j > 0; j-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		max := convert.MinViewMax + rng.IntN(20000)
		if i%4 == 0 {
			max = convert.MinViewMax + rng.IntN(64) // crowd the minimum
		}
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: max})
		ct := c.Ingest(t.Context(), boundBlocks(a.String(), b.String()), convert.Source{Server: "s", Lane: convert.LanePush})
		checkViews(t, ct, max, "s.example")
	}
}
