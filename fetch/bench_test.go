package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// The fetch benchmarks of shared/bench/README.md. The compare program in
// internal/bench runs each one interleaved with its baseline:
//
//   - BenchmarkFetch/64MiB against BenchmarkSHA256/cached (the hashing
//     limit) and BenchmarkBaseline/64MiB (plain http.Get into sha256);
//   - BenchmarkFetch/1MiB against /64MiB for the heap per fetch (B/op);
//   - BenchmarkFetch/64MiB-dirstore against /64MiB;
//   - BenchmarkFetchGzip against BenchmarkBaseline/gzip.

// payloadServer serves payload at every path, gzip-encoded when gz is set.
func payloadServer(b *testing.B, payload []byte, gz bool) *httptest.Server {
	b.Helper()
	enc := payload
	if gz {
		enc = gzipEncode(b, payload)
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

// gzipEncode compresses p at the default level, as a server would.
func gzipEncode(b *testing.B, p []byte) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if _, err := z.Write(p); err != nil {
		b.Fatal(err)
	}
	if err := z.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchPayload is size bytes that do not repeat within a cache line.
func benchPayload(size int) []byte {
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(i*7 + i>>9)
	}
	return p
}

// gzipPayload is size bytes of random hexadecimal text: sixteen symbols
// used evenly, which gzip compresses about 2:1 (mostly by Huffman coding,
// as real text or samples would be, not by long matches as with zeros).
func gzipPayload(size int) []byte {
	raw := make([]byte, size/2)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return []byte(hex.EncodeToString(raw))
}

func digestOf(p []byte) string {
	sum := sha256.Sum256(p)
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// benchFetch fetches payload through a real Fetcher with a claimed digest
// into store (nil: a store that discards the bytes); each iteration is a
// new record. chunk sets Config.ChunkSize (0: the default).
func benchFetch(b *testing.B, payload []byte, gz bool, store Store, chunk int) {
	srv := payloadServer(b, payload, gz)
	reg := newBenchRegistry(b)
	if store == nil {
		store = &discardStore{}
	}
	dir, _ := store.(*DirStore)
	// A budget no run spends, and the host ceiling as the max bytes.
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL}, nil }), store,
		Config{Budget: math.MaxInt64 / 2, MaxBytes: DefaultCeiling, ChunkSize: chunk})
	if err != nil {
		b.Fatal(err)
	}
	digest := digestOf(payload)
	var cleanup time.Duration // CPU time spent removing copies
	fetch := func(i int) {
		rec := benchRecord(reg, fmt.Sprintf("%s/p?i=%d", srv.URL, i), digest)
		res, err := f.Fetch(context.Background(), rec.ID, Request{})
		if err != nil || !res.DigestVerified || res.Bytes != int64(len(payload)) {
			b.Fatal(err)
		}
		if dir != nil {
			// Removing the file drops its pages before they are written
			// back, so the disk's own speed does not enter the figure.
			// The removal is the benchmark's cleanup, not the fetch's
			// work, and is left out of the time and of cpu-ns/op: for a
			// 64 MiB copy on ext4 it takes about 5 ms.
			b.StopTimer()
			c0 := cpuTime()
			os.Remove(res.Path)
			cleanup += cpuTime() - c0
			b.StartTimer()
		}
	}
	// One fetch before the timer opens the connection, so B/op is the
	// heap of a fetch and not of setting up the client.
	fetch(-1)
	cleanup = 0
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	defer reportCPU(b, &cleanup)()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fetch(i)
	}
}

// reportCPU reports the CPU time the whole process (server included) spent
// per operation, as cpu-ns/op: unlike the time, it hardly moves when
// other processes load the machine, so it compares the work two versions
// do while the elapsed time cannot. Call it after setup and defer the
// function it returns; untimed, if not nil, is CPU time the benchmark
// spent with its timer stopped, which is left out.
func reportCPU(b *testing.B, untimed *time.Duration) func() {
	start := cpuTime()
	return func() {
		cpu := cpuTime() - start
		if untimed != nil {
			cpu -= *untimed
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

func newBenchDirStore(b *testing.B) *DirStore {
	d, err := NewDirStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// BenchmarkFetch is the whole fetch: request, decoding, the checks of
// every chunk, hashing and storing, through the real Fetcher.
func BenchmarkFetch(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			benchFetch(b, benchPayload(size), false, nil, 0)
		})
	}
	b.Run("64MiB-dirstore", func(b *testing.B) {
		benchFetch(b, benchPayload(64<<20), false, newBenchDirStore(b), 0)
	})
}

// BenchmarkFetchChunk picks the chunk size and how much the ring between
// reader and hasher holds (ringBytes): the 64 MiB fetch with each, into
// the discarding store, and into a DirStore at the chosen ring size.
func BenchmarkFetchChunk(b *testing.B) {
	payload := benchPayload(64 << 20)
	defer func(n int) { ringBytes = n }(ringBytes)
	for _, ring := range []int{256 << 10, 512 << 10, 1 << 20, 2 << 20} {
		for _, chunk := range []int{32 << 10, 128 << 10} {
			b.Run(fmt.Sprintf("ring=%dKiB/chunk=%dKiB", ring>>10, chunk>>10), func(b *testing.B) {
				ringBytes = ring
				benchFetch(b, payload, false, nil, chunk)
			})
		}
	}
	ringBytes = 1 << 20
	for _, chunk := range []int{16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("ring=1024KiB/chunk=%dKiB-dirstore", chunk>>10), func(b *testing.B) {
			benchFetch(b, payload, false, newBenchDirStore(b), chunk)
		})
	}
}

