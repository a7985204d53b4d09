package fetch

import (
	"context"
	"errors"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
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
		{"failure", wavBody[:5], CodeDigestMismatch},
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
					res, err := e.fetch(context.Background(), rec, Request{})
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
	go func() { defer wg.Done(); _, small = e.fetch(context.Background(), rec, Request{MaxBytes: 10}) }()
	go func() { defer wg.Done(); big, bigErr = e.fetch(context.Background(), rec, Request{}) }()
	waitFor(t, "two waiters", func() bool { return e.f.waiting(rec.ID) == 2 })
	close(g.release)
	wg.Wait()
	f := failureOf(t, small, CodeTooLarge)
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
	go func() { defer wg.Done(); long, longErr = e.fetch(context.Background(), rec, Request{}) }()
	waitFor(t, "the first waiter", func() bool { return e.f.waiting(rec.ID) == 1 })
	go func() {
		_, err := e.fetch(context.Background(), rec, Request{Timeout: 20 * time.Millisecond})
		shortDone <- err
	}()
	f := failureOf(t, <-shortDone, CodeTimeout)
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
	_, err := e.fetch(context.Background(), rec, Request{Timeout: 20 * time.Millisecond})
	failureOf(t, err, CodeTimeout)
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
	_, err := e.fetch(context.Background(), rec, Request{MaxBytes: 64})
	// The call's max bytes is what stops it (the host ceiling is far
	// off), one byte past the limit.
	if f := failureOf(t, err, CodeTooLarge); f.Code != CodeTooLarge || f.Limit != 64 || f.Got != 65 {
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
		if _, err := e.fetch(context.Background(), warm, Request{MaxBytes: DefaultCeiling}); err != nil {
			t.Fatal(err)
		}
		rec := e.ref(serverName, blk(""))
		stored := store.n.Load()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := e.f.Fetch(context.Background(), rec.ID, Request{MaxBytes: DefaultCeiling})
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

// TestForHost pins F18's host request: a request for the host itself
// fetches a reference a server marked never and records the copy, but no
// request for the model is served from it, and the model's own request is
// refused before dialing.
func TestForHost(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, body(wavBody, "audio/wav"))
	rec := e.ref(serverName, blk(`,"sizeBytes":19,"disposition":"never","digest":"`+wavDigest+`"`))
	_, err := e.fetch(ctx, rec, Request{})
	failureOf(t, err, CodeWithheld)
	if n := e.requests.Load(); n != 0 {
		t.Fatalf("the model's request dialed: %d requests", n)
	}

	res, err := e.fetch(ctx, rec, Request{ForHost: true})
	if err != nil {
		t.Fatalf("the host's own request failed: %v", err)
	}
	want := Result{Copy: convert.Copy{Path: rec.ID + ".wav", Bytes: 19, MimeType: "audio/wav", DigestVerified: true}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	cur, _ := e.reg.Lookup(rec.ID)
	if !cur.Never || cur.Copy == nil || *cur.Copy != res.Copy {
		t.Errorf("record after the host's fetch: never %t, copy %+v; want marked, with the copy", cur.Never, cur.Copy)
	}

	// The model is not served the host's copy, and nothing is dialed for it.
	_, err = e.fetch(ctx, rec, Request{})
	failureOf(t, err, CodeWithheld)
	if r := e.f.Refusal(e.entry(rec)); r != failWithheld(serverName).Clause {
		t.Errorf("Refusal after the host's fetch = %q, want the withheld clause", r)
	}
	// The host is, without dialing.
	again, err := e.fetch(ctx, rec, Request{ForHost: true})
	want.FromCopy = true
	if err != nil || again != want {
		t.Errorf("the host's second request = %+v, %v; want %+v", again, err, want)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	if spent, _ := e.f.Budget(serverName); spent != 19 {
		t.Errorf("budget spent = %d, want 19", spent)
	}
}

// TestForHostSharesFlight pins F17 and F18 together: a host request and a
// model request for one record share one download and one budget; when a
// never mark lands during it, the model's caller gets a withheld failure
// and the host's caller the copy, recorded on the marked record.
func TestForHostSharesFlight(t *testing.T) {
	g := newGate(wavBody)
	e := newEnv(t, g.handler)
	rec := e.ref(serverName, blk(""))
	hostRes, hostErr, modErr := markDuringSharedFlight(t, e, g, rec)

	if f := failureOf(t, modErr, CodeWithheld); f.Clause != failWithheldDuring(serverName).Clause {
		t.Errorf("the model's caller: %q, want the clause for a mark during the fetch", f.Clause)
	}
	if hostErr != nil || hostRes.Bytes != int64(len(wavBody)) || hostRes.FromCopy {
		t.Fatalf("the host's caller got %+v, %v", hostRes, hostErr)
	}
	cur, _ := e.reg.Lookup(rec.ID)
	if !cur.Never || cur.Copy == nil || *cur.Copy != hostRes.Copy {
		t.Errorf("record: never %t, copy %+v; want marked, with the host's copy", cur.Never, cur.Copy)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	if spent, _ := e.f.Budget(serverName); spent != int64(len(wavBody)) {
		t.Errorf("budget spent = %d, want %d: one download, one charge", spent, len(wavBody))
	}
	if s := e.saves(); len(s) != 1 {
		t.Errorf("%d saves, want the host's one", len(s))
	}
}

// markDuringSharedFlight starts a host's and a model's fetch of rec, which
// share one download that g holds, marks rec never once both wait,
// releases the body and returns what each caller got.
func markDuringSharedFlight(t *testing.T, e *env, g *gate, rec refs.Record) (hostRes Result, hostErr, modErr error) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); hostRes, hostErr = e.fetch(ctx, rec, Request{ForHost: true}) }()
	go func() { defer wg.Done(); _, modErr = e.fetch(ctx, rec, Request{}) }()
	waitFor(t, "two waiters", func() bool { return e.f.waiting(rec.ID) == 2 })
	e.reg.MarkNever(ctx, rec.URI, serverName)
	close(g.release)
	wg.Wait()
	return hostRes, hostErr, modErr
}

// TestForHostMarkWhileSaving pins F18 for a shared flight whose mark
// lands as the copy is committed: the host's caller gets the copy, the
// model's caller a withheld failure.
func TestForHostMarkWhileSaving(t *testing.T) {
	ctx := context.Background()
	g := newGate(wavBody)
	e := newEnv(t, g.handler, func(e *env) { e.store = &markingStore{MemoryStore: e.mem, e: e, at: "commit"} })
	e.rec = e.ref(serverName, blk(""))
	var (
		wg              sync.WaitGroup
		hostRes         Result
		hostErr, modErr error
	)
	wg.Add(2)
	go func() { defer wg.Done(); hostRes, hostErr = e.fetch(ctx, e.rec, Request{ForHost: true}) }()
	go func() { defer wg.Done(); _, modErr = e.fetch(ctx, e.rec, Request{}) }()
	waitFor(t, "two waiters", func() bool { return e.f.waiting(e.rec.ID) == 2 })
	close(g.release)
	wg.Wait()
	failureOf(t, modErr, CodeWithheld)
	if hostErr != nil || hostRes.Bytes != int64(len(wavBody)) {
		t.Fatalf("the host's caller got %+v, %v", hostRes, hostErr)
	}
	if cur, _ := e.reg.Lookup(e.rec.ID); !cur.Never || cur.Copy == nil || *cur.Copy != hostRes.Copy {
		t.Errorf("record: never %t, copy %+v; want marked, with the host's copy", cur.Never, cur.Copy)
	}
}

// TestModelNotServedHostCopy pins F18 where a model's request passed the
// never check just before a host's flight saved a copy of the marked
// record: the model's caller is not served that copy.
func TestModelNotServedHostCopy(t *testing.T) {
	ctx := context.Background()
	var e *env
	var first atomic.Bool
	e = newEnv(t, body(wavBody, "audio/wav"), func(e *env) {
		e.lookup = func(string) {
			// The model's request has passed the never check and is
			// looking its server up; meanwhile the record is marked and
			// the host fetches it for itself (whose own lookup passes).
			if first.CompareAndSwap(false, true) {
				e.reg.MarkNever(ctx, e.rec.URI, serverName)
				if _, err := e.f.Fetch(ctx, e.rec.ID, Request{ForHost: true}); err != nil {
					t.Errorf("the host's fetch failed: %v", err)
				}
			}
		}
	})
	e.rec = e.ref(serverName, blk(""))
	res, err := e.fetch(ctx, e.rec, Request{})
	if err == nil {
		t.Fatalf("the model's caller was served %+v, a copy of a record marked never", res)
	}
	failureOf(t, err, CodeWithheld)
	if cur, _ := e.reg.Lookup(e.rec.ID); cur.Copy == nil {
		t.Error("the host's copy was not recorded")
	}
	// The model's request stops before a second request to the server.
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want only the host's one", n)
	}
}

