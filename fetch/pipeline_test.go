package fetch

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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

// slowStore is a MemoryStore whose every Write takes delay, as a store on
// the network or a busy disk does, and then fails when fail is set. While
// watch, if set, reports true as a Write begins, that Write is counted in
// after. hold, if set, runs as each Write begins, before the delay.
type slowStore struct {
	*MemoryStore
	delay time.Duration
	fail  bool
	watch func() bool
	after atomic.Int32
	hold  func()
}

func (s *slowStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	return &slowPending{Pending: p, s: s}, err
}

type slowPending struct {
	Pending
	s *slowStore
}

func (p *slowPending) Write(b []byte) (int, error) {
	if p.s.watch != nil && p.s.watch() {
		p.s.after.Add(1)
	}
	if p.s.hold != nil {
		p.s.hold()
	}
	time.Sleep(p.s.delay)
	if p.s.fail {
		return 0, errors.New("disk quota exceeded")
	}
	return p.Pending.Write(b)
}

// TestWriterStopsWhenCallersLeave pins F12 with the store written on a
// goroutine of its own: once the last caller's deadline passed, the
// writer begins at most the one write it was about to, not every chunk
// still queued for it. The server sends as fast as it can into a store
// that takes 50 ms a write.
func TestWriterStopsWhenCallersLeave(t *testing.T) {
	store := &slowStore{delay: 50 * time.Millisecond}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 16<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}, func(e *env) { store.MemoryStore = e.mem; e.store = store },
		withConfig(func(c *Config) { c.ChunkSize = 16 << 10 }))
	e.rec = e.ref(serverName, blk(""))
	// The caller has left once the flight counts no waiter: leaving
	// cancels the download under the same lock.
	store.watch = func() bool { return e.f.waiting(e.rec.ID) == 0 }
	_, err := e.fetch(context.Background(), e.rec, Request{Timeout: 200 * time.Millisecond})
	failureOf(t, err, CodeTimeout)
	if n := store.after.Load(); n > 1 {
		t.Errorf("%d store writes began after the caller left, want at most the one under way", n)
	}
	e.assertNothingKept(e.rec)
}

// TestStoreFailureOnStalledBody pins F10 with the store written on a
// goroutine of its own: a write that fails is answered as a storage
// failure at once, though the server has stopped sending and the reading
// goroutine waits on the body.
func TestStoreFailureOnStalledBody(t *testing.T) {
	store := &slowStore{fail: true}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // sends nothing more until the request ends
	}, func(e *env) { store.MemoryStore = e.mem; e.store = store })
	e.rec = e.ref(serverName, blk(""))
	_, err := e.fetch(context.Background(), e.rec, Request{Timeout: 30 * time.Second})
	failureOf(t, err, CodeStorage)
	e.assertNothingKept(e.rec)
}

// TestNoWriteAfterMarkObserved pins F18 where a mark lands while the
// writer is still busy with earlier chunks: once the reading has seen the
// mark and answered the model's caller, the store is handed nothing more,
// not even the rest of a chunk the writer had begun.
func TestNoWriteAfterMarkObserved(t *testing.T) {
	store := &slowStore{delay: 100 * time.Millisecond}
	fetchMarkedMidway(t, store, store, func(seen func() bool) { store.watch = seen })
}

// fetchMarkedMidway fetches for the model from a server that sends
// 16 KiB, waits until the reading has handed them on (it reports progress
// just after), has the record marked never and sends 4 KiB more. base is
// the slowStore within store; wire is given a report of whether the
// reading has seen the mark, which it has once the model's caller is
// gone. The fetch must be withheld, keep nothing, and begin no store
// write after the mark was seen.
func fetchMarkedMidway(t *testing.T, store Store, base *slowStore, wire func(seen func() bool)) {
	t.Helper()
	var (
		e      *env
		got    atomic.Int64
		marked atomic.Bool
	)
	e = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 16<<10))
		w.(http.Flusher).Flush()
		for got.Load() < 16<<10 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
		e.reg.MarkNever(context.Background(), e.rec.URI, serverName)
		marked.Store(true)
		w.Write(make([]byte, 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, func(e *env) { base.MemoryStore = e.mem; e.store = store })
	e.rec = e.ref(serverName, blk(""))
	wire(func() bool { return marked.Load() && e.f.waiting(e.rec.ID) == 0 })
	_, err := e.fetch(context.Background(), e.rec, Request{Progress: func(n, _ int64) { got.Store(n) }, Timeout: 30 * time.Second})
	failureOf(t, err, CodeWithheld)
	if n := base.after.Load(); n != 0 {
		t.Errorf("%d store writes began after the reading saw the mark, want none", n)
	}
	e.assertNothingKept(e.rec)
}

