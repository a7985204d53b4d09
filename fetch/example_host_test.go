package fetch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// A whole host, every setting at its zero value: a registry, a fetcher
// with a directory store, a converter whose stubs know what the fetcher
// would refuse, the fetch tool the model calls, and the views.
func Example_host() {
	// A tool server that serves its payloads to its own bearer token.
	wav := []byte("RIFF0000WAVEpayload")
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(wav)
	}))
	defer server.Close()

	ctx := context.Background()
	dir, err := os.MkdirTemp("", "refcore-host-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	// quickstart:begin
	// The wiring. A real host leaves refs.Config.Rand nil; a fixed source
	// keeps this example's ids stable.
	reg, err := refs.New(refs.Config{Rand: strings.NewReader(strings.Repeat("k", 32))})
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := fetch.NewDirStore(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		if name != "studio" {
			return fetch.Server{}, fetch.CodeUnknownServer
		}
		return fetch.Server{Origin: server.URL, Token: "s3cret"}, nil
	})
	fetcher, err := fetch.New(reg, servers, store, fetch.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv, err := convert.New(reg, convert.Policy{Refusal: fetcher.Refusal})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := fetcher.Tool() // offer tool.Name(), tool.Description(), tool.InputSchema() to the model
	// quickstart:end

	// quickstart:begin
	// A tool result arrives: one reference the model may fetch, and one its
	// server marked never.
	result := conv.Ingest(ctx, []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"Rendered two takes."}`),
		json.RawMessage(`{"type":"resource","uri":"` + server.URL + `/take1.wav","name":"take1.wav","mimeType":"audio/wav","sizeBytes":19}`),
		json.RawMessage(`{"type":"resource","uri":"` + server.URL + `/take2.wav","name":"take2.wav","mimeType":"audio/wav","sizeBytes":19,"disposition":"never"}`),
	}, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"})
	fmt.Println(result.History())

	// The model calls the fetch tool with each id it saw.
	for _, id := range result.IDs() {
		text, isError := tool.Handle(ctx, json.RawMessage(`{"id":"`+id+`"}`))
		fmt.Println(isError, strings.ReplaceAll(text, dir, "$DIR"))
	}
	// quickstart:end

	// The host may fetch the never payload for itself, to play it to its
	// user; the model still never gets it.
	res, err := fetcher.Fetch(ctx, result.IDs()[1], fetch.Request{ForHost: true})
	fmt.Println(res.Bytes, res.MimeType, err)
	fmt.Println(strings.ReplaceAll(result.History(), dir, "$DIR"))
	// Output:
	// Rendered two takes.
	// [ref_jfmx7ysvoglj2 "take1.wav" audio/wav, claimed 19 bytes, from tool render of studio; fetch it by this id]
	// [ref_7iqsk45ceykyg "take2.wav" audio/wav, claimed 19 bytes, from tool render of studio; withheld: its server marked it never, so neither the model nor its tools may receive it]
	// false fetched ref_jfmx7ysvoglj2: saved at $DIR/ref_jfmx7ysvoglj2.wav (19 bytes verified, audio/wav)
	// true couldn't fetch ref_7iqsk45ceykyg: a server asked that this reference's content never reach the model or its tools, so this host does not fetch it for them. Asking again will get the same answer.
	// 19 audio/wav <nil>
	// Rendered two takes.
	// [ref_jfmx7ysvoglj2 "take1.wav" audio/wav, claimed 19 bytes, from tool render of studio; saved at $DIR/ref_jfmx7ysvoglj2.wav (19 bytes verified, audio/wav)]
	// [ref_7iqsk45ceykyg "take2.wav" audio/wav, claimed 19 bytes, from tool render of studio; withheld: its server marked it never, so neither the model nor its tools may receive it]
}

// A host whose model can read the shared store's directory keeps the
// copies it fetches of never references for itself in a store of their
// own.
func ExampleConfig_hostStore() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write([]byte("RIFF0000WAVEpayload"))
	}))
	defer server.Close()
	ctx := context.Background()

	// The registry removes a copy it stops naming from the store that
	// holds it: a shared copy a later never mark reaches, or any copy a
	// new digest makes stale.
	shared, hostOnly := fetch.NewMemoryStore(), fetch.NewMemoryStore()
	reg, err := refs.New(refs.Config{Remover: fetch.Removers(shared, hostOnly)})
	if err != nil {
		fmt.Println(err)
		return
	}
	servers := fetch.ServersFunc(func(string) (fetch.Server, error) { return fetch.Server{Origin: server.URL}, nil })
	fetcher, err := fetch.New(reg, servers, shared, fetch.Config{HostStore: hostOnly})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv, err := convert.New(reg, convert.Policy{Refusal: fetcher.Refusal})
	if err != nil {
		fmt.Println(err)
		return
	}
	result := conv.Ingest(ctx, []json.RawMessage{
		json.RawMessage(`{"type":"resource","uri":"` + server.URL + `/take.wav","mimeType":"audio/wav","disposition":"never"}`),
	}, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"})

	res, err := fetcher.Fetch(ctx, result.IDs()[0], fetch.Request{ForHost: true})
	fmt.Println(res.Bytes, err)
	fmt.Println("shared store:", len(shared.Saves()), "host store:", len(hostOnly.Saves()))
	// Output:
	// 19 <nil>
	// shared store: 0 host store: 1
}