// TestProgressPanics pins that a host's progress callback that panics
// neither crashes the process nor stops the download.
func TestProgressPanics(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"))
	rec := e.ref(serverName, blk(""))
	res, err := e.fetch(context.Background(), rec, Request{Progress: func(int64, int64) { panic("host bug") }})
	if err != nil || res.Bytes != int64(len(wavBody)) {
		t.Fatalf("fetch = %+v, %v; want the payload despite the panicking callback", res, err)
	}
	if !strings.Contains(e.logs.String(), "progress callback panicked") {
		t.Errorf("the panic was not logged:\n%s", e.logs)
	}
}

// TestProgress pins Request.Progress: it is called as bytes arrive with
// increasing totals that end at the payload's size, and with the claimed
// size, or -1 for a reference that claims none.
func TestProgress(t *testing.T) {
	const size = 10000
	for _, tt := range []struct {
		name    string
		extra   string
		claimed int64
	}{
		{"claimed", `,"sizeBytes":10000`, size},
		{"claimed-wrong", `,"sizeBytes":12345`, 12345},
		{"unclaimed", "", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, chunked(size, 'a'), withConfig(func(c *Config) { c.ChunkSize = 1024 }))
			rec := e.ref(serverName, blk(tt.extra))
			var (
				mu    sync.Mutex
				calls [][2]int64
			)
			progress := func(got, claimed int64) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, [2]int64{got, claimed})
			}
			res, err := e.fetch(context.Background(), rec, Request{Progress: progress})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) < size/1024 {
				t.Fatalf("progress called %d times for %d bytes in 1,024-byte chunks", len(calls), size)
			}
			last := int64(0)
			for i, c := range calls {
				if c[0] <= last {
					t.Errorf("call %d: total %d after %d, want an increase", i, c[0], last)
				}
				if c[1] != tt.claimed {
					t.Errorf("call %d: claimed %d, want %d", i, c[1], tt.claimed)
				}
				last = c[0]
			}
			if last != size || res.Bytes != size {
				t.Errorf("last total %d, result %d bytes; want %d", last, res.Bytes, size)
			}
		})
	}
}