// BenchmarkFetchSlowSource fetches from a server that sends 16 KiB
// every 2 ms, as a slow network would, and reports the CPU time a fetch
// costs: the hasher, which finds the ring empty at nearly every chunk,
// must not spend it trying again (see spanWait).
func BenchmarkFetchSlowSource(b *testing.B) {
	const pieces, piece = 100, 16 << 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, piece)
		for range pieces {
			if _, err := w.Write(buf); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
	}))
	b.Cleanup(srv.Close)
	reg := newBenchRegistry(b)
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL}, nil }), &discardStore{},
		Config{Budget: math.MaxInt64 / 2})
	if err != nil {
		b.Fatal(err)
	}
	digest := digestOf(make([]byte, pieces*piece))
	defer reportCPU(b, nil)()
	for i := 0; i < b.N; i++ {
		rec := benchRecord(reg, fmt.Sprintf("%s/p?i=%d", srv.URL, i), digest)
		if _, err := f.Fetch(context.Background(), rec.ID, Request{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchGzip fetches 16 MiB of content that the server sends
// gzip-coded at about 2:1.
func BenchmarkFetchGzip(b *testing.B) {
	benchFetch(b, gzipPayload(16<<20), true, nil, 0)
}

// BenchmarkSHA256 is the hashing limit: sha256 over one 1 MiB buffer
// written 64 times, so the data stays in cache.
func BenchmarkSHA256(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		buf := benchPayload(1 << 20)
		b.SetBytes(64 << 20)
		b.ReportAllocs()
		for b.Loop() {
			h := sha256.New()
			for range 64 {
				h.Write(buf)
			}
			h.Sum(nil)
		}
	})
}

// BenchmarkBaseline is plain http.Get and io.Copy into sha256 from the
// same kind of server: the floor the fetcher is compared with. The gzip
// case decodes with gzip.NewReader in between, on BenchmarkFetchGzip's
// payload.
func BenchmarkBaseline(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			baseline(b, benchPayload(size), false)
		})
	}
	b.Run("gzip", func(b *testing.B) { baseline(b, gzipPayload(16<<20), true) })
}

func baseline(b *testing.B, payload []byte, gz bool) {
	srv := payloadServer(b, payload, gz)
	// The default transport would ask for gzip itself and decode it
	// transparently; this client leaves the decoding to the benchmark.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	b.Cleanup(client.CloseIdleConnections)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	defer reportCPU(b, nil)()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Get(srv.URL + "/p")
		if err != nil {
			b.Fatal(err)
		}
		var body io.Reader = resp.Body
		if gz {
			z, err := gzip.NewReader(resp.Body)
			if err != nil {
				b.Fatal(err)
			}
			body = z
		}
		h := sha256.New()
		n, err := io.Copy(h, body)
		if err != nil || n != int64(len(payload)) {
			b.Fatal(n, err)
		}
		resp.Body.Close()
	}
}

// BenchmarkRefusal is the check a view makes for each stub it shows
// (convert.Policy{Refusal: fetcher.Refusal}): a held reference its
// server's origin serves, which the fetcher would fetch.
func BenchmarkRefusal(b *testing.B) {
	reg := newBenchRegistry(b)
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: "https://files.example"}, nil }),
		&discardStore{}, Config{Budget: math.MaxInt64 / 2})
	if err != nil {
		b.Fatal(err)
	}
	t := convert.Testimony{
		URI:       "https://files.example/out/1/2.wav?sig=0123456789abcdef",
		Digest:    digestOf([]byte("x")),
		SizeBytes: 1 << 20,
		Present:   convert.FieldURI | convert.FieldDigest | convert.FieldSizeBytes,
	}
	e := reg.Register(context.Background(), convert.Registration{Testimony: t, Server: "bench"})
	b.ReportAllocs()
	for b.Loop() {
		if r := f.Refusal(e); r != "" {
			b.Fatalf("Refusal = %q, want none", r)
		}
	}
}

// BenchmarkDirStoreBegin creates temporary files in one DirStore from 1
// and from 8 goroutines and reports the CPU time each create costs
// (cpu-ns/op). On the test machine's ext4, creates that run at the same
// time in one directory wait for each other in the kernel, spinning, so
// DirStore makes them one at a time (see Begin).
func BenchmarkDirStoreBegin(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", workers), func(b *testing.B) {
			d := newBenchDirStore(b)
			ctx := context.Background()
			pend := make([]Pending, b.N)
			c0 := cpuTime()
			b.ResetTimer()
			parallel(workers, b.N, func(i int) {
				p, err := d.Begin(ctx, "ref_bench.bin", "")
				if err != nil {
					b.Error(err)
					return
				}
				pend[i] = p
			})
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			for _, p := range pend {
				if p != nil {
					p.Abort(ctx)
				}
			}
		})
	}
}
