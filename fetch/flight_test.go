package fetch

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitFor polls until cond holds. It is a liveness guard, not a timing
// assertion: the deadline only keeps a broken build from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// gate is a handler that holds every response until released.
type gate struct {
	release chan struct{}
	closed  chan struct{} // closed when a held request's connection ends early
	once    sync.Once
	body    []byte
}

func newGate(b []byte) *gate {
	return &gate{release: make(chan struct{}), closed: make(chan struct{}), body: b}
}

func (g *gate) handler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "audio/wav")
	select {
	case <-g.release:
		w.Write(g.body)
	case <-r.Context().Done():
		g.once.Do(func() { close(g.closed) })
	}
}

// TestFiftyConcurrentFetches pins F17: fifty calls for one record make one
// request and all get the same answer.
func TestFiftyConcurrentFetches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    []byte
		wantErr error
	}{
		{"success", wavBody, nil},
		{"failure", wavBody[:5], ErrDigestMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(tc.body)
			e := newEnv(t, g.handler)
			rec := e.ref(serverName, blk(`,"digest":"`+wavDigest+`"`))
			const n = 50
			type out struct {
				res Result
				err error
			}
			outs := make([]out, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.f.Fetch(context.Background(), rec, Request{})
					outs[i] = out{res, err}
				}()
			}
			waitFor(t, "fifty waiters", func() bool { return e.f.waiting(rec.ID) == n })
			close(g.release)
			wg.Wait()
			if got := e.requests.Load(); got != 1 {
				t.Errorf("requests = %d, want 1", got)
			}
			for i, o := range outs {
				if tc.wantErr != nil {
					if !errors.Is(o.err, tc.wantErr) {
						t.Errorf("caller %d: err = %v, want %v", i, o.err, tc.wantErr)
					}
					continue
				}
				if o.err != nil {
					t.Fatalf("caller %d: %v", i, o.err)
				}
				if diff := cmp.Diff(outs[0].res, o.res); diff != "" {
					t.Errorf("caller %d's answer differs (-first +got):\n%s", i, diff)
				}
			}
			if tc.wantErr == nil && len(e.mem.Saves()) != 1 {
				t.Errorf("%d saves, want 1", len(e.mem.Saves()))
			}
			if tc.wantErr != nil {
				e.assertNothingKept(rec)
			}
		})
	}
}

