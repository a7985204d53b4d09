package convert_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

// FuzzViewBound: whatever text a server sends, and whatever view bound a
// host sets (within reason), every view stays within the bound, counted in
// UTF-16 code units, and the push view stays valid JSON.
func FuzzViewBound(f *testing.F) {
	f.Add("plain text", "second", 200)
	f.Add(strings.Repeat("\u0001<>&\"\\\u2028😀\xff", 10), "x", 300)
	f.Add(strings.Repeat("a", 300), strings.Repeat("b", 300), 400)
	f.Fuzz(func(t *testing.T, a, b string, max int) {
		if max < 200 || max > 20000 {
			return
		}
		ta, _ := json.Marshal(a)
		tb, _ := json.Marshal(b)
		blocks := raws(`{"type":"text","text":`+string(ta)+`}`,
			`{"type":"resource","uri":"https://s.example/p","name":`+string(tb)+`}`,
			`{"type":"image","data":`+string(tb)+`,"mimeType":"image/png"}`,
			`{"type":"text","text":`+string(tb)+`}`)
		c := convert.New(newRegistry(), convert.Policy{ViewMax: max})
		ct := c.Ingest(blocks, convert.Source{Server: "s", Lane: convert.LanePush})
		push := convert.PushJSON(ct.Push())
		for name, v := range map[string]string{"push": push, "wake": ct.Wake(), "history": ct.History()} {
			if n := utf16Len(v); n > max {
				t.Fatalf("%s view is %d code units, over the bound %d", name, n, max)
			}
			if !utf8.ValidString(v) {
				t.Fatalf("%s view is not valid UTF-8", name)
			}
		}
		if !json.Valid([]byte(push)) {
			t.Fatalf("push view is not JSON: %s", push)
		}
	})
}

// TestViewBoundRandom drives large random texts of awkward characters
// (controls, HTML-escaped runes, quotes, astral runes, invalid bytes)
// through every view with random bounds: each view stays within its bound
// in UTF-16 code units and the push view stays valid JSON.
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
		max := 200 + rng.IntN(20000)
		ta, _ := json.Marshal(a.String())
		tb, _ := json.Marshal(b.String())
		c := convert.New(newRegistry(), convert.Policy{ViewMax: max})
		ct := c.Ingest(raws(`{"type":"text","text":`+string(ta)+`}`, `{"type":"resource","uri":"https://s.example/p","name":`+string(tb)+`}`, `{"type":"image","data":`+string(tb)+`,"mimeType":"image/png"}`, `{"type":"text","text":`+string(tb)+`}`), convert.Source{Server: "s", Lane: convert.LanePush})
		push := convert.PushJSON(ct.Push())
		_, _ = ct.Wake(), ct.History()
		if n := utf16Len(push); n > max {
			t.Fatalf("round %d: push view is %d code units, over the bound %d", i, n, max)
		}
		if n := utf16Len(ct.Wake()); n > max {
			t.Fatalf("round %d: wake is %d code units, over the bound %d", i, n, max)
		}
		if !json.Valid([]byte(push)) {
			t.Fatalf("round %d: push view is not JSON", i)
		}
	}
}