// slowBeginStore is a slowStore whose Begin returns only once open
// reports true, as a store whose Begin crosses a network and does not
// watch its context.
type slowBeginStore struct {
	*slowStore
	open func() bool
}

func (s *slowBeginStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	for deadline := time.Now().Add(10 * time.Second); !s.open() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return s.slowStore.Begin(ctx, name, mime)
}

// TestNoHeadWrittenAfterMarkObserved pins F18 for a copy still beginning
// when the reading sees a never mark: the first bytes, held back until
// the media type was known, are not handed to the store either.
func TestNoHeadWrittenAfterMarkObserved(t *testing.T) {
	store := &slowBeginStore{slowStore: &slowStore{}}
	fetchMarkedMidway(t, store, store.slowStore, func(seen func() bool) {
		store.open = seen // Begin returns once the reading has seen the mark
		store.watch = seen
	})
}

// TestNoHeadWrittenAfterCallerLeft pins F12 for a copy still beginning
// when the last caller's deadline passes: beginning was the call under
// way, and no write follows it.
func TestNoHeadWrittenAfterCallerLeft(t *testing.T) {
	store := &slowBeginStore{slowStore: &slowStore{}}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 16<<10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, func(e *env) { store.MemoryStore = e.mem; e.store = store })
	e.rec = e.ref(serverName, blk(""))
	var began atomic.Bool
	left := func() bool { return e.f.waiting(e.rec.ID) == 0 }
	store.open = func() bool { began.Store(true); return left() }
	store.watch = left
	_, err := e.fetch(context.Background(), e.rec, Request{Timeout: 200 * time.Millisecond})
	failureOf(t, err, CodeTimeout)
	if !began.Load() {
		t.Fatal("the copy never began")
	}
	if n := store.after.Load(); n != 0 {
		t.Errorf("%d store writes began after the caller left, want none", n)
	}
	e.assertNothingKept(e.rec)
}

// TestCeilingBeforeStoreFailure pins F5 and F14 with the store written on
// a goroutine of its own: when the reading passes the host ceiling while
// a write is still under way, and that write fails afterwards, the
// download's answer is the ceiling, the fact that came first and that
// will not change, for its caller as for a caller that joins it
// meanwhile.
func TestCeilingBeforeStoreFailure(t *testing.T) {
	// The store's first write signals writing, waits for release, and
	// fails.
	var once sync.Once
	writing, release := make(chan struct{}), make(chan struct{})
	store := &slowStore{fail: true, hold: func() {
		once.Do(func() { close(writing) })
		<-release
	}}
	e := newEnv(t, endlessAfter(writing), withCeiling(64<<10), withStore(store), func(e *env) { store.MemoryStore = e.mem },
		withConfig(func(c *Config) { c.ChunkSize = 16 << 10 }))
	rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
	first := make(chan error, 1)
	go func() {
		_, err := e.fetch(context.Background(), rec, Request{Timeout: 30 * time.Second})
		first <- err
	}()
	<-writing
	waitFor(t, "the reading to pass the ceiling", func() bool { return e.f.flightTotal(rec.ID) > 64<<10 })
	_, joined := e.fetch(context.Background(), rec, Request{Timeout: 30 * time.Second})
	close(release)
	failureOf(t, <-first, CodeHostCeiling)
	failureOf(t, joined, CodeHostCeiling)
	e.assertNothingKept(rec)
}

