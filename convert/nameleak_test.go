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
		uri    = "https://user:PASS-SECRET@vault.example/renders/take.wav?sig=QUERY-SECRET#FRAG-SECRET"
		secret = "SECRET"
	)
	names := []string{
		"take.wav?sig=QUERY-SECRET",
		"take.wav?SIG=query-secret",
		"vault.example/renders/take.wav?sig=QUERY-SECRET#FRAG-SECRET",
		"user:PASS-SECRET's take",
		"take.wav#FRAG-SECRET",
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