// countingStore is a DirStore that counts the copies begun, and tells
// began (without blocking) each time.
type countingStore struct {
	*DirStore
	begun atomic.Int32
	began chan struct{}
}

func (s *countingStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	s.begun.Add(1)
	select {
	case s.began <- struct{}{}:
	default:
	}
	return s.DirStore.Begin(ctx, name, mime)
}

// TestNoPartialCopyAfterFailure pins F6 and F22 in time: the moment Fetch
// returns a failure, nothing of the download is left in the store, for a
// caller that left on its deadline and for a stream cut at max bytes. The
// server sends a first part and holds the rest until the store has begun
// the copy, so there is a partial copy to clean up.
func TestNoPartialCopyAfterFailure(t *testing.T) {
	for _, tt := range []struct {
		name string
		rest func(w http.ResponseWriter, r *http.Request)
		req  Request
		code Code
	}{
		{"deadline", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			Request{Timeout: 50 * time.Millisecond}, CodeTimeout},
		{"over-max-bytes", func(w http.ResponseWriter, r *http.Request) {
			for range 256 {
				if _, err := w.Write(make([]byte, 4096)); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}, Request{MaxBytes: 8192}, CodeTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ds, err := NewDirStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			store := &countingStore{DirStore: ds, began: make(chan struct{}, 1)}
			e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				if sendThenWait(w, r, 4096, store.began) {
					tt.rest(w, r)
				}
			}, withStore(store), func(e *env) { e.mem = nil })
			rec := e.ref(serverName, blk(""))
			const n = 50
			for i := range n {
				select {
				case <-store.began:
				default:
				}
				_, err := e.fetch(context.Background(), rec, tt.req)
				entries, rerr := os.ReadDir(dir)
				if rerr != nil {
					t.Fatal(rerr)
				}
				for _, d := range entries {
					if strings.HasPrefix(d.Name(), ".tmp-") {
						t.Fatalf("fetch %d: %s was in the store when Fetch returned", i, d.Name())
					}
					t.Errorf("fetch %d: %s is in the store after a failure", i, d.Name())
				}
				failureOf(t, err, tt.code)
			}
			// Without copies begun, an empty directory proves nothing. Only
			// a deadline can pass before the copy is begun.
			begun := store.begun.Load()
			t.Logf("%d of %d fetches began a copy", begun, n)
			if begun == 0 || tt.code == CodeTooLarge && begun != n {
				t.Fatalf("%d of %d fetches began a copy", begun, n)
			}
		})
	}
}

