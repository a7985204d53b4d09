package fetch

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// tallyStore is a MemoryStore that counts the bytes handed to its copies
// and closes reached once they add up to at least want.
type tallyStore struct {
	*MemoryStore
	want    int
	reached chan struct{}

	mu   sync.Mutex
	n    int
	once sync.Once
}

func (s *tallyStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	return &tallyPending{Pending: p, s: s}, err
}

func (s *tallyStore) handed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

type tallyPending struct {
	Pending
	s *tallyStore
}

func (p *tallyPending) Write(b []byte) (int, error) {
	p.s.mu.Lock()
	p.s.n += len(b)
	n := p.s.n
	p.s.mu.Unlock()
	if n >= p.s.want {
		p.s.once.Do(func() { close(p.s.reached) })
	}
	return p.Pending.Write(b)
}

// TestNoChunkStoredAfterMark pins F18 where the store is written on a
// goroutine of its own: a chunk read after a never mark landed is not
// handed to the store, though the chunks before it may still be on their
// way there. The server sends 4 KiB, waits until the store holds them,
// has the record marked, and sends more; the store must end with exactly
// the first 4 KiB, aborted.
func TestNoChunkStoredAfterMark(t *testing.T) {
	const first = 4096
	var e *env
	store := &tallyStore{want: first, reached: make(chan struct{})}
	e = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, first))
		w.(http.Flusher).Flush()
		select {
		case <-store.reached:
		case <-time.After(10 * time.Second):
			t.Error("the first bytes never reached the store")
			return
		}
		e.reg.MarkNever(context.Background(), e.rec.URI, serverName)
		for range 64 {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				return
			}
		}
	}, func(e *env) { store.MemoryStore = e.mem; e.store = store })
	e.rec = e.ref(serverName, blk(""))
	_, err := e.fetch(context.Background(), e.rec, Request{})
	failureOf(t, err, CodeWithheld)
	if got := store.handed(); got != first {
		t.Errorf("the store was handed %d bytes, want the %d sent before the mark", got, first)
	}
	if s := e.saves(); len(s) != 0 {
		t.Errorf("%d copies saved, want none", len(s))
	}
}
