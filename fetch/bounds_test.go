package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLargestBoundsFetch pins the promise of a documented config: any
// non-negative bound is accepted, so a host that passes math.MaxInt64 to
// mean "no limit" must get a working fetcher. A Ceiling near MaxInt64
// overflowed the encoded-bytes bound derived from it, and the first fetch
// panicked on the download goroutine, which no host can recover.
func TestLargestBoundsFetch(t *testing.T) {
	for _, cfg := range []Config{
		{Ceiling: math.MaxInt64},
		{Ceiling: math.MaxInt64, MaxBytes: math.MaxInt64, Budget: math.MaxInt64},
		{Ceiling: math.MaxInt64 - 1<<16},
	} {
		e := newEnv(t, body([]byte("payload"), "text/plain"), func(e *env) { e.cfg = cfg })
		for _, max := range []int64{0, math.MaxInt64} {
			rec := e.ref(serverName, fmt.Sprintf(`{"type":"resource","uri":"$ORIGIN/payload?max=%d"}`, max))
			res, err := e.f.Fetch(t.Context(), rec.ID, Request{MaxBytes: max})
			if err != nil || res.Bytes != int64(len("payload")) {
				t.Errorf("Config %+v, MaxBytes %d: fetch = %+v, %v; want the 7-byte payload", cfg, max, res, err)
			}
		}
	}
}

// TestWireBoundedByDecodedLimits: encoded bytes that decode to nothing
// (endless empty gzip members) must stop near the decoded bytes the call
// may still receive, not near the host ceiling. Before, a call with 64 KiB
// max bytes, or a server with 1 MiB of budget, read about 260 MiB each
// (F5, F6, F7).
func TestWireBoundedByDecodedLimits(t *testing.T) {
	empty := bytes.Repeat(gzipped(t, nil), 4096)
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		req  Request
	}{
		{"max-bytes", func(*Config) {}, Request{MaxBytes: 64 << 10}},
		{"budget", func(c *Config) { c.Budget = 1 << 20 }, Request{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				for {
					n, err := w.Write(empty)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}, withConfig(tc.cfg))
			rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
			_, err := e.fetch(t.Context(), rec, tc.req)
			f := failureOf(t, err, CodeBadEncoding)
			if f.Remedy.Kind() != RemedyTryLaterThenFreshReference {
				t.Errorf("remedy %v, want try later, then a fresh reference", f.Remedy.Kind())
			}
			// The server may have written a few socket buffers more than
			// the fetcher read.
			if got := sent.Load(); got > 16<<20 {
				t.Errorf("the server wrote %d bytes before the fetch stopped, want at most 16 MiB", got)
			}
			e.assertNothingKept(rec)
		})
	}
}

// TestWireLimitKeepsLegitimateGzip pins the other side of
// TestWireBoundedByDecodedLimits (F7): a well-formed gzip body within the
// call's max bytes is fetched, even when its encoding costs more than its
// content, as the largest gzip header does for a short payload, or a
// stream flushed every few bytes does for any. The first of these crashed
// the process once: its header was read before the first bound was set,
// which then lay below the bytes already read.
func TestWireLimitKeepsLegitimateGzip(t *testing.T) {
	// The largest header gzip writes: a 64 KiB extra field, and a name
	// and a comment at the 511 bytes Go's reader takes.
	var big bytes.Buffer
	z := gzip.NewWriter(&big)
	z.Extra = bytes.Repeat([]byte{'x'}, 65535)
	z.Name, z.Comment = strings.Repeat("n", 511), strings.Repeat("c", 511)
	z.Write([]byte("hello"))
	z.Close()
	plain := noise(900 << 10)
	var flushed bytes.Buffer
	z = gzip.NewWriter(&flushed)
	for p := plain; len(p) > 0; p = p[min(32, len(p)):] {
		z.Write(p[:min(32, len(p))])
		z.Flush()
	}
	z.Close()
	for _, tc := range []struct {
		name        string
		first, rest []byte // sent with a pause between them
		bytes       int64
		max         int64
		ceiling     int64 // zero for the default
	}{
		{"largest-header", big.Bytes(), gzipped(t, make([]byte, 100)), 105, 1000, 0},
		{"flushed", flushed.Bytes()[:flushed.Len()/2], flushed.Bytes()[flushed.Len()/2:], int64(len(plain)), 1 << 20, 0},
		// Near the host ceiling, the host's own bound on encoded bytes is
		// what applies.
		{"largest-header-small-ceiling", big.Bytes(), nil, 5, 0, 1000},
		{"flushed-near-ceiling", flushed.Bytes()[:flushed.Len()/2], flushed.Bytes()[flushed.Len()/2:], int64(len(plain)), 0, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(tc.first)
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
				w.Write(tc.rest)
			}, withConfig(func(c *Config) { c.Ceiling = tc.ceiling }))
			rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
			res, err := e.fetch(t.Context(), rec, Request{MaxBytes: tc.max})
			if err != nil || res.Bytes != tc.bytes {
				t.Errorf("fetch = %d bytes, %v; want %d bytes (%d encoded)", res.Bytes, err, tc.bytes, len(tc.first)+len(tc.rest))
			}
		})
	}
}