// TestFlightOwnMaxBytes pins F17: a caller with a smaller max bytes gets
// its own too-large failure while the flight goes on for the others.
func TestFlightOwnMaxBytes(t *testing.T) {
	g := newGate(wavBody)
	e := newEnv(t, g.handler)
	rec := e.ref(serverName, blk(""))
	var small error
	var big Result
	var bigErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, small = e.f.Fetch(context.Background(), rec, Request{MaxBytes: 10}) }()
	go func() { defer wg.Done(); big, bigErr = e.f.Fetch(context.Background(), rec, Request{}) }()
	waitFor(t, "two waiters", func() bool { return e.f.waiting(rec.ID) == 2 })
	close(g.release)
	wg.Wait()
	f := failureOf(t, small, ErrTooLarge)
	// The response announces its length, so the small caller is answered
	// before a byte is read.
	if f.Code != CodeTooLarge || f.Limit != 10 || f.Got != int64(len(wavBody)) {
		t.Errorf("small caller: code %s, limit %d, got %d; want too-large, 10, %d", f.Code, f.Limit, f.Got, len(wavBody))
	}
	if bigErr != nil || big.Bytes != int64(len(wavBody)) {
		t.Errorf("large caller: %+v, %v", big, bigErr)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestFlightOwnDeadline pins F17: a caller whose deadline passes leaves
// with its own timeout; the flight continues for the caller still waiting.
func TestFlightOwnDeadline(t *testing.T) {
	g := newGate(wavBody)
	e := newEnv(t, g.handler)
	rec := e.ref(serverName, blk(""))
	shortDone := make(chan error, 1)
	var long Result
	var longErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); long, longErr = e.f.Fetch(context.Background(), rec, Request{}) }()
	waitFor(t, "the first waiter", func() bool { return e.f.waiting(rec.ID) == 1 })
	go func() {
		_, err := e.f.Fetch(context.Background(), rec, Request{Timeout: 20 * time.Millisecond})
		shortDone <- err
	}()
	f := failureOf(t, <-shortDone, ErrTimeout)
	if !f.Timeout() {
		t.Error("Timeout() = false for a timeout")
	}
	close(g.release)
	wg.Wait()
	if longErr != nil || long.Bytes != int64(len(wavBody)) {
		t.Errorf("the caller still waiting got %+v, %v", long, longErr)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestLastCallerClosesConnection pins F6 and vector 10: when no caller is
// left the transfer ends and the server sees its connection closed.
func TestLastCallerClosesConnection(t *testing.T) {
	g := newGate(wavBody)
	e := newEnv(t, g.handler)
	rec := e.ref(serverName, blk(""))
	_, err := e.f.Fetch(context.Background(), rec, Request{Timeout: 20 * time.Millisecond})
	failureOf(t, err, ErrTimeout)
	select {
	case <-g.closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never saw the connection close")
	}
	e.assertNothingKept(rec)
}

// TestAbortStreamClosesConnection pins vector 10's abortStream: a stream
// past max bytes is cut, and the server's writes fail.
func TestAbortStreamClosesConnection(t *testing.T) {
	stopped := make(chan struct{})
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		buf := make([]byte, 32)
		for range 1 << 20 {
			if _, err := w.Write(buf); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		t.Error("the server wrote 32 MiB into an aborted stream")
	})
	rec := e.ref(serverName, blk(`,"sizeBytes":1`))
	_, err := e.f.Fetch(context.Background(), rec, Request{MaxBytes: 64})
	// The call's max bytes is what stops it (the host ceiling is far
	// off), one byte past the limit.
	if f := failureOf(t, err, ErrTooLarge); f.Code != CodeTooLarge || f.Limit != 64 || f.Got != 65 {
		t.Errorf("code %s, limit %d, got %d; want too-large, 64, 65", f.Code, f.Limit, f.Got)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream was never closed")
	}
}

// TestHeapBounded pins F6's memory bound: heap growth for a 64 MiB fetch
// stays a small multiple of a 1 MiB fetch's (a ratio, not a time).
func TestHeapBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves 64 MiB; skipped in -short and under the race detector")
	}
	measure := func(size int) uint64 {
		payload := make([]byte, size)
		store := &discardStore{}
		e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			for off := 0; off < len(payload); off += 32 << 10 {
				w.Write(payload[off:min(off+32<<10, len(payload))])
			}
		}, withStore(store), func(e *env) { e.mem = nil })
		// One warm-up fetch so connection setup is not counted.
		warm := e.ref(serverName, blkURI("$ORIGIN/warm", ""))
		if _, err := e.f.Fetch(context.Background(), warm, Request{MaxBytes: -1}); err != nil {
			t.Fatal(err)
		}
		rec := e.ref(serverName, blk(""))
		stored := store.n.Load()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := e.f.Fetch(context.Background(), rec, Request{MaxBytes: -1})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		// The measure means something only if the whole payload went
		// through the fetcher into the store.
		if got := store.n.Load() - stored; res.Bytes != int64(size) || got != int64(size) {
			t.Fatalf("a %d-byte fetch returned %d bytes and stored %d", size, res.Bytes, got)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small := measure(1 << 20)
	large := measure(64 << 20)
	t.Logf("allocated per fetch: 1 MiB payload %d B, 64 MiB payload %d B", small, large)
	if large > 4*small+256<<10 {
		t.Errorf("a 64 MiB fetch allocated %d B against %d B for 1 MiB: memory grows with the payload", large, small)
	}
}
