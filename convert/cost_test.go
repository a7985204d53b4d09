package convert

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCostsMatchEncoder pins that the views count JSON exactly as it is
// written (L5): a push block's cost is its length in PushJSON, a script
// item's is its length in json.Marshal, each in UTF-16 code units, for
// every rune class the encoder treats apart.
func TestCostsMatchEncoder(t *testing.T) {
	alphabet := []string{"a", "<", ">", "&", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\u0001", "\u001f", "\u007f", "\u0085",
		"\u2028", "\u2029", "😀", "é", "\ufffd", "\xff", "\xe2\x82", "…"}
	rng := rand.New(rand.NewPCG(5, 8))
	randText := func() string {
		var b strings.Builder
		for j := rng.IntN(40); j > 0; j-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for i := 0; i < 2000; i++ {
		mb := ModelBlock{Type: randText(), Text: randText(), Data: randText(), MimeType: randText()}
		if got, want := blockCost(mb, maxInt), utf16Len(PushJSON([]ModelBlock{mb}))-len("[]"); got != want {
			t.Fatalf("L5: blockCost(%+q) = %d, PushJSON writes %d", mb, got, want)
		}
		item := ScriptItem{Kind: []string{"text", "notice", "inline", "embedded"}[rng.IntN(4)], Text: randText(), MimeType: randText()}
		raw, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := scriptCost(item, maxInt), utf16Len(string(raw)); got != want {
			t.Fatalf("L5: scriptCost(%+q) = %d, json.Marshal writes %d", item, got, want)
		}
		s := randText()
		room := rng.IntN(60)
		if fit, ok := fitJSON(s, 0, room, false); ok {
			raw, _ := json.Marshal(fit)
			if n := utf16Len(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(string(raw), `\u003c`, "<"), `\u003e`, ">"), `\u0026`, "&")); n > room {
				t.Fatalf("L5: fitJSON(%+q, %d) = %+q, which costs %d", s, room, fit, n)
			}
		}
		if fit, ok := fitUTF16(s, 0, room); ok && utf16Len(fit) > room {
			t.Fatalf("L5: fitUTF16(%+q, %d) = %+q, over the room", s, room, fit)
		}
	}
}