// TestWireLimitOnJoin: a caller that joins a download with a smaller max
// bytes, after the server has sent encoded bytes past what that max alone
// would allow, must not lower the bound below what was read (which
// crashed the process once) nor fail the first caller.
func TestWireLimitOnJoin(t *testing.T) {
	gate := make(chan struct{})
	head, tail := noise(256<<10), noise(256<<10+100)
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzipped(t, head))
		w.Write(bytes.Repeat(gzipped(t, nil), (2<<20)/20)) // 2 MiB that decode to nothing
		w.(http.Flusher).Flush()
		<-gate
		w.Write(gzipped(t, tail))
	}, withConfig(func(c *Config) { c.ChunkSize = 128 << 10 }))
	rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
	first := make(chan error, 1)
	go func() {
		res, err := e.fetch(context.Background(), rec, Request{MaxBytes: 1 << 20})
		if err == nil && res.Bytes != int64(len(head)+len(tail)) {
			err = fmt.Errorf("fetched %d bytes, want %d", res.Bytes, len(head)+len(tail))
		}
		first <- err
	}()
	time.Sleep(500 * time.Millisecond) // the head and the empty members are read
	second := make(chan error, 1)
	go func() {
		_, err := e.fetch(context.Background(), rec, Request{MaxBytes: 3<<17 + 1})
		second <- err
	}()
	time.Sleep(100 * time.Millisecond)
	close(gate)
	if err := <-first; err != nil {
		t.Errorf("the first caller: %v", err)
	}
	if err := <-second; !errors.Is(err, CodeTooLarge) {
		t.Errorf("the caller with the smaller max bytes: %v, want too large", err)
	}
}

// TestWireLimitWhenBudgetSpentElsewhere: the bound on encoded bytes is
// worked out from the budget left, which another download of the same
// server can spend meanwhile; the bound then lies below the encoded bytes
// read already. That must end the download with a failure, not crash the
// process (it did once).
func TestWireLimitWhenBudgetSpentElsewhere(t *testing.T) {
	chunk := gzipped(t, make([]byte, DefaultChunkSize))
	junk := bytes.Repeat(gzipped(t, nil), (8<<20)/20) // 8 MiB that decode to nothing
	spent := make(chan struct{})
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/other" {
			for range 60 {
				w.Write(chunk)
			}
			return
		}
		w.Write(chunk)
		w.Write(junk)
		w.Write(chunk)
		w.(http.Flusher).Flush()
		<-spent
		w.Write(chunk)
		w.Write(junk[:64<<10])
		w.Write(chunk)
	}, withConfig(func(c *Config) { c.Budget = 10 << 20 }))
	rec := e.ref(serverName, hblk("$ORIGIN/slow", ""))
	other := e.ref(serverName, hblk("$ORIGIN/other", ""))
	var got atomic.Int64
	done := make(chan error, 1)
	go func() {
		_, err := e.fetch(context.Background(), rec, Request{Progress: func(n, _ int64) { got.Store(n) }})
		done <- err
	}()
	for got.Load() < 2*DefaultChunkSize {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.fetch(context.Background(), other, Request{}); err != nil {
		t.Fatalf("the other reference: %v", err)
	}
	close(spent)
	err := <-done
	if !errors.Is(err, CodeBadEncoding) && !errors.Is(err, CodeOverBudget) {
		t.Errorf("the slow download: %v, want a bad-encoding or over-budget failure", err)
	}
	if cur, ok := e.reg.Lookup(rec.ID); !ok || cur.Copy != nil {
		t.Errorf("the slow download's record: %+v, %v; want it held, naming no copy", cur.Copy, ok)
	}
}
