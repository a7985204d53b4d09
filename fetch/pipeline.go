package fetch

import (
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// The body is read and checked by the download's goroutine exactly as one
// loop would: read a chunk (decoding gzip), count it against the ceilings,
// the budget and every caller's max bytes, ask about a never mark, report
// progress. Only a chunk that passed every check goes on, in order through
// a small ring of buffers, to two goroutines of the copy's own: the
// hasher, since hashing is the one step whose cost is the machine's
// hashing limit, and the store writer, since writing a file (about 25 ms
// of CPU per 64 MiB, more than half what hashing costs) held up the next
// read when the reading goroutine did it (BenchmarkFetch/64MiB-dirstore:
// 67–78 ms with the writes on the reading goroutine, 61–65 ms on their
// own, against 52–57 ms into the discarding store). So the next chunk is
// read while this one is hashed and stored (BenchmarkFetch/64MiB against
// BenchmarkBaseline/64MiB, which reads and hashes in one goroutine,
// measures what this pays). A buffer is filled again only once both have
// given it back. A failed store write ends the request, so the reading
// stops at once, even on a body that has stalled; the copy is discarded
// only once the writer has stopped. The digest is taken once the hasher
// has hashed the last chunk.

// ringBytes is about how much of a download waits between the reader and
// the hasher and writer: enough to ride out the uneven pace of network
// reads and of the scheduler, small enough to stay in cache.
// BenchmarkFetchChunk chose it: in interleaved runs on an idle machine,
// 1 MiB beat 256 KiB and 512 KiB clearly at every chunk size, and 2 MiB
// fell back (so again with the writer on its own goroutine). (A variable
// only so that the benchmark can try others.)
var ringBytes = 1 << 20

// ringDepth is how many chunks a download's ring holds: ringBytes in
// chunks, at least two (so reading and hashing overlap) and at most 32.
func ringDepth(chunk int) int { return min(max(ringBytes/chunk, 2), 32) }

// A span is a filled part of one of the ring's buffers; index -1 tells
// the hasher or the writer to stop.
type span struct{ i, n int }

// ring is the buffers and channels of one copy.
type ring struct {
	chunk  int
	bufs   [][]byte
	free   chan int       // buffers the download may fill
	hash   chan span      // checked buffers, in order, for the hasher
	store  chan span      // the same buffers, in order, for the writer
	owners []atomic.Int32 // per buffer: how many of the two still use it
}

// release gives buffer i back to the download once its last user is done.
func (r *ring) release(i int) {
	if r.owners[i].Add(-1) == 0 {
		r.free <- i
	}
}

// idle holds rings that finished copies gave back, so that a copy that
// starts soon after takes one instead of allocating a new one. A ring is
// held for keepIdle after it comes back and then only by weak pointer,
// which the garbage collector clears once it frees the ring. So a host
// that keeps fetching reuses its rings, however often the collector runs
// meanwhile, and one that stops fetching leaves them to the collector.
// With eight copies at once, holding them only by weak pointer let each
// collection free those between two copies: the host flow allocated 27 MB
// per run where one fetcher allocated 19 MB (BenchmarkHostFlow/fetchers=8,
// B/op; held this way, 18 MB for both). The heap a fetch holds still does
// not depend on the payload's size (TestHeapBounded). sync.Pool would not
// do: an object put on one processor's private slot is not found from
// another, so reuse would depend on scheduling.
var idle struct {
	sync.Mutex
	rings []idleRing  // the most recently given back last
	timer *time.Timer // pending release of held rings, or nil
}

// An idleRing is a ring in the idle list: held by r until keepIdle after
// it came back, and by the weak pointer after that.
type idleRing struct {
	r    *ring
	weak weak.Pointer[ring]
	back time.Time // when it was given back
}

// value returns the ring, or nil once the collector has freed it.
func (e idleRing) value() *ring {
	if e.r != nil {
		return e.r
	}
	return e.weak.Value()
}

// maxIdle bounds the idle list; the rings it names may be gone already,
// and a ring given back to a full list takes the place of the oldest.
const maxIdle = 16

// keepIdle is how long the idle list holds a ring it was given, about
// the longest pause between two fetches of a busy host. (A variable only
// so that the tests can shorten it.)
var keepIdle = time.Second

func getRing(chunk int) *ring {
	idle.Lock()
	for i := len(idle.rings) - 1; i >= 0; i-- {
		r := idle.rings[i].value()
		if r == nil || r.chunk != chunk || len(r.bufs) != ringDepth(chunk) {
			continue
		}
		idle.rings = slices.Delete(idle.rings, i, i+1)
		idle.Unlock()
		return fill(r)
	}
	// Drop the entries whose rings the collector freed.
	idle.rings = slices.DeleteFunc(idle.rings, func(e idleRing) bool { return e.value() == nil })
	idle.Unlock()
	depth := ringDepth(chunk)
	r := &ring{chunk: chunk, bufs: make([][]byte, depth), free: make(chan int, depth),
		hash: make(chan span, depth+1), store: make(chan span, depth+1), owners: make([]atomic.Int32, depth)}
	slab := make([]byte, depth*chunk)
	for i := range r.bufs {
		r.bufs[i] = slab[i*chunk : (i+1)*chunk : (i+1)*chunk]
	}
	return fill(r)
}

func fill(r *ring) *ring {
	for i := range r.bufs {
		r.free <- i
	}
	return r
}

// putRing gives r back once the hasher and the writer have stopped.
func putRing(r *ring) {
	for len(r.free) > 0 {
		<-r.free
	}
	idle.Lock()
	defer idle.Unlock()
	if len(idle.rings) >= maxIdle {
		// The newest ring is the likeliest to be taken next: it takes the
		// place of the oldest entry rather than being refused, so rings a
		// burst of copies left, perhaps of another chunk size, do not
		// keep every later one out (TestRingNewestKeptWhenListFull).
		idle.rings = slices.Delete(idle.rings, 0, len(idle.rings)-maxIdle+1)
	}
	idle.rings = append(idle.rings, idleRing{r: r, weak: weak.Make(r), back: time.Now()})
	if idle.timer == nil {
		idle.timer = time.AfterFunc(keepIdle, releaseIdle)
	}
}

// releaseIdle stops holding the rings that came back keepIdle ago or
// earlier, and runs again when the next held one is due.
func releaseIdle() {
	idle.Lock()
	defer idle.Unlock()
	idle.timer = nil
	next := time.Duration(-1)
	for i := range idle.rings {
		e := &idle.rings[i]
		if e.r == nil {
			continue
		}
		if left := keepIdle - time.Since(e.back); left > 0 {
			if next < 0 || left < next {
				next = left
			}
			continue
		}
		e.r = nil
	}
	if next >= 0 {
		idle.timer = time.AfterFunc(next, releaseIdle)
	}
}

// stream copies the body to its end, chunk by chunk, with a hasher and a
// store writer alongside. It returns once both have stopped, so c.h holds
// the hash of every byte stored and nothing writes to c.pend any more.
// The writer begins no write once the reading failed or every caller
// left, so a failure is answered after at most the write under way, as
// when the reading goroutine wrote each chunk itself.
func (c *copier) stream() *Failure {
	chunk := c.f.set.chunk
	r := getRing(chunk)
	var (
		hashed   = make(chan struct{})
		written  = make(chan struct{})
		storeErr atomic.Pointer[Failure] // why the writer stopped writing
	)
	go func() {
		defer close(hashed)
		var (
			ahead byte
			w     = newSpanWait()
		)
		for {
			sp := w.next(r.hash, r.store)
			if sp.i < 0 {
				c.ahead = ahead
				return
			}
			if !c.failed.Load() {
				ahead += hashAhead(c.h, r.bufs[sp.i][:sp.n])
			}
			r.release(sp.i)
		}
	}()
	go func() {
		defer close(written)
		for sp := range r.store {
			if sp.i < 0 {
				return
			}
			// Nothing more is written once a write failed, the reading
			// failed, or every caller left (as one loop would have stopped
			// there); the buffers still go back, so the reading never
			// waits for one.
			if storeErr.Load() == nil {
				if c.stopped() {
					storeErr.CompareAndSwap(nil, errAbandoned)
				} else if c.markedForShared() {
					// The chunks waiting for a slow store were read
					// before the mark: none goes to the shared store
					// now, and the reading, which may be waiting on a
					// server that sends nothing more, is ended.
					if storeErr.CompareAndSwap(nil, errMarkedWhileWriting) {
						c.fl.cancel()
					}
				} else if fail := c.write(r.bufs[sp.i][:sp.n]); fail != nil && storeErr.CompareAndSwap(nil, fail) {
					// The reading may be waiting on a body that sends
					// nothing more: end the request, so the failure is
					// answered now.
					c.fl.cancel()
				}
			}
			r.release(sp.i)
		}
	}()
	stopWatch := c.watchMark(&storeErr)
	fail := c.copyChunks(r, &storeErr)
	stopWatch()
	c.failed.Store(fail != nil)
	r.hash <- span{i: -1}
	r.store <- span{i: -1}
	<-hashed
	<-written
	// A write that failed or was left out fails the copy. A failed write
	// is the answer where it came first: copyChunks returns it when a
	// check fails after it, and a read it ended by ending the request
	// reads as abandoned. A check that failed first stays the answer, as
	// it is for a caller that joins the download meanwhile.
	werr := storeErr.Load()
	if werr == errMarkedWhileWriting && c.marked {
		werr = nil // the reading saw the mark as well, and fail is its answer
	}
	if werr != nil && (fail == nil || fail == errAbandoned && werr != errAbandoned) {
		fail = werr
	}
	if fail == errMarkedWhileWriting {
		// Only the writer saw the mark: it is answered here as the
		// reading would have answered it at its next chunk.
		fail = c.markLanded(!c.f.reg.MarkKnown(c.fl.t.rec.URI))
	}
	putRing(r)
	return fail
}

// spanWait takes the hasher's next span. When the ring is empty it tries
// again for a while before it parks, so long as its last wait ended in
// time: a parked goroutine's processor may go idle, and waking it costs
// more than the wait. It parks at once while chunks wait for the store
// writer, so that the writer can have its processor. On the test
// machine's virtual processors, in interleaved runs of six, the 64 MiB
// fetch took 46.9-50.9 ms this way against 50.6-54.3 ms parking at once,
// and the same fetch into a DirStore 55.6-59.1 against 57.0-61.5 ms
// (BenchmarkFetch/64MiB, /64MiB-dirstore). Trying again whatever the
// writer had waiting made the DirStore fetch slower instead (61.2-61.9
// against 59.1-60.8 ms): the tries kept the writer off the processor the
// hasher held. A download whose chunks come slower, as over a real
// network, parks at once after its first miss, until the reading has run
// ahead of the hasher for readyToTry chunks in a row
// (BenchmarkFetchSlowSource: the same CPU time as parking at once;
// TestSpanWaitBurstsTryOnce for a source that sends in bursts).
type spanWait struct {
	tries  int  // how often to try an empty ring again: hashSpins, or 0
	missed bool // a wait did not end within the tries, and since then
	ready  int  // fewer than readyToTry spans in a row were waiting
	tried  int  // tries made, for the tests
}

// newSpanWait returns the wait of a hasher that tries an empty ring again
// only when that can help: with one processor for Go (runtime.GOMAXPROCS,
// which a container's limit sets, not the machine's count) the reading
// cannot go on while the hasher tries.
func newSpanWait() spanWait {
	if runtime.GOMAXPROCS(0) == 1 {
		return spanWait{}
	}
	return spanWait{tries: hashSpins}
}

// hashSpins is how many times the hasher tries an empty ring again,
// yielding between tries, before it parks (tried: 100 gained little,
// 10,000 no more than 1,000).
const hashSpins = 1000

// readyToTry is how many spans in a row must be waiting for the hasher,
// after a wait that its tries did not end, before it tries again: a
// source that sends a burst and then stalls, again and again, would
// otherwise cost a round of tries, some 250 µs of CPU, at every burst.
const readyToTry = 8

// next returns the next span sent on ch. It parks at once while spans
// wait on writes, the writer's queue: the writer then has work, and a
// parked hasher leaves its processor free to take it.
func (w *spanWait) next(ch, writes chan span) span {
	select {
	case sp := <-ch:
		if w.missed {
			// The reading may have run ahead again: trying pays once
			// it stays ahead.
			if w.ready++; w.ready >= readyToTry {
				w.missed, w.ready = false, 0
			}
		}
		return sp
	default:
	}
	if w.missed {
		w.ready = 0
	} else if w.tries > 0 {
		for range w.tries {
			if len(writes) > 0 {
				break
			}
			w.tried++
			select {
			case sp := <-ch:
				return sp
			default:
				runtime.Gosched()
			}
		}
		w.missed = true
	}
	return <-ch
}

// markedForShared reports whether a never mark has landed on a copy going
// to the shared store while a host-only store exists: such a copy is
// discarded (see markLanded), so nothing more of it is written.
func (c *copier) markedForShared() bool {
	return c.f.hostStore != nil && !c.hostOnly && c.f.reg.MarkedHere(c.fl.t.rec.URI)
}

// markPoll is how often a download going to the shared store beside a
// host-only store asks whether a never mark has landed, besides asking at
// every chunk it reads and writes: a server that stalls, with every byte
// read so far written, would otherwise keep the partial copy in the
// shared store, and every caller waiting, until its deadline.
const markPoll = 20 * time.Millisecond

// watchMark asks [copier.markedForShared] every markPoll until the
// returned function is called, and on a mark stops the download as the
// store writer does. It watches only a copy that markedForShared
// concerns, and the returned function returns once it has stopped.
func (c *copier) watchMark(storeErr *atomic.Pointer[Failure]) (stop func()) {
	if c.f.hostStore == nil || c.hostOnly {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(markPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-c.fl.ctx.Done():
				return
			case <-t.C:
				if c.markedForShared() {
					if storeErr.CompareAndSwap(nil, errMarkedWhileWriting) {
						c.fl.cancel()
					}
					return
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// errMarkedWhileWriting is how the store writer, or watchMark, tells stream
// that the copy stopped for [copier.markedForShared]; stream answers it with
// markLanded's failure, so no caller sees it.
var errMarkedWhileWriting = fail(CodeWithheld, "", "a never mark landed while the copy was being written")

// stopped reports whether the copy will be discarded whatever the store
// does: the reading failed, or every caller left. The writer writes
// nothing more then.
func (c *copier) stopped() bool { return c.failed.Load() || c.fl.ctx.Err() != nil }

// hashAhead writes p to h a block at a time, and before each block reads
// one byte in every 64 (a cache line) of the block after it. The chunk was
// read from the network on another core, and SHA-256 stalls on each line
// it has to fetch from there; loads that do not depend on the hashing let
// the processor fetch the next block's lines while it hashes this one. On
// the 2-core test machine the 64 MiB fetch took 52.6–55.4 ms this way
// against 62.8–67.5 ms hashing each chunk whole (BenchmarkFetch/64MiB;
// 512-byte and 2 KiB blocks, and reading two blocks ahead, were slower).
// It returns the sum of the bytes it read, which the caller keeps so that
// the loads are not left out.
func hashAhead(h io.Writer, p []byte) byte {
	const block = 1 << 10
	var sum byte
	for len(p) > block {
		next := p[block:min(2*block, len(p))]
		for i := 0; i < len(next); i += 64 {
			sum += next[i]
		}
		h.Write(p[:block])
		p = p[block:]
	}
	h.Write(p)
	return sum
}

// copyChunks reads and checks the body chunk by chunk, and hands each
// chunk that passed every check to the hasher and the writer. It stops
// at the first failed check, at the end of the body, or once the writer
// has stopped writing (storeErr says why).
func (c *copier) copyChunks(r *ring, storeErr *atomic.Pointer[Failure]) *Failure {
	t := c.fl.t
	for {
		if fail := storeErr.Load(); fail != nil {
			return fail
		}
		i := <-r.free
		buf := r.bufs[i]
		room, wire := c.fl.readCap(len(buf))
		c.wire.limit = wire
		n, rerr := c.readChunk(buf[:room])
		if n == 0 {
			r.free <- i
		} else {
			c.n += int64(n)
			progress, fail := c.fl.account(int64(n))
			if fail == nil && !c.marked && c.f.reg.MarkedHere(t.rec.URI) {
				fail = c.markLanded(!c.f.reg.MarkKnown(t.rec.URI))
			}
			if fail != nil {
				r.free <- i // never handed on: nothing stores a chunk that failed
				if werr := storeErr.Load(); werr != nil && werr != errMarkedWhileWriting {
					return werr // the write failed first
				}
				return fail
			}
			r.owners[i].Store(2)
			r.hash <- span{i, n}
			r.store <- span{i, n}
			for _, p := range progress {
				c.f.report(p, c.n, t.claimed())
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			if werr := storeErr.Load(); werr != nil {
				return werr // the write failed first, and ended the request
			}
			return c.readFailure()
		}
	}
}
