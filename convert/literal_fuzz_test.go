package convert_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

// FuzzNeverLiteral: a content calls a uri holding SECRET never, in a
// block or in a text's JSON, after other references (plain or never, up
// to past the bound of the search for uris the bare reading does not
// take whole), and a text writes the uri out between any words; no view
// shows it, and nothing panics (S2, N2).
func FuzzNeverLiteral(f *testing.F) {
	f.Add("urn:vault.example:SECRET", "see ", ", ok", 0, false, false)
	f.Add("mailto:ops@x.example?s=SECRET&b=https://d.example/", "[", "]", 140, true, true)
	f.Add("Tag:x,2026:SECRET é", "A:", "\n", 130, false, true)
	f.Add(" urn:a:SECRET\u200b", `{"id":"`, `"}`, 3, true, false)
	f.Add("https://h.example/a b?SECRET", "", "", 70, false, false)
	f.Fuzz(func(t *testing.T, uri, before, after string, others int, othersNever, inText bool) {
		if !strings.Contains(uri, "SECRET") || !utf8.ValidString(uri+before+after) || len(uri) > 512 {
			return
		}
		// The uri as a never names it; writing it out adds nothing around.
		shown := strings.TrimFunc(uri, func(r rune) bool { return r <= ' ' || r == '\u200b' || r == '\u00a0' })
		if shown == "" || strings.ContainsFunc(shown, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\u200b' }) {
			return // a view cleans such characters out of a text anyway
		}
		if !literalSearched(shown) {
			return // read by the bare reading, which its own fuzz covers
		}
		others = min(max(others, 0), 200)
		q, _ := json.Marshal(uri)
		var blocks []string
		for i := range others {
			d := ""
			if othersNever {
				d = `,"disposition":"never"`
			}
			blocks = append(blocks, `{"type":"resource_link","uri":"urn:other.example:`+strconv.Itoa(i)+`","name":"n"`+d+`}`)
		}
		if inText {
			blocks = append(blocks, textBlock(t, `[{"uri":`+string(q)+`,"disposition":"never"}]`))
		} else {
			blocks = append(blocks, `{"type":"resource","uri":`+string(q)+`,"disposition":"never"}`)
		}
		blocks = append(blocks, textBlock(t, before+shown+after))
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
		ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s", Tool: "t"})
		if !ct.Claims().Never(uri) {
			return // a block rejected whole for its uri may state no never
		}
		for _, v := range views(t, ct) {
			if strings.Contains(v, shown) {
				t.Fatalf("S2: a view shows the never uri %q:\n%.400s", shown, v)
			}
		}
	})
}

// literalSearched reports whether the texts are searched for uri as a
// block writes it: it has a scheme and no "://", or a space.
func literalSearched(uri string) bool {
	i := strings.IndexByte(uri, ':')
	if i <= 0 || i+1 == len(uri) || !('a' <= uri[0]|0x20 && uri[0]|0x20 <= 'z') {
		return false
	}
	for _, c := range []byte(uri[:i]) {
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return !strings.Contains(uri, "://") || strings.Contains(uri, " ")
}

// FuzzNeverPercentEncoded: a content calls a uri holding SECRET never,
// and a text writes it percent-encoded whole by Go's url.QueryEscape,
// between any words or in a link's query; no view shows that form (S2).
func FuzzNeverPercentEncoded(f *testing.F) {
	f.Add("urn:vault.example:SECRET", "see ", " now", false)
	f.Add("mailto:ops@x.example?s=SECRET&b=1", "https://viewer.example/?src=", "&x=1", true)
	f.Add("tag:x,2026:SECRET é~(1)", "[", "]", false)
	f.Add("https://h.example/a b?SECRET", "", "", true)
	f.Fuzz(func(t *testing.T, uri, before, after string, inText bool) {
		if !strings.Contains(uri, "SECRET") || !utf8.ValidString(uri+before+after) || len(uri) > 512 {
			return
		}
		if strings.TrimSpace(uri) != uri || !literalSearched(uri) {
			return
		}
		enc := url.QueryEscape(uri)
		q, _ := json.Marshal(uri)
		never := `{"type":"resource","uri":` + string(q) + `,"disposition":"never"}`
		if inText {
			never = textBlock(t, `[{"uri":`+string(q)+`,"disposition":"never"}]`)
		}
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
		ct := c.Ingest(t.Context(), raws(never, textBlock(t, before+enc+after)), convert.Source{Server: "s", Tool: "t"})
		if !ct.Claims().Never(uri) {
			return // a block rejected whole for its uri may state no never
		}
		for _, v := range views(t, ct) {
			if strings.Contains(v, enc) {
				t.Fatalf("S2: a view shows the never uri %q encoded as %q:\n%.400s", uri, enc, v)
			}
		}
	})
}
