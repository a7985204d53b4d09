package convert_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
)

// TestViewsNeverLeak is the property behind S2, P5, N6 and N8: for random
// content mixing text, references of every disposition (with
// secret-bearing uris), inline media, contradictions, embedded resources,
// blocks that name a property twice, blocks rejected whole that say never,
// and texts holding a never reference as JSON, no view ever carries a
// never reference's uri or query, nor inline data a contradiction or a
// never withheld. Any reference's query is absent too, since the default
// policy shows no uri at all.
func TestViewsNeverLeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 300; round++ {
		var blocks []string
		var secrets []string
		n := 1 + rng.IntN(6)
		for i := 0; i < n; i++ {
			secret := fmt.Sprintf("S%dx%dQ", round, i)
			uri := fmt.Sprintf("https://h%d.example/p/%d?sig=%s", rng.IntN(3), rng.IntN(3), secret)
			disp := []string{``, `,"disposition":"never"`, `,"disposition":"ref"`, `,"disposition":7`}[rng.IntN(4)]
			switch rng.IntN(9) {
			case 0:
				blocks = append(blocks, `{"type":"text","text":"plain `+fmt.Sprint(i)+`"}`)
			case 1:
				blocks = append(blocks, `{"type":"resource","uri":"`+uri+`","name":"n","sizeBytes":`+fmt.Sprint(rng.IntN(5)-1)+disp+`}`)
				secrets = append(secrets, secret, uri)
			case 2:
				blocks = append(blocks, `{"type":"image","uri":"`+uri+`","mimeType":"image/png"`+disp+`}`)
				secrets = append(secrets, secret, uri)
			case 3:
				data := "REFUQS" + secret
				blocks = append(blocks, `{"type":"audio","data":"`+data+`","mimeType":"audio/wav","uri":"`+uri+`"}`)
				secrets = append(secrets, data, secret)
			case 4:
				data := fmt.Sprintf("REFUQS%dz%d", round, i)
				blocks = append(blocks, `{"type":"image","data":"`+data+`","mimeType":"image/png"`+disp+`}`)
				if disp != "" {
					secrets = append(secrets, data)
				}
			case 5:
				payload := fmt.Sprintf("PAYLOAD%dy%d", round, i)
				blocks = append(blocks, `{"type":"resource","resource":{"uri":"`+uri+`","text":"`+payload+`"}`+disp+`}`)
				secrets = append(secrets, secret)
				if disp == `,"disposition":"never"` {
					secrets = append(secrets, payload)
				}
			case 6:
				blocks = append(blocks, duplicateKeyBlock(rng, uri, fmt.Sprintf("https://h9.example/d?sig=%sD", secret)))
				secrets = append(secrets, secret, uri)
			case 7:
				blocks = append(blocks, nestedNeverText(rng, uri))
				secrets = append(secrets, secret)
			case 8:
				blocks = append(blocks, `{"type":"resource","uri":"`+uri+`","disposition":"never","name":`)
				secrets = append(secrets, secret)
			}
		}
		// An embedded resource's text is content unless a never names its
		// uri; a never elsewhere in the content may name it, so check its
		// payload only where the content's claims call its uri never.
		reg := newRegistry(t)
		c := mustConverter(t, reg, convert.Policy{Now: func() time.Time { return fixedNow }})
		server := []string{"", "srv"}[rng.IntN(2)]
		for _, lane := range []convert.Lane{convert.LaneToolResult, convert.LanePush, convert.LaneChannel, convert.LaneInjection} {
			ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: server, Lane: lane})
			script, _ := json.Marshal(ct.Script())
			views := []string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push()), string(script)}
			for _, b := range ct.Blocks() {
				if b.Kind == convert.KindEmbedded && ct.Claims().Never(b.Testimony.URI) && strings.Contains(views[0], b.Text) {
					t.Fatalf("round %d: N6: a never embedded resource's text %q reached history", round, b.Text)
				}
			}
			for _, v := range views {
				for _, s := range secrets {
					if strings.Contains(v, s) {
						t.Fatalf("round %d lane %v: a view carries %q\nblocks: %v\nview: %s", round, lane, s, blocks, v)
					}
				}
			}
		}
	}
}

