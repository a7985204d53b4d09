package fetch

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/refs"
)

// gatedStore is a MemoryStore whose Commit waits for open to be closed.
// With honourCtx it gives up when the fetcher cancels the commit, as a
// store uploading to object storage would; without it it ignores its
// context, as a store that cannot be interrupted does.
type gatedStore struct {
	*MemoryStore
	honourCtx bool
	entered   chan struct{} // receives once a Commit has begun
	open      chan struct{}

	mu       sync.Mutex
	canceled int // commits that ended because their context did
}

func newGatedStore(honourCtx bool) *gatedStore {
	return &gatedStore{MemoryStore: NewMemoryStore(), honourCtx: honourCtx,
		entered: make(chan struct{}, 8), open: make(chan struct{})}
}

func (s *gatedStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	return beginWrapped(ctx, s.MemoryStore, name, mime, func(p Pending) Pending { return &gatedPending{Pending: p, s: s} })
}

type gatedPending struct {
	Pending
	s *gatedStore
}

func (p *gatedPending) Commit(ctx context.Context) (string, error) {
	p.s.entered <- struct{}{}
	if p.s.honourCtx {
		select {
		case <-p.s.open:
		case <-ctx.Done():
			p.s.mu.Lock()
			p.s.canceled++
			p.s.mu.Unlock()
			return "", ctx.Err()
		}
	} else {
		<-p.s.open
	}
	return p.Pending.Commit(ctx)
}

// withGated makes env's store s, keeping env's MemoryStore for the checks.
func withGated(s *gatedStore) func(*env) {
	return func(e *env) { e.mem, e.store = s.MemoryStore, s }
}

// TestCallerLeavesDuringCommit pins F12 and the promise of Fetch's doc that
// nothing of a failed download stays in the store. The caller's deadline
// passes while the store commits the copy. A store that honours its
// context is told to stop, and the caller gets its timeout without
// waiting for the store; a store that ignores its context commits anyway,
// and the fetcher removes the copy and records none before answering.
func TestCallerLeavesDuringCommit(t *testing.T) {
	for _, honour := range []bool{true, false} {
		name := map[bool]string{true: "store-honours-context", false: "store-ignores-context"}[honour]
		t.Run(name, func(t *testing.T) {
			s := newGatedStore(honour)
			e := newEnv(t, body(wavBody, "audio/wav"), withGated(s))
			rec := e.ref(serverName, blk(`,"digest":"`+wavDigest+`"`))
			if !honour {
				go func() {
					<-s.entered
					// Opened only once the caller has left the flight.
					for e.f.waiting(rec.ID) != 0 {
						time.Sleep(time.Millisecond)
					}
					close(s.open)
				}()
			} else {
				// A fetcher that never cancels the commit gets it in the
				// end, and the test fails instead of hanging.
				go func() {
					time.Sleep(3 * time.Second)
					close(s.open)
				}()
			}
			_, err := e.fetch(context.Background(), rec, Request{Timeout: 100 * time.Millisecond})
			failureOf(t, err, CodeTimeout)
			if honour {
				s.mu.Lock()
				canceled := s.canceled
				s.mu.Unlock()
				if canceled != 1 {
					t.Errorf("F12: the store's commit was not told the caller left (%d commits canceled)", canceled)
				}
			}
			e.assertNothingKept(rec)
		})
	}
}

// endingFlight starts a first caller with req, whose deadline passes while
// s holds the commit of its download, waits until it has left the flight,
// then starts a second caller for the model with a 5 s deadline. The
// channels get each caller's error.
func endingFlight(e *env, s *gatedStore, rec refs.Record, req Request) (first, second <-chan error) {
	call := func(req Request) <-chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := e.f.Fetch(context.Background(), rec.ID, req)
			ch <- err
		}()
		return ch
	}
	first = call(req)
	<-s.entered
	for e.f.waiting(rec.ID) != 0 { // the first caller has left
		time.Sleep(time.Millisecond)
	}
	return first, call(Request{Timeout: 5 * time.Second})
}

