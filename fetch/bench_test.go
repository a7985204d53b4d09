package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// payloadServer serves size bytes at /p, gzip-encoded when gz is set.
func payloadServer(b *testing.B, payload []byte, gz bool) *httptest.Server {
	b.Helper()
	enc := payload
	if gz {
		enc = gzipped(b, payload)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write(enc)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchPayload(size int) []byte {
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(i*7 + i>>9)
	}
	return p
}

func digestOf(p []byte) string {
	sum := sha256.Sum256(p)
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// benchFetch fetches payload through a real Fetcher with a claimed digest
// and a store that discards bytes; each iteration is a new record.
func benchFetch(b *testing.B, payload []byte, gz bool) {
	srv := payloadServer(b, payload, gz)
	reg := newBenchRegistry(b)
	store := &discardStore{}
	// A budget no run spends, and the host ceiling as the max bytes.
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL}, nil }), store,
		Config{Budget: math.MaxInt64 / 2, MaxBytes: DefaultCeiling})
	if err != nil {
		b.Fatal(err)
	}
	digest := digestOf(payload)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := benchRecord(reg, fmt.Sprintf("%s/p?i=%d", srv.URL, i), digest)
		res, err := f.Fetch(context.Background(), rec.ID, Request{})
		if err != nil || !res.DigestVerified {
			b.Fatal(err)
		}
	}
}

func newBenchRegistry(b *testing.B) *refs.Registry {
	reg, err := refs.New(refs.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

func benchRecord(reg *refs.Registry, uri, digest string) refs.Record {
	t := convert.Testimony{URI: uri, Digest: digest, Present: convert.FieldURI | convert.FieldDigest}
	e := reg.Register(context.Background(), convert.Registration{Testimony: t, Server: "bench"})
	rec, _ := reg.Lookup(e.ID)
	return rec
}

func BenchmarkFetch(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		payload := benchPayload(size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) { benchFetch(b, payload, false) })
	}
}

func BenchmarkFetchGzip(b *testing.B) {
	benchFetch(b, benchPayload(16<<20), true)
}

// BenchmarkBaseline is plain http.Get and io.Copy into sha256 from the
// same kind of server: the floor the fetcher is compared with.
func BenchmarkBaseline(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		payload := benchPayload(size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			srv := payloadServer(b, payload, false)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := http.Get(srv.URL + "/p")
				if err != nil {
					b.Fatal(err)
				}
				h := sha256.New()
				if _, err := io.Copy(h, resp.Body); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