// duplicateKeyBlock returns a block that names some property twice: a
// disposition that says never in one occurrence, a repeated uri under a
// never, or a repeated disposition and name without one.
func duplicateKeyBlock(rng *rand.Rand, uri, other string) string {
	switch rng.IntN(4) {
	case 0:
		return `{"type":"resource","uri":"` + uri + `","disposition":"ref","name":"a","disposition":"never","name":"b"}`
	case 1:
		return `{"type":"image","uri":"` + uri + `","disposition":"never","dispositio\u006e":"ref"}`
	case 2:
		return `{"type":"resource","uri":"` + uri + `","uri":"` + other + `","disposition":"never"}`
	}
	return `{"type":"audio","uri":"` + uri + `","disposition":"ref","disposition":"ref","sizeBytes":1,"sizeBytes":2}`
}

// nestedNeverText returns a text block whose text is JSON holding a never
// reference to uri, wrapped in up to ten random levels of objects and
// arrays, in one of the shapes a server may write it.
func nestedNeverText(rng *rand.Rand, uri string) string {
	inner := [...]string{
		`{"type":"resource","uri":"` + uri + `","disposition":"never"}`,
		`{"disposition":"never","meta":{"k":[1,{"x":"y"}]},"uri":"` + uri + `"}`,
		`{"type":"resource","disposition":"never","resource":{"uri":"` + uri + `","text":"t"}}`,
		`{"uri":"` + strings.ReplaceAll(uri, "/", `\/`) + `","disposition":"\u006eever"}`,
	}[rng.IntN(4)]
	for d := rng.IntN(11); d > 0; d-- {
		if rng.IntN(2) == 0 {
			inner = `[0,` + inner + `]`
		} else {
			inner = `{"level":` + fmt.Sprint(d) + `,"next":` + inner + `}`
		}
	}
	text, _ := json.Marshal(inner)
	return `{"type":"text","text":` + string(text) + `}`
}

// TestViewsNeverLeakShared is the property behind N1, N2, N3, N4 and S2
// for blocks that share uris: random content names a few uris, each with
// a copy saved before the content arrives, through every shape that can
// carry a never (references, media by uri, embedded resources, inline data
// beside a uri, repeated keys, blocks rejected whole, JSON in text). Even
// with a policy that would show every uri, no view shows a uri the content
// calls never or a server marked, nor the path of its saved copy.
func TestViewsNeverLeakShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	showAll := func(convert.Entry) bool { return true }
	for round := 0; round < 300; round++ {
		pool := make([]string, 3)
		for k := range pool {
			pool[k] = fmt.Sprintf("https://pool.example/f/%d?sig=P%dk%dQ", k, round, k)
		}
		var blocks []string
		for i := 1 + rng.IntN(6); i > 0; i-- {
			uri, other := pool[rng.IntN(3)], pool[rng.IntN(3)]
			disp := []string{``, `,"disposition":"never"`, `,"disposition":"ref"`}[rng.IntN(3)]
			switch rng.IntN(9) {
			case 0:
				blocks = append(blocks, `{"type":"resource","uri":"`+uri+`","name":"n"`+disp+`}`)
			case 1:
				blocks = append(blocks, `{"type":"image","uri":"`+uri+`","mimeType":"image/png"`+disp+`}`)
			case 2:
				blocks = append(blocks, `{"type":"resource","resource":{"uri":"`+uri+`","text":"payload"}`+disp+`}`)
			case 3:
				blocks = append(blocks, `{"type":"audio","data":"AAAA","mimeType":"audio/wav","uri":"`+uri+`"`+disp+`}`)
			case 4:
				blocks = append(blocks, duplicateKeyBlock(rng, uri, other))
			case 5:
				blocks = append(blocks, nestedNeverText(rng, uri))
			case 6:
				blocks = append(blocks, `{"type":"resource","uri":"`+uri+`","disposition":"never","x":`+strings.Repeat("[", 10001)+strings.Repeat("]", 10001)+`}`)
			case 7:
				text, _ := json.Marshal(`{"files":[{"uri":"` + uri + `","name":"plain"}]}`)
				blocks = append(blocks, `{"type":"text","text":`+string(text)+`}`)
			default:
				blocks = append(blocks, `{"type":"text","text":"step done"}`)
			}
		}
		for _, server := range []string{"srv", ""} {
			reg := newRegistry(t)
			paths := map[string]string{}
			for k, u := range pool {
				e := reg.Register(t.Context(), convert.Registration{Testimony: convert.Testimony{URI: u, Present: convert.FieldURI}, Server: "srv"})
				paths[u] = fmt.Sprintf("saved/PATH%dk%d.bin", round, k)
				if err := reg.Save(e.ID, convert.Copy{Path: paths[u], Bytes: 4}, e.Testimony); err != nil {
					t.Fatal(err)
				}
			}
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll, Now: func() time.Time { return fixedNow }})
			ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: server, Lane: convert.LanePush})
			script, _ := json.Marshal(ct.Script())
			views := []string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push()), string(script)}
			for k, u := range pool {
				if !ct.Claims().Never(u) && !reg.MarkedHere(u) {
					continue
				}
				if server != "" && !reg.MarkedHere(u) {
					t.Fatalf("round %d: N1: the content calls %s never but its record is not marked\nblocks: %v", round, u, blocks)
				}
				for _, v := range views {
					for _, s := range []string{fmt.Sprintf("P%dk%dQ", round, k), paths[u]} {
						if strings.Contains(v, s) {
							t.Fatalf("round %d server %q: a view shows %q of a never uri\nblocks: %v\nview: %s", round, server, s, blocks, v)
						}
					}
				}
			}
		}
	}
}