// TestSpanWaitTriesAgainOnlyAfterTimelyWaits pins how the hasher waits
// for its next chunk: it tries an empty ring again only while its waits
// end in time, parks at once after a wait that did not, and tries again
// once the reading has run ahead of it for readyToTry chunks in a row.
func TestSpanWaitTriesAgainOnlyAfterTimelyWaits(t *testing.T) {
	ch := make(chan span, readyToTry+1)
	w := spanWait{tries: 1}
	go func() {
		// After the one try: a miss.
		time.Sleep(50 * time.Millisecond)
		ch <- span{i: 1}
	}()
	if sp := w.next(ch, nil); sp.i != 1 || !w.missed {
		t.Fatalf("got span %d, missed %t; want span 1 after a miss", sp.i, w.missed)
	}
	// The reading runs ahead: spans wait in the ring.
	for i := range readyToTry {
		ch <- span{i: 2 + i}
	}
	for i := range readyToTry {
		sp := w.next(ch, nil)
		if want := i < readyToTry-1; sp.i != 2+i || w.missed != want {
			t.Fatalf("span %d waiting: got span %d, missed %t; want missed %t", i+1, sp.i, w.missed, want)
		}
	}
}

// TestSpanWaitBurstsTryOnce pins the cost of a source that sends a
// couple of chunks and then stalls, again and again: the hasher tries
// the empty ring again for at most the first two waits, not after every
// burst (each round of tries costs some 250 µs of CPU).
func TestSpanWaitBurstsTryOnce(t *testing.T) {
	const bursts = 10
	ch := make(chan span, 2)
	go func() {
		for range bursts {
			ch <- span{i: 1}
			ch <- span{i: 1}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	w := spanWait{tries: hashSpins}
	for range 2 * bursts {
		w.next(ch, nil)
	}
	if w.tried > 2*hashSpins {
		t.Errorf("the hasher tried the empty ring %d times over %d bursts; want at most %d", w.tried, bursts, 2*hashSpins)
	}
}

// TestSpanWaitParksWhileWritesWait pins that the hasher does not try an
// empty ring again while chunks wait for the store writer: it parks, so
// its processor can run the writer. With tries that never run out, a
// hasher that tried again would take the span the moment it came, and
// report no miss.
func TestSpanWaitParksWhileWritesWait(t *testing.T) {
	ch := make(chan span, 1)
	writes := make(chan span, 1)
	writes <- span{i: 0}
	w := spanWait{tries: math.MaxInt}
	go func() {
		time.Sleep(20 * time.Millisecond)
		ch <- span{i: 1}
	}()
	if sp := w.next(ch, writes); sp.i != 1 || !w.missed {
		t.Fatalf("got span %d, missed %t; want span 1 after parking at once", sp.i, w.missed)
	}
}

// waitingAbortStore is a MemoryStore whose copies' Abort returns only
// when its context ends, as a store discarding a copy over the network
// might wait.
type waitingAbortStore struct{ *MemoryStore }

func (s waitingAbortStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	return waitingAbort{p}, err
}

type waitingAbort struct{ Pending }

func (p waitingAbort) Abort(ctx context.Context) error {
	<-ctx.Done()
	p.Pending.Abort(context.Background())
	return ctx.Err()
}

// TestAbortContextEnds pins F12 for the discarding of a partial copy: the
// context the store's Abort gets ends after abortMax, so a caller whose
// deadline passed is answered even when the store waits for its context,
// and the log says the copy could not be discarded.
func TestAbortContextEnds(t *testing.T) {
	defer func(old time.Duration) { abortMax = old }(abortMax)
	abortMax = 100 * time.Millisecond
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // sends nothing more until the request ends
	}, func(e *env) { e.store = waitingAbortStore{e.mem} })
	e.rec = e.ref(serverName, blk(""))
	done := make(chan error, 1)
	go func() {
		_, err := e.f.Fetch(context.Background(), e.rec.ID, Request{Timeout: 50 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		failureOf(t, err, CodeTimeout)
	case <-time.After(10 * time.Second):
		t.Fatal("F12: the fetch is still waiting for the store's Abort 10 s after its 50 ms deadline")
	}
	if !strings.Contains(e.logs.String(), "could not discard an unfinished copy") {
		t.Errorf("the log does not say the copy could not be discarded:\n%s", e.logs.String())
	}
	e.assertNothingKept(e.rec)
}
