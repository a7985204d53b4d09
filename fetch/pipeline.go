package fetch

import (
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"weak"
)

// The body is copied by the download's goroutine exactly as one loop
// would: read a chunk (decoding gzip), count it against the ceilings, the
// budget and every caller's max bytes, ask about a never mark, write it to
// the store, report progress. Only the hashing, the one step whose cost is
// the machine's hashing limit, runs on a goroutine of its own, fed the
// chunks in order through a small ring of buffers, so the next chunk is
// read and stored while this one is hashed (BenchmarkFetch/64MiB against
// BenchmarkBaseline/64MiB, which reads and hashes in one goroutine, and
// BenchmarkFetch/64MiB-dirstore measure what this pays). Every check
// stays where and when it was; the digest is taken once the hasher has
// hashed the last chunk.

// ringBytes is about how much of a download waits between the reader and
// the hasher: enough to ride out the uneven pace of network reads and of
// the scheduler, small enough to stay in cache. BenchmarkFetchChunk chose
// it: in interleaved runs on an idle machine, 1 MiB beat 256 KiB and
// 512 KiB clearly at every chunk size, and 2 MiB fell back. (A variable
// only so that the benchmark can try others.)
var ringBytes = 1 << 20

// ringDepth is how many chunks a download's ring holds: ringBytes in
// chunks, at least two (so reading and hashing overlap) and at most 32.
func ringDepth(chunk int) int { return min(max(ringBytes/chunk, 2), 32) }

// A span is a filled part of one of the ring's buffers; index -1 tells
// the hasher to stop.
type span struct{ i, n int }

// ring is the buffers and channels of one copy.
type ring struct {
	chunk int
	bufs  [][]byte
	free  chan int  // buffers the download may fill
	work  chan span // filled buffers, in order, for the hasher
}

// idle holds rings that finished copies gave back, by weak pointer: a
// copy that starts soon after takes one instead of allocating a new one,
// and the garbage collector frees those nobody took. So a host fetching
// one reference after another allocates about one ring between two
// collections, not one per fetch (BenchmarkFetch/1MiB, B/op), and the heap
// a fetch holds does not depend on the payload's size (TestHeapBounded).
// sync.Pool would not do: an object put on one processor's private slot
// is not found from another, so reuse would depend on scheduling.
var idle struct {
	sync.Mutex
	rings []weak.Pointer[ring]
}

// maxIdle bounds the idle list; the rings it names may be gone already.
const maxIdle = 16

func getRing(chunk int) *ring {
	idle.Lock()
	for i := len(idle.rings) - 1; i >= 0; i-- {
		r := idle.rings[i].Value()
		if r == nil || r.chunk != chunk || len(r.bufs) != ringDepth(chunk) {
			continue
		}
		idle.rings = slices.Delete(idle.rings, i, i+1)
		idle.Unlock()
		return fill(r)
	}
	// Drop the pointers whose rings the collector freed.
	idle.rings = slices.DeleteFunc(idle.rings, func(p weak.Pointer[ring]) bool { return p.Value() == nil })
	idle.Unlock()
	depth := ringDepth(chunk)
	r := &ring{chunk: chunk, bufs: make([][]byte, depth), free: make(chan int, depth), work: make(chan span, depth+1)}
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

// putRing gives r back once the hasher has stopped.
func putRing(r *ring) {
	for len(r.free) > 0 {
		<-r.free
	}
	idle.Lock()
	if len(idle.rings) < maxIdle {
		idle.rings = append(idle.rings, weak.Make(r))
	}
	idle.Unlock()
}

// stream copies the body to its end, chunk by chunk, with a hasher
// alongside. It returns once the hasher has stopped, so c.h holds the hash
// of every byte stored.
func (c *copier) stream() *Failure {
	chunk := c.f.set.chunk
	r := getRing(chunk)
	var (
		skip atomic.Bool // set on failure: the hash will not be used
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		var ahead byte
		for sp := range r.work {
			if sp.i < 0 {
				c.ahead = ahead
				return
			}
			if !skip.Load() {
				ahead += hashAhead(c.h, r.bufs[sp.i][:sp.n])
			}
			r.free <- sp.i
		}
	}()
	fail := c.copyChunks(r)
	skip.Store(fail != nil)
	r.work <- span{i: -1}
	<-done
	putRing(r)
	return fail
}

// hashAhead writes p to h a block at a time, and before each block reads
// one byte of every cache line of the block after it. The chunk was read
// from the network on another core, and SHA-256 stalls on each line it
// has to fetch from there; loads that do not depend on the hashing let the
// processor fetch the next block's lines while it hashes this one. On the
// 2-core test machine the 64 MiB fetch took 52.6–55.4 ms this way against
// 62.8–67.5 ms hashing each chunk whole (BenchmarkFetch/64MiB; 512-byte
// and 2 KiB blocks, and reading two blocks ahead, were slower). It returns
// the sum of the bytes it read, which the caller keeps so that the loads
// are not left out.
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

// copyChunks reads, checks and stores the body chunk by chunk, handing
// each chunk to the hasher before storing it; the hasher only reads the
// buffer, and the buffer is filled again only once the hasher gave it
// back.
func (c *copier) copyChunks(r *ring) *Failure {
	t := c.fl.t
	for {
		i := <-r.free
		buf := r.bufs[i]
		n, rerr := c.readChunk(buf[:c.fl.readCap(len(buf))])
		if n > 0 {
			c.n += int64(n)
			progress, fail := c.fl.account(int64(n))
			if fail != nil {
				return fail
			}
			if !c.marked && c.f.reg.MarkedHere(t.rec.URI) {
				if fail := c.markLanded(); fail != nil {
					return fail
				}
			}
			r.work <- span{i, n}
			if fail := c.write(buf[:n]); fail != nil {
				return fail
			}
			for _, p := range progress {
				c.f.report(p, c.n, t.claimed())
			}
		} else {
			r.free <- i
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return c.readFailure()
		}
	}
}