// TestViewBound pins vector 8 and 17's host side: no field length changes
// a stub's size past its bound, and a whole view stays under the bound.
func TestViewBound(t *testing.T) {
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 2000})
	stubLen := func(name string, size string, uri string) int {
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+uri+`","name":"`+name+`","mimeType":"audio/wav","sizeBytes":`+size+`}`),
			convert.Source{Server: "s", Tool: "t"})
		return len(ct.History())
	}
	// Past the display bound, a name's length no longer shows: 161 and 255
	// code points (schema-valid, truncated) give one size, and 256 and a
	// mebibyte (rejected as a field, P3) give another, no larger.
	valid := []int{stubLen(strings.Repeat("a", 161), "12", "u1"), stubLen(strings.Repeat("a", 255), "12", "u2")}
	rejected := []int{stubLen(strings.Repeat("a", 256), "12", "u3"), stubLen(strings.Repeat("a", 1<<20), "12", "u4")}
	if valid[0] != valid[1] || rejected[0] != rejected[1] || rejected[0] > valid[0] {
		t.Errorf("vector 17: stub sizes vary with the name's length: truncated %v, rejected %v", valid, rejected)
	}
	// The claimed size shows in a few characters whatever its value (vector 8).
	if small, huge := stubLen("n", "0", "u5"), stubLen("n", "9007199254740991", "u6"); huge-small > 2 || small-huge > 2 {
		t.Errorf("vector 8: stub size moved with sizeBytes: %d vs %d", small, huge)
	}
	long := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"u7","sizeBytes":12}`), convert.Source{Server: strings.Repeat("s", 1<<16), Tool: strings.Repeat("t", 1<<16)})
	if got := len(long.History()); got > convert.DefaultStubMax*4 {
		t.Errorf("provenance inputs grew the stub to %d bytes", got)
	}
	var many []string
	for i := 0; i < 500; i++ {
		many = append(many, fmt.Sprintf(`{"type":"text","text":"%s"}`, strings.Repeat("\\u0001<&>", 10)))
		many = append(many, fmt.Sprintf(`{"type":"image","data":"%s","mimeType":"image/png"}`, strings.Repeat("A", 100)))
	}
	ct := c.Ingest(t.Context(), raws(many...), convert.Source{Server: "s", Lane: convert.LanePush})
	if n := utf16Len(convert.PushJSON(ct.Push())); n > 2000 {
		t.Errorf("push view is %d code units, over the bound 2000", n)
	}
	if n := utf16Len(ct.Wake()); n > 2000 {
		t.Errorf("wake is %d code units, over the bound 2000", n)
	}
	if !strings.Contains(convert.PushJSON(ct.Push()), "not shown: this view reached its size bound") {
		t.Error("a cut push view must say blocks were left out")
	}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
