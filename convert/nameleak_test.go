package convert_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
)

// everyView is all a content shows the model, joined.
func everyView(t *testing.T, ct *convert.Content) string {
	t.Helper()
	script, err := json.Marshal(ct.Script())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push()), string(script)}, "\n")
}

// TestNameRepeatsPartOfOwnURI pins S2 and L1 for labels: a block's name
// (or media type) that repeats the secret-bearing parts of the block's own
// uri without its scheme, as a server that named a file after the last
// part of its url would send it, shows none of them. The query, the user
// information and the fragment, and the uri written without its scheme,
// are withheld wherever they stand in the label; what else the name says
// stays.
func TestNameRepeatsPartOfOwnURI(t *testing.T) {
	const (
		uri    = "https://user:PASS-SECRET@vault.example/renders/take.wav?sig=QUERY-SECRET#FRAG-SECRET-0123456789abcdefgh"
		secret = "SECRET"
	)
	names := []string{
		"take.wav?sig=QUERY-SECRET",
		"take.wav?SIG=query-secret",
		"vault.example/renders/take.wav?sig=QUERY-SECRET#FRAG-SECRET-0123456789abcdefgh",
		"user:PASS-SECRET's take",
		"take.wav#FRAG-SECRET-0123456789abcdefgh",
	}
	for _, name := range names {
		for _, never := range []string{``, `,"disposition":"never"`} {
			blocks := []string{
				`{"type":"resource","uri":"` + uri + `","name":"` + name + `","mimeType":"audio/wav"` + never + `}`,
				`{"type":"resource","uri":"` + uri + `","name":"take","mimeType":"audio/wav; name=` + name + `"` + never + `}`,
				`{"type":"resource","resource":{"uri":"` + uri + `","name":"` + name + `","text":"payload"}` + never + `}`,
			}
			for _, blk := range blocks {
				for _, src := range []convert.Source{{Server: "s", Tool: "t"}, {Tool: "t"}} {
					c := mustConverter(t, newRegistry(t), convert.Policy{})
					ct := c.Ingest(t.Context(), raws(blk), src)
					if v := everyView(t, ct); strings.Contains(strings.ToUpper(v), secret) {
						t.Errorf("server %q, block %s: a view shows part of the block's uri:\n%s", src.Server, blk, v)
					}
				}
			}
		}
	}
	// The rest of a name is kept.
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+uri+`","name":"take.wav?sig=QUERY-SECRET"}`), convert.Source{Server: "s", Tool: "t"})
	if h := ct.History(); !strings.Contains(h, `"take.wav?[uri withheld]"`) {
		t.Errorf("history %q; want the name kept up to the withheld query", h)
	}
}

// TestNestedNeverBesideValidBlock pins N1 and S2 for a "resource" object
// nested in a block that is valid without it: a never it states (or the
// block states around it) marks its uri in server content, and withholds
// it within serverless content, as it does in a block rejected whole.
func TestNestedNeverBesideValidBlock(t *testing.T) {
	const (
		uri    = "https://vault.example/take.wav?sig=NESTED-SECRET"
		secret = "NESTED-SECRET"
	)
	nested := `"resource":{"uri":"` + uri + `","text":"payload","disposition":"never"}`
	blocks := map[string]string{
		"reference": `{"type":"resource","uri":"https://other.example/x",` + nested + `}`,
		"media":     `{"type":"image","uri":"https://other.example/y.png",` + nested + `}`,
		"inline":    `{"type":"image","data":"aGk=","mimeType":"image/png",` + nested + `}`,
		"text":      `{"type":"text","text":"hello",` + nested + `}`,
		"link":      `{"type":"resource_link","uri":"https://other.example/z","name":"z",` + nested + `}`,
		"rejected":  `{"type":"resource","uri":"https://other.example/x","uri":"https://other.example/x",` + nested + `}`,
	}
	for name, blk := range blocks {
		for _, src := range []convert.Source{{Server: "s", Tool: "t"}, {Tool: "t"}} {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{})
			ct := c.Ingest(t.Context(), raws(blk, textBlock(t, "see "+uri)), src)
			if v := everyView(t, ct); strings.Contains(v, secret) {
				t.Errorf("%s block, server %q: a view shows the nested never uri:\n%s", name, src.Server, v)
			}
			if marked := reg.MarkedHere(uri); marked != (src.Server != "") {
				t.Errorf("%s block, server %q: marked %t; want a mark exactly for server content", name, src.Server, marked)
			}
		}
	}
}

// TestOwnURIWithEmptyParts pins that a block's own uri with nothing after
// its scheme, or an empty query or fragment, withholds nothing of its name
// for the empty parts: an empty part matched everywhere, and the label
// was rewritten without end.
func TestOwnURIWithEmptyParts(t *testing.T) {
	for _, uri := range []string{"https://", "https://?", "https://h.example/?#", "x://@"} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+uri+`","name":"take.wav"}`), convert.Source{Server: "s", Tool: "t"})
		if h := ct.History(); !strings.Contains(h, `"take.wav"`) {
			t.Errorf("uri %q: history %q; want the name whole", uri, h)
		}
	}
}

// TestNameRepeatsShortFragmentKey pins S2 and L1 for a share link whose
// key is its fragment, shorter than a long token (a folder or drive link's
// key): a name quoting the link's tail, "#" and key, shows no key.
func TestNameRepeatsShortFragmentKey(t *testing.T) {
	for uri, name := range map[string]string{
		"https://share.example/folder/xT4kQb7Z#hK2pL9vQ3mN8rT5wY1zXKA":     "xT4kQb7Z#hK2pL9vQ3mN8rT5wY1zXKA",
		"https://drive.example/urls/T9X2K4M8QR#aB3dE5gH7jK9":               "take.wav (T9X2K4M8QR#aB3dE5gH7jK9)",
		"https://send.example/download/3f9a1c2b7d/#Zk8sW2qLx9Rt4VbN7yH3Jg": "3f9a1c2b7d/#Zk8sW2qLx9Rt4VbN7yH3Jg",
	} {
		key := uri[strings.IndexByte(uri, '#')+1:]
		for _, never := range []string{``, `,"disposition":"never"`} {
			c := mustConverter(t, newRegistry(t), convert.Policy{})
			ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+uri+`","name":"`+name+`"`+never+`}`), convert.Source{Server: "s", Tool: "t"})
			if v := everyView(t, ct); strings.Contains(v, key) {
				t.Errorf("uri %q%s: a view shows the key %q", uri, never, key)
			}
		}
	}
}

// TestNameKeepsOrdinaryWordsOfOwnURI pins the other side of
// TestNameRepeatsPartOfOwnURI: parts of the own uri that carry no
// credential (a fragment naming a section, a user name alone, a bare
// host) do not cut ordinary words out of a name.
func TestNameKeepsOrdinaryWordsOfOwnURI(t *testing.T) {
	for uri, name := range map[string]string{
		"https://docs.example/json.html#json.dumps": "json.dumps",
		"https://docs.example/guide#authentication": "Authentication",
		"ftp://anonymous@files.example/pub/README":  "README (anonymous)",
		"https://example.com":                       "Example.com home page",
		"https://example.com/":                      "Example.com home page",
	} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+uri+`","name":"`+name+`"}`), convert.Source{Server: "s", Tool: "t"})
		if h := ct.History(); !strings.Contains(h, `"`+name+`"`) {
			t.Errorf("uri %q: history %q; want the name %q whole", uri, h, name)
		}
	}
}
