package fetch

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
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
