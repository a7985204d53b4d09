package fetch

import (
	"context"
	"sync"
	"testing"
	"time"
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
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	if err != nil {
		return nil, err
	}
	return &gatedPending{Pending: p, s: s}, nil
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

// TestOneDownloadWhileCommitEnds pins F17: while the download its last
// caller left is still ending in the store, a new caller for the same
// record waits for it rather than starting a second download of the same
// record beside it (whose copy the first could overwrite or orphan).
func TestOneDownloadWhileCommitEnds(t *testing.T) {
	s := newGatedStore(false)
	e := newEnv(t, body(wavBody, "audio/wav"), withGated(s))
	rec := e.ref(serverName, blk(""))
	first := make(chan error, 1)
	go func() {
		_, err := e.f.Fetch(context.Background(), rec.ID, Request{Timeout: 100 * time.Millisecond})
		first <- err
	}()
	<-s.entered
	for e.f.waiting(rec.ID) != 0 { // the first caller has left
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() {
		_, err := e.f.Fetch(context.Background(), rec.ID, Request{Timeout: 5 * time.Second})
		second <- err
	}()
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
