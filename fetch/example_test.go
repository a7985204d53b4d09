package fetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// register records one reference from the "media" server, the way a host
// ingests a tool result, and returns its entry.
func register(reg *refs.Registry, block string) convert.Entry {
	b := convert.Classify([]byte(block))
	return reg.Register(context.Background(), convert.Registration{Testimony: b.Testimony, Server: "media"})
}

func ExampleFetcher_Fetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "audio/x-wav")
		w.Write([]byte("RIFF0000WAVEpayload"))
	}))
	defer srv.Close()

	reg, err := refs.New(refs.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		if name != "media" {
			return fetch.Server{}, fmt.Errorf("server %q: %w", name, fetch.CodeUnknownServer)
		}
		return fetch.Server{Origin: srv.URL + "/mcpl", Token: "s3cret"}, nil
	})
	store := fetch.NewMemoryStore()
	f, err := fetch.New(reg, servers, store, fetch.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}

	e := register(reg, `{"type":"resource","uri":"`+srv.URL+`/chord","mimeType":"image/png","sizeBytes":19,
		"digest":"sha256:uM7OLD5sO8G3SeWw3LirIreZM71523d9_qXxkn8ewpM"}`)
	res, err := f.Fetch(context.Background(), e.ID, fetch.Request{MaxBytes: 1 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The storage name is the host's reference id plus an extension from
	// the observed type: the bytes say WAV, whatever the claim said.
	fmt.Println(res.Path == e.ID+".wav", res.Bytes, res.MimeType, res.DigestVerified)
	saved, _ := reg.Lookup(e.ID)
	fmt.Println(saved.Copy.Path == res.Path, len(store.Saves()))

	again, _ := f.Fetch(context.Background(), e.ID, fetch.Request{})
	fmt.Println("from copy:", again.FromCopy)

	_, err = f.Fetch(context.Background(), "ref_unknown", fetch.Request{})
	fmt.Println(errors.Is(err, refs.ErrUnknownReference))
	// Output:
	// true 19 audio/wav true
	// true 1
	// from copy: true
	// true
}

func ExampleFetcher_Refusal() {
	reg, _ := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		return fetch.Server{Origin: "wss://media.example/mcpl", Token: "s3cret"}, nil
	})
	f, _ := fetch.New(reg, servers, fetch.NewMemoryStore(), fetch.Config{})

	// A converter whose stubs give the fetcher's refusal instead of a
	// fetch hint takes it as its policy.
	if _, err := convert.New(reg, convert.Policy{Refusal: f.Refusal}); err != nil {
		fmt.Println(err)
	}

	for _, uri := range []string{
		"https://media.example/chord.wav",
		"https://cdn.example/chord.wav",
		"file:///etc/passwd",
	} {
		e := register(reg, `{"type":"resource","uri":"`+uri+`"}`)
		if r := f.Refusal(e); r != "" {
			fmt.Println(r)
		} else {
			fmt.Println("would fetch")
		}
	}
	// Output:
	// would fetch
	// the reference points to another origin than the one the "media" server was dialed at, and this host fetches only from that origin (the same scheme, host and port)
	// the reference's address uses the file: scheme, and this host fetches over http: and https: only
}

func ExampleFailure_Sentence() {
	reg, _ := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		return fetch.Server{Origin: "https://media.example"}, nil
	})
	f, _ := fetch.New(reg, servers, fetch.NewMemoryStore(), fetch.Config{})
	e := register(reg, `{"type":"resource","uri":"https://media.example/a.wav","expiresAt":"2001-02-03"}`)

	_, err := f.Fetch(context.Background(), e.ID, fetch.Request{})
	var fail *fetch.Failure
	if errors.As(err, &fail) {
		fmt.Println(errors.Is(err, fetch.CodeExpired))
		fmt.Println(fail.Sentence("ref_demo"))
	}
	// Output:
	// true
	// couldn't fetch ref_demo: this reference can no longer be fetched: its claimed expiry has passed. This reference will keep failing, but a new reference to the same content, when one arrives, may be fetchable.
}

func ExampleTool() {
	reg, _ := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		return fetch.Server{Origin: "https://media.example"}, nil
	})
	f, _ := fetch.New(reg, servers, fetch.NewMemoryStore(), fetch.Config{})
	tool := f.Tool()
	e := register(reg, `{"type":"resource","uri":"https://media.example/a.wav","expiresAt":"2001-02-03"}`)

	args, _ := json.Marshal(map[string]any{"id": e.ID})
	text, isError := tool.Handle(context.Background(), args)
	fmt.Println(tool.Name(), isError, text == "couldn't fetch "+e.ID+": this reference can no longer be fetched: its claimed expiry has passed. This reference will keep failing, but a new reference to the same content, when one arrives, may be fetchable.")

	text, isError = tool.Handle(context.Background(), json.RawMessage(`{"id":"ref_gone"}`))
	fmt.Println(isError, text)
	// Output:
	// fetch_reference true true
	// true unknown reference: "ref_gone": this host holds no reference by that id; ids come from the stubs shown in this conversation, and an old one may have been let go.
}
