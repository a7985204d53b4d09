package convert_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

// forgetfulRegistrar holds no record once registered, as a registry does
// after evicting one, so every reference gets the unknown-record notice.
type forgetfulRegistrar struct{ convert.Registrar }

func (forgetfulRegistrar) Entry(string) (convert.Entry, bool) { return convert.Entry{}, false }

// hostWorded returns, for every lane and for content with and without a
// server (one whose name cleans to nothing), the history pieces of every
// stub and notice shape with no server-supplied label in it: never stubs
// in the server's words and in a marking server's, an expired reference,
// the serverless never notice, withheld embedded resources, inline
// contradictions, every reason to reject a block, an unknown type and an
// unknown record.
func hostWorded(t *testing.T) []string {
	t.Helper()
	blocks := []string{
		`{"type":"resource","uri":"https://m.example/never","disposition":"never"}`,
		`{"type":"resource","uri":"https://m.example/marked"}`,
		`{"type":"resource","uri":"https://m.example/expired","expiresAt":"soon"}`,
		`{"type":"resource","uri":"https://m.example/rejected","expiresAt":7}`,
		`{"type":"resource","uri":"https://m.example/live"}`,
		`{"type":"resource","disposition":"never","resource":{"uri":"https://m.example/e1","text":"x"}}`,
		`{"type":"resource","resource":{"uri":"https://m.example/marked","text":"x"}}`,
		`{"type":"audio","data":"AAAA","uri":"https://m.example/c"}`,
		`{"type":"image","data":"AAAA","disposition":"ref"}`,
		`42`, `{"type":`, `{"no":"type"}`, `{"type":"resource"}`, `{"type":"resource","uri":7}`,
		`{"type":"resource","uri":"https://m.example/` + strings.Repeat("a", 4100) + `"}`,
		`{"type":"text","text":7}`, `{"type":"image","data":7}`, `{"type":"resource","uri":"a","uri":"b"}`,
		`{"type":"\u200b"}`,
	}
	var out []string
	for _, server := range []string{"", "\u200b"} {
		for _, lane := range []convert.Lane{convert.LaneToolResult, convert.LanePush, convert.LaneChannel, convert.LaneInjection, convert.Lane(9)} {
			reg := newRegistry(t)
			if _, ok := reg.MarkNever(t.Context(), "https://m.example/marked", "other"); !ok {
				t.Fatal("MarkNever marked nothing")
			}
			c := mustConverter(t, reg, convert.Policy{StubMax: 4000, Now: func() time.Time { return fixedNow }})
			src := convert.Source{Server: server, Lane: lane}
			out = append(out, c.Ingest(t.Context(), raws(blocks...), src).TextPieces(len(blocks))...)
			gone := mustConverter(t, forgetfulRegistrar{newRegistry(t)}, convert.Policy{})
			out = append(out, gone.Ingest(t.Context(), raws(blocks[4]), src).TextPieces(len(blocks))...)
		}
	}
	return out
}

// TestMinimumBoundsDerived pins how MinStubMax and MinViewMax follow from
// the texts the host writes (L5, S1, S6): MinStubMax is the longest stub
// or notice with no server-supplied label, and at ViewMax = MinViewMax
// every view still shows a whole stub of the most expensive characters,
// then the count of the blocks it left out.
func TestMinimumBoundsDerived(t *testing.T) {
	longest, which := 0, ""
	for _, p := range hostWorded(t) {
		if n := utf8.RuneCountInString(p); n > longest {
			longest, which = n, p
		}
	}
	if longest != convert.MinStubMax {
		t.Errorf("L5: the longest host-worded stub or notice is %d runes, MinStubMax is %d: %s", longest, convert.MinStubMax, which)
	}

	// At the minimum view bound the stub bound in force is the minimum.
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{ViewMax: convert.MinViewMax})
	if got := c.Policy().StubMax; got != convert.MinStubMax {
		t.Errorf("L5: at ViewMax %d the stub bound in force is %d, want %d", convert.MinViewMax, got, convert.MinStubMax)
	}
	// Names of the characters that cost most: astral runes (two code
	// units in text and JSON) and quotes (two in JSON).
	for _, name := range []string{strings.Repeat("😀", 255), strings.Repeat(`"`, 255), strings.Repeat(`\`, 255)} {
		nj, _ := json.Marshal(name)
		var blocks []string
		for i := 0; i < 3; i++ {
			blocks = append(blocks, fmt.Sprintf(`{"type":"resource","uri":"https://m.example/%d","name":%s,"mimeType":%s}`, i, nj, nj))
		}
		ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: strings.Repeat("😀", 64), Lane: convert.LaneChannel, Event: strings.Repeat("😀", 64)})
		checkViews(t, ct, convert.MinViewMax)
		stub := ct.TextPieces(1)[0]
		if n := utf8.RuneCountInString(stub); n != convert.MinStubMax {
			t.Errorf("L5: the worst stub is %d runes at the minimum, want %d", n, convert.MinStubMax)
		}
		if h := ct.History(); !strings.HasPrefix(h, stub+"\n") {
			t.Errorf("S6: at ViewMax %d history does not show the first stub whole:\n%s", convert.MinViewMax, h)
		}
		if p := ct.Push(); len(p) != 2 || p[0].Text != stub {
			t.Errorf("S6: at ViewMax %d the push view does not show the first stub whole: %s", convert.MinViewMax, convert.PushJSON(p))
		}
	}
}
