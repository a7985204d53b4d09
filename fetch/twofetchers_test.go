package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestStaleCommitKeepsNewerCopy runs two fetchers of one registry, as a
// host with a fetcher per session does, into one DirStore. The first
// downloads the bytes of the reference's old digest slowly; the record
// takes a new digest, and the second fetcher saves the new bytes under
// the same storage name. The first must then not commit its stale copy
// over the new one (F19, F20): the record goes on naming a copy that
// exists and holds the bytes of its verified digest.
func TestStaleCommitKeepsNewerCopy(t *testing.T) {
	ctx := context.Background()
	oldBytes, newBytes := []byte("old take\n"), []byte("new take\n")
	release := make(chan struct{})
	atServer := make(chan struct{})
	var first atomic.Bool
	var current atomic.Pointer[[]byte]
	current.Store(&oldBytes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := *current.Load()
		w.Header().Set("Content-Type", "text/plain")
		if first.CompareAndSwap(false, true) {
			close(atServer)
			<-release // the old bytes come slowly
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	store, err := NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg, err := refs.New(refs.Config{Remover: store})
	if err != nil {
		t.Fatal(err)
	}
	servers := ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL}, nil })
	fetchers := make([]*Fetcher, 2)
	for i := range fetchers {
		if fetchers[i], err = New(reg, servers, store, Config{}); err != nil {
			t.Fatal(err)
		}
	}
	register := func(b []byte) string {
		return reg.Register(ctx, convert.Registration{Server: "s", Testimony: convert.Testimony{
			URI: srv.URL + "/take.txt", Digest: digestOf(b), Present: convert.FieldURI | convert.FieldDigest}}).ID
	}
	id := register(oldBytes)
	firstDone := make(chan error, 1)
	go func() { _, err := fetchers[0].Fetch(ctx, id, Request{}); firstDone <- err }()
	<-atServer
	current.Store(&newBytes)
	register(newBytes)
	res, err := fetchers[1].Fetch(ctx, id, Request{})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	err = <-firstDone
	failureOf(t, err, CodeGone)
	rec, _ := reg.Lookup(id)
	if rec.Copy == nil || rec.Copy.Path != res.Path {
		t.Fatalf("the record names %+v, want the second fetcher's copy %s", rec.Copy, res.Path)
	}
	if got, err := os.ReadFile(res.Path); err != nil || string(got) != string(newBytes) {
		t.Errorf("the record's copy holds %q (%v), want the bytes of its verified digest %q", got, err, newBytes)
	}
}