// TestOneDownloadWhileCommitEnds pins F17: while the download its last
// caller left is still ending in the store, a new caller for the same
// record waits for it rather than starting a second download of the same
// record beside it (whose copy the first could overwrite or orphan).
func TestOneDownloadWhileCommitEnds(t *testing.T) {
	s := newGatedStore(false)
	e := newEnv(t, body(wavBody, "audio/wav"), withGated(s))
	rec := e.ref(serverName, blk(""))
	first, second := endingFlight(e, s, rec, Request{Timeout: 100 * time.Millisecond})
	// Long enough for a second download to reach the server if one were
	// started; the first one's commit is still held.
	time.Sleep(200 * time.Millisecond)
	if n := e.requests.Load(); n != 1 {
		t.Errorf("F17: %d requests for one record while its first download was ending, want 1", n)
	}
	close(s.open)
	failureOf(t, <-first, CodeTimeout)
	if err := <-second; err != nil {
		t.Fatalf("the second caller, after the first download ended: %v", err)
	}
	if got := len(e.saves()); got != 1 {
		t.Errorf("the store holds %d copies of one record, want 1", got)
	}
}

// TestEndingFlightThenNever pins F18 with F17: a caller for the model that
// waits for a download every caller left is refused once the record is
// marked never meanwhile, and is not served the copy that download keeps
// for the host.
func TestEndingFlightThenNever(t *testing.T) {
	s := newGatedStore(false)
	e := newEnv(t, body(wavBody, "audio/wav"), withGated(s))
	rec := e.ref(serverName, blk(""))
	first, second := endingFlight(e, s, rec, Request{Timeout: 50 * time.Millisecond, ForHost: true})
	time.Sleep(50 * time.Millisecond)
	if _, ok := e.reg.MarkNever(context.Background(), rec.URI, serverName); !ok {
		t.Fatal("MarkNever refused")
	}
	close(s.open)
	<-first
	failureOf(t, <-second, CodeWithheld)
}

// churnStore is a MemoryStore whose commits take a random few
// milliseconds, stopping early on their context or not, and which counts
// the copies in progress at once.
type churnStore struct {
	*MemoryStore
	honourCtx      bool
	open, mostOpen atomic.Int64
}

func (s *churnStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	return beginWrapped(ctx, s.MemoryStore, name, mime, func(p Pending) Pending {
		n := s.open.Add(1)
		for m := s.mostOpen.Load(); n > m && !s.mostOpen.CompareAndSwap(m, n); m = s.mostOpen.Load() {
		}
		return &churnPending{Pending: p, s: s}
	})
}

type churnPending struct {
	Pending
	s     *churnStore
	ended atomic.Bool
}

func (p *churnPending) end() {
	if p.ended.CompareAndSwap(false, true) {
		p.s.open.Add(-1)
	}
}

func (p *churnPending) Commit(ctx context.Context) (string, error) {
	defer p.end()
	wait := time.Duration(rand.IntN(30)) * time.Millisecond
	if p.s.honourCtx {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	} else {
		time.Sleep(wait)
	}
	return p.Pending.Commit(ctx)
}

func (p *churnPending) Abort(ctx context.Context) error {
	defer p.end()
	return p.Pending.Abort(ctx)
}

// TestFlightChurn pins F17 and the no-copy-after-failure promise under
// churn: eight callers with deadlines of a few milliseconds, some for the
// host, against commits of random length. One record never has two copies
// in progress, the store keeps at most one, and none when every caller
// failed; no caller waits forever.
func TestFlightChurn(t *testing.T) {
	for _, honour := range []bool{true, false} {
		for range 10 {
			s := &churnStore{MemoryStore: NewMemoryStore(), honourCtx: honour}
			e := newEnv(t, body(wavBody, "audio/wav"), func(e *env) { e.mem, e.store = s.MemoryStore, s })
			rec := e.ref(serverName, blk(""))
			var wg sync.WaitGroup
			var served atomic.Int64
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
					req := Request{Timeout: time.Duration(1+rand.IntN(25)) * time.Millisecond, ForHost: rand.IntN(2) == 0}
					done := make(chan error, 1)
					go func() {
						_, err := e.f.Fetch(context.Background(), rec.ID, req)
						done <- err
					}()
					select {
					case err := <-done:
						if err == nil {
							served.Add(1)
						}
					case <-time.After(10 * time.Second):
						t.Errorf("a caller with a %v deadline still waits (store honours its context: %t)", req.Timeout, honour)
					}
				}()
			}
			wg.Wait()
			if n := s.mostOpen.Load(); n > 1 {
				t.Errorf("F17: %d copies of one record in progress at once", n)
			}
			switch saved := len(e.saves()); {
			case saved > 1:
				t.Errorf("the store holds %d copies of one record", saved)
			case served.Load() == 0 && saved != 0:
				t.Errorf("every caller failed, yet the store holds %d copy (store honours its context: %t)", saved, honour)
			}
		}
	}
}
