package fetch

import (
	"fmt"
	"math"
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