// TestRefusalSeesMarkAfterEviction attacks the one registry read Refusal
// now makes (N1, N7, N8): a server marks a uri never, the record is
// evicted, and the uri comes back in another spelling, from serverless
// content or from the same server without a never. The new record must
// read marked, so Refusal gives the withheld clause and a model's fetch
// is refused without a request.
func TestRefusalSeesMarkAfterEviction(t *testing.T) {
	for _, tc := range []struct {
		name, server, block string
	}{
		{"same-server-respelled", serverName, `{"type":"resource","uri":"$ORIGIN/mcpl/A.wav?sig=1#frag"}`},
		{"serverless-respelled", "", `{"type":"resource","uri":"HTTP://$HOST/mcpl/%41.wav?sig=1"}`},
		{"other-server-exact", "other", `{"type":"resource","uri":"$ORIGIN/mcpl/A.wav?sig=1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, body([]byte("RIFF"), "audio/wav"), func(e *env) { e.regCfg.Capacity = 1 })
			e.extra["other"] = Server{Origin: e.srv.URL + "/mcpl"}
			ctx := t.Context()
			marked := e.ref(serverName, `{"type":"resource","uri":"$ORIGIN/mcpl/A.wav?sig=1","disposition":"never"}`)
			e.ref(serverName, `{"type":"resource","uri":"$ORIGIN/mcpl/B.wav"}`) // evicts the marked record
			if _, ok := e.reg.Lookup(marked.ID); ok {
				t.Fatal("setup: the marked record was not evicted")
			}
			again := e.ref(tc.server, tc.block)
			if again.ID == marked.ID {
				t.Fatal("setup: the evicted id came back")
			}
			if r := e.f.Refusal(e.entry(again)); r != failWithheld(again.Server()).Clause {
				t.Errorf("N7: Refusal of the re-registered uri = %q, want the withheld clause", r)
			}
			before := e.requests.Load()
			_, err := e.fetch(ctx, again, Request{})
			failureOf(t, err, CodeWithheld)
			if n := e.requests.Load() - before; n != 0 {
				t.Errorf("N1: a withheld fetch made %d requests", n)
			}
		})
	}
}
