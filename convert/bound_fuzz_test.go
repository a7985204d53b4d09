package convert_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/label"
)

// boundURI is the uri of the reference in the bound tests' content. The
// default policy shows no uri, so no view may carry it (S2).
const boundURI = "https://s.example/p"

// FuzzViewBound: whatever text a server sends, and whatever view bound a
// host sets (within reason), every view stays within the bound, counted in
// UTF-16 code units, the push view stays valid JSON, and no view shows the
// reference's uri.
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
			`{"type":"resource","uri":"`+boundURI+`","name":`+string(tb)+`}`,
			`{"type":"image","data":`+string(tb)+`,"mimeType":"image/png"}`,
			`{"type":"text","text":`+string(tb)+`}`)
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: max})
		ct := c.Ingest(t.Context(), blocks, convert.Source{Server: "s", Lane: convert.LanePush})
		push := convert.PushJSON(ct.Push())
		// The server's own text, or a name once cleaned, may spell the
		// uri's host; only judge the uri's absence when neither does.
		uriInText := false
		for _, s := range []string{a, b, label.Clean(a), label.Clean(b)} {
			uriInText = uriInText || strings.Contains(s, "s.example")
		}
		for name, v := range map[string]string{"push": push, "wake": ct.Wake(), "history": ct.History()} {
			if n := utf16Len(v); n > max {
				t.Fatalf("%s view is %d code units, over the bound %d", name, n, max)
			}
			if !utf8.ValidString(v) {
				t.Fatalf("%s view is not valid UTF-8", name)
			}
			if !uriInText && strings.Contains(v, "s.example") {
				t.Fatalf("S2: %s view shows the reference's uri: %s", name, v)
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
// in UTF-16 code units and valid UTF-8, the push view stays valid JSON, and
// no view shows the reference's uri (the alphabet cannot spell it).
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
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: max})
		ct := c.Ingest(t.Context(), raws(`{"type":"text","text":`+string(ta)+`}`, `{"type":"resource","uri":"`+boundURI+`","name":`+string(tb)+`}`, `{"type":"image","data":`+string(tb)+`,"mimeType":"image/png"}`, `{"type":"text","text":`+string(tb)+`}`), convert.Source{Server: "s", Lane: convert.LanePush})
		push := convert.PushJSON(ct.Push())
		for _, v := range []struct{ name, text string }{{"push view", push}, {"wake", ct.Wake()}, {"history", ct.History()}} {
			if n := utf16Len(v.text); n > max {
				t.Fatalf("round %d: %s is %d code units, over the bound %d", i, v.name, n, max)
			}
			if !utf8.ValidString(v.text) {
				t.Fatalf("round %d: %s is not valid UTF-8", i, v.name)
			}
			if strings.Contains(v.text, "s.example") {
				t.Fatalf("round %d: S2: %s shows the reference's uri", i, v.name)
			}
		}
		if !json.Valid([]byte(push)) {
			t.Fatalf("round %d: push view is not JSON", i)
		}
	}
}
