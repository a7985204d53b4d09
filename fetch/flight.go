package fetch

import (
	"context"
	"net/http"
	"sync"
)

// flight is one download shared by every caller waiting on one record.
type flight struct {
	f      *Fetcher
	t      target
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed once the download has cleaned up

	mu      sync.Mutex
	waiters map[*waiter]struct{}
	total   int64 // decoded bytes read so far
	dead    bool  // no caller can join: done, or abandoned
	// finishing is set once the copy is committed and kept: a caller
	// whose deadline passes from then on waits the moment it takes to
	// record the copy and gets its answer, rather than a failure while
	// the copy stays.
	finishing bool
	deferred  []parted // answers held until the download has cleaned up
}

// waiter is one caller of Fetch waiting on a flight.
type waiter struct {
	max      int64
	forModel bool // the bytes are for the model: a never mark drops it
	progress func(got, claimed int64)
	ch       chan answer // buffered: the flight never blocks on a caller
}

type answer struct {
	res  Result
	fail *Failure
}

// parted is an answer for a waiter that left the flight's waiting set.
type parted struct {
	w *waiter
	a answer
}

// join adds w to the record's flight, starting one when none is running.
// answered is set when w needs no flight: one that just ended saved a copy
// w may have, or found a mark that refuses w. ending is set instead when
// the record's flight was left by its callers and is still ending, or is
// one for another server: the caller waits until it is done and joins
// again, so that one record never has two downloads at once.
func (f *Fetcher) join(ctx context.Context, t target, w *waiter, client *http.Client) (fl *flight, a answer, answered bool, ending *flight) {
	start := false
	f.mu.Lock()
	fl = f.flights[t.rec.ID]
	if fl != nil {
		fl.mu.Lock()
		if fl.dead || fl.t.server != t.server || fl.t.other != t.other {
			// run takes a finished flight out of the map before it marks
			// it dead, so a dead flight here is one still ending. A flight
			// for another of the record's servers (one judged before this
			// server named the uri) is waited out the same way: its
			// request carries that server's credentials, or none, and its
			// bytes count against that server's budget.
			fl.mu.Unlock()
			f.mu.Unlock()
			return nil, answer{}, false, fl
		}
	}
	if fl == nil {
		// A flight records its copy before it leaves the map, so a caller
		// that finds no flight finds the copy instead; and a mark that a
		// flight for the host found meanwhile stops a caller for the model
		// here, before a second request.
		cur := f.current(t.rec)
		if w.forModel && (cur.Never || f.reg.MarkedHere(cur.URI)) {
			f.mu.Unlock()
			return nil, answer{fail: failWithheld(t.server)}, true, nil
		}
		if res, ok := servable(cur, w.forModel); ok {
			f.mu.Unlock()
			return nil, answer{res: res}, true, nil
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		fl = &flight{f: f, t: t, client: client, ctx: fctx, cancel: cancel,
			done: make(chan struct{}), waiters: make(map[*waiter]struct{})}
		fl.mu.Lock()
		f.flights[t.rec.ID] = fl
		start = true
	}
	f.mu.Unlock()
	if fl.total > f.set.ceiling {
		// The flight passed the host ceiling and is ending: the caller
		// gets the ceiling's failure, as the flight's own callers do.
		w.ch <- answer{fail: failReadOverCeiling(t.server, fl.total, f.set.ceiling)}
	} else if fl.total > w.max {
		spent, limit := f.Budget(t.server)
		w.ch <- answer{fail: f.tooLarge(t.server, fl.total, w.max, false, spent, limit)}
	} else {
		fl.waiters[w] = struct{}{}
	}
	fl.mu.Unlock()
	if start {
		go f.run(fl)
	}
	return fl, answer{}, false, nil
}

// leave takes a caller whose deadline passed out of the flight. When it
// was the last caller, the download is stopped and leave waits until its
// partial copy is gone, so nothing of it outlives the caller's answer. ok
// is set when an answer had already been sent to w.
func (fl *flight) leave(w *waiter) (a answer, ok bool) {
	fl.mu.Lock()
	if _, waiting := fl.waiters[w]; waiting && !fl.finishing {
		delete(fl.waiters, w)
		last := len(fl.waiters) == 0 && !fl.dead
		if last {
			fl.dead = true
			fl.cancel()
		}
		fl.mu.Unlock()
		if last {
			<-fl.done
		}
		return answer{}, false
	}
	fl.mu.Unlock()
	return <-w.ch, true
}

// finish decides that the committed copy stays, unless every caller has
// left (which canceled the flight's context): then it reports false and
// the copy must go. Deciding under fl.mu orders it with leave.
func (fl *flight) finish() bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.ctx.Err() != nil {
		return false
	}
	fl.finishing = true
	return true
}

// part answers w, which leaves the flight. When no caller is left the
// download will stop, and the answer waits until it has cleaned up.
// Called with fl.mu held.
func (fl *flight) part(w *waiter, a answer) {
	delete(fl.waiters, w)
	if len(fl.waiters) == 0 {
		fl.dead = true
		fl.deferred = append(fl.deferred, parted{w, a})
		return
	}
	w.ch <- a
}

// waiting returns how many callers wait on the record's flight.
func (f *Fetcher) waiting(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.flights[id]
	if fl == nil {
		return 0
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return len(fl.waiters)
}

// run performs the download, cleans up, and only then answers every caller
// still waiting (and those whose answers were held).
func (f *Fetcher) run(fl *flight) {
	defer fl.cancel()
	out := f.download(fl)
	f.mu.Lock()
	if f.flights[fl.t.rec.ID] == fl {
		delete(f.flights, fl.t.rec.ID)
	}
	f.mu.Unlock()
	fl.mu.Lock()
	fl.dead = true
	for w := range fl.waiters {
		w.ch <- out.answerFor(w)
		delete(fl.waiters, w)
	}
	for _, p := range fl.deferred {
		p.w.ch <- p.a
	}
	fl.deferred = nil
	fl.mu.Unlock()
	close(fl.done)
}

// outcome is how a download ended: the copy or failure for the host's own
// callers, and, when a never mark stopped the model's share, the failure
// its callers get instead.
type outcome struct {
	res       Result
	fail      *Failure
	modelFail *Failure
}

func (o outcome) answerFor(w *waiter) answer {
	if w.forModel && o.modelFail != nil {
		return answer{fail: o.modelFail}
	}
	return answer{res: o.res, fail: o.fail}
}

// failure ends a download for every caller.
func failure(f *Failure) outcome { return outcome{fail: f} }
