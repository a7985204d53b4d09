package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// register records one reference from the "media" server, the way a host
// ingests a tool result, and returns its record.
func register(reg *refs.Registry, block string) refs.Record {
	b := convert.Classify([]byte(block))
	e := reg.Register(convert.Registration{Testimony: b.Testimony, Server: "media"})
	rec, _ := reg.Lookup(e.ID)
	return rec
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

	reg := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		if name != "media" {
			return fetch.Server{}, fetch.ErrUnknownServer
		}
		return fetch.Server{Origin: srv.URL + "/mcpl", Token: "s3cret"}, nil
	})
	store := fetch.NewMemoryStore()
	f := fetch.New(reg, servers, store, fetch.Config{})

	rec := register(reg, `{"type":"resource","uri":"`+srv.URL+`/chord","mimeType":"image/png","sizeBytes":19,
		"digest":"sha256:uM7OLD5sO8G3SeWw3LirIreZM71523d9_qXxkn8ewpM"}`)
	res, err := f.Fetch(context.Background(), rec, fetch.Request{MaxBytes: 1 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The storage name is the host's reference id plus an extension from
	// the observed type: the bytes say WAV, whatever the claim said.
	fmt.Println(res.Path == rec.ID+".wav", res.Bytes, res.MimeType, res.DigestVerified)
	saved, _ := reg.Lookup(rec.ID)
	fmt.Println(saved.Saved.Path == res.Path, len(store.Saves()))

	again, _ := f.Fetch(context.Background(), rec, fetch.Request{})
	fmt.Println("from copy:", again.FromCopy)
	// Output:
	// true 19 audio/wav true
	// true 1
	// from copy: true
}

func ExampleFetcher_Refusal() {
	reg := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		return fetch.Server{Origin: "wss://media.example/mcpl", Token: "s3cret"}, nil
	})
	f := fetch.New(reg, servers, nil, fetch.Config{})

	for _, uri := range []string{
		"https://media.example/chord.wav",
		"https://cdn.example/chord.wav",
		"file:///etc/passwd",
	} {
		rec := register(reg, `{"type":"resource","uri":"`+uri+`"}`)
		if r := f.Refusal(rec); r != nil {
			fmt.Println(r.Code, errors.Is(r, fetch.ErrCrossOrigin))
		} else {
			fmt.Println("would fetch")
		}
	}
	// Output:
	// would fetch
	// cross-origin true
	// scheme-not-allowed false
}

func ExampleFailure_Sentence() {
	reg := refs.New(refs.Config{})
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		return fetch.Server{Origin: "https://media.example"}, nil
	})
	f := fetch.New(reg, servers, nil, fetch.Config{})
	rec := register(reg, `{"type":"resource","uri":"https://media.example/a.wav","expiresAt":"2001-02-03"}`)

	_, err := f.Fetch(context.Background(), rec, fetch.Request{})
	var fail *fetch.Failure
	if errors.As(err, &fail) {
		fmt.Println(fail.Sentence("ref_demo"))
	}
	// Output:
	// couldn't fetch ref_demo: the reference is expired: its expiry time has passed. This reference will keep failing, but a new reference to the same content, when one arrives, may be fetchable.
}
