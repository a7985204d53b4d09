package fetch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// respell returns one of the spellings a server could send for base that
// a client would send as the same request (or that the fetcher refuses
// anyway): a fragment, an empty query, dot and empty segments, an escaped
// unreserved character, a user name, invisible characters around it.
func respell(rng *rand.Rand, origin, path string) string {
	switch rng.IntN(9) {
	case 0:
		return origin + path + "#part"
	case 1:
		return origin + path + "?"
	case 2:
		return origin + "/x/.." + path
	case 3:
		return origin + "/." + path
	case 4:
		return origin + "/" + path
	case 5:
		return origin + strings.Replace(path, ".", "%2E", 1)
	case 6:
		return strings.Replace(origin, "://", "://someone@", 1) + path
	case 7:
		return "\u200b " + origin + path + "\u2060"
	}
	return origin + path
}

// markingBlock is a block of one of the shapes that carry a never for uri.
func markingBlock(rng *rand.Rand, uri string) string {
	u, _ := json.Marshal(uri)
	switch rng.IntN(6) {
	case 0:
		return `{"type":"resource","uri":` + string(u) + `,"name":"a.wav","disposition":"never"}`
	case 1:
		return `{"type":"resource","uri":` + string(u) + `,"disposition":"ref","disposition":"never"}`
	case 2:
		inner, _ := json.Marshal(`{"items":[{"type":"resource","uri":` + string(u) + `,"disposition":"never"}]}`)
		return `{"type":"text","text":` + string(inner) + `}`
	case 3:
		return `{"type":"resource","uri":` + string(u) + `,"disposition":"never","sizeBytes":`
	case 4:
		return `{"type":"image","uri":` + string(u) + `,"mimeType":"image/png","disposition":"never"}`
	}
	return `{"type":"resource","resource":{"uri":` + string(u) + `,"text":"x"},"disposition":"never"}`
}

// TestNeverHoldsOverRandomDeliveries is the end-to-end property behind
// N1, N2, N8 and F18: a server marks some resources never, each through a
// random shape (a reference, a key given twice, JSON inside a text, a block
// rejected whole, an image, an embedded resource) and a random respelling
// of its uri, and delivers every resource plainly in other spellings,
// before or after the mark. With every setting at its zero value, no view
// shows a marked resource's address, no fetch of it for the model
// succeeds, and the server never receives a request for it; every unmarked
// resource stays fetchable.
func TestNeverHoldsOverRandomDeliveries(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "audio/wav")
		w.Write([]byte("RIFF0000WAVEpayload"))
	}))
	defer srv.Close()
	servers := fetch.ServersFunc(func(string) (fetch.Server, error) { return fetch.Server{Origin: srv.URL, Token: "tok"}, nil })
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(5, 18))
	for round := range 60 {
		reg, err := refs.New(refs.Config{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := fetch.New(reg, servers, fetch.NewMemoryStore(), fetch.Config{})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := convert.New(reg, convert.Policy{Refusal: f.Refusal, ShowURI: func(convert.Entry) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		paths := make([]string, 4)
		marked := make([]bool, len(paths))
		var markBlocks, plainBlocks []string
		for i := range paths {
			paths[i] = fmt.Sprintf("/r%d/take%d.wav", round, i)
			if marked[i] = rng.IntN(2) == 0; marked[i] {
				markBlocks = append(markBlocks, markingBlock(rng, respell(rng, srv.URL, paths[i])))
			}
			u, _ := json.Marshal(respell(rng, srv.URL, paths[i]))
			plainBlocks = append(plainBlocks, `{"type":"resource","uri":`+string(u)+`,"name":"t.wav","mimeType":"audio/wav"}`)
		}
		src := convert.Source{Server: "srv", Lane: []convert.Lane{convert.LaneToolResult, convert.LanePush}[rng.IntN(2)], Tool: "t"}
		deliver := func(blocks []string) *convert.Content {
			raw := make([]json.RawMessage, len(blocks))
			for i, b := range blocks {
				raw[i] = json.RawMessage(b)
			}
			return conv.Ingest(ctx, raw, src)
		}
		var plain, marking *convert.Content
		if rng.IntN(2) == 0 {
			plain, marking = deliver(plainBlocks), deliver(markBlocks)
		} else {
			marking, plain = deliver(markBlocks), deliver(plainBlocks)
		}

		views := []string{plain.History(), plain.Wake(), convert.PushJSON(plain.Push()), marking.History()}
		script, _ := json.Marshal(plain.Script())
		views = append(views, string(script))
		for i, p := range paths {
			if !marked[i] {
				continue
			}
			for _, v := range views {
				if strings.Contains(v, p) || strings.Contains(v, strings.Replace(p, ".", "%2E", 1)) {
					t.Fatalf("round %d: a view shows the never resource %s:\n%s", round, p, v)
				}
			}
		}
		ids := plain.IDs()
		if len(ids) != len(paths) {
			t.Fatalf("round %d: %d ids for %d references", round, len(ids), len(paths))
		}
		for i, id := range ids {
			_, err := f.Fetch(ctx, id, fetch.Request{})
			switch {
			case marked[i] && !errors.Is(err, fetch.CodeWithheld):
				t.Errorf("round %d: a fetch of never resource %s for the model gave %v, want withheld", round, paths[i], err)
			// A user name is refused, and invisible characters around the
			// address make it no URL; every other unmarked spelling fetches.
			case !marked[i] && err != nil && !errors.Is(err, fetch.CodeCredentialsInURL) && !errors.Is(err, fetch.CodeBadURI):
				t.Errorf("round %d: the unmarked resource %s did not fetch: %v", round, paths[i], err)
			}
		}
		mu.Lock()
		for i, p := range paths {
			if marked[i] && hits[p] != 0 {
				t.Errorf("round %d: the server received %d requests for never resource %s", round, hits[p], p)
			}
		}
		mu.Unlock()
	}
}
