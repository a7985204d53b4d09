package copylock

import (
	"context"
	"sync"
)

type key struct {
	owner any
	id    string
}

type entry struct {
	held    bool
	waiters int           // Hold calls waiting for the lock
	wake    chan struct{} // closed when the holder lets go; nil if nobody waits
	later   []func()      // removals handed to the holder
}

var table = struct {
	sync.Mutex
	m map[key]*entry
}{m: make(map[key]*entry)}

// Hold takes the lock of record id of owner, waiting while another holds
// it, until ctx ends. release lets the lock go without waiting; work that
// [Do] handed over meanwhile then runs on a goroutine of its own, with
// the lock still held, before anyone else takes it. release must be
// called exactly once, and the caller must not take the same lock again
// before it has.
func Hold(ctx context.Context, owner any, id string) (release func(), err error) {
	k := key{owner, id}
	table.Lock()
	e := table.m[k]
	if e == nil {
		e = &entry{}
		table.m[k] = e
	}
	for e.held {
		if e.wake == nil {
			e.wake = make(chan struct{})
		}
		wake := e.wake
		e.waiters++
		table.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		table.Lock()
		e.waiters--
		if err := ctx.Err(); err != nil {
			if !e.held && e.waiters == 0 {
				delete(table.m, k)
			}
			table.Unlock()
			return nil, err
		}
	}
	e.held = true
	table.Unlock()
	return func() { letGo(k, e) }, nil
}

// Do runs f with the lock of record id of owner: at once, with later
// false, when nobody holds it; otherwise it hands f over and returns at
// once, and f runs with later true, on a goroutine of its own, once the
// holder lets go (see [Hold]). Do never waits for a holder, so it may be
// called by work that the holder itself is doing. Work handed over while
// f runs at once does not run on Do's caller either.
func Do(owner any, id string, f func(later bool)) {
	k := key{owner, id}
	table.Lock()
	e := table.m[k]
	if e != nil && e.held {
		e.later = append(e.later, func() { f(true) })
		table.Unlock()
		return
	}
	if e == nil {
		e = &entry{}
		table.m[k] = e
	}
	e.held = true
	table.Unlock()
	defer letGo(k, e)
	f(false)
}

// letGo frees the lock, or, when work was handed over while it was held,
// leaves it held for a goroutine of its own that runs that work (and any
// handed over meanwhile) and then frees it. The holder returns at once
// either way: handed work is another caller's, and its time is not the
// holder's to spend.
func letGo(k key, e *entry) {
	table.Lock()
	defer table.Unlock()
	if len(e.later) == 0 {
		free(k, e)
		return
	}
	go drain(k, e)
}

// drain runs the work handed over to a lock whose holder let go, then
// frees the lock. (A handed function that panicked would end the program,
// as any goroutine's panic does: the lock needs no freeing then.)
func drain(k key, e *entry) {
	for {
		table.Lock()
		later := e.later
		e.later = nil
		if len(later) == 0 {
			free(k, e)
			table.Unlock()
			return
		}
		table.Unlock()
		for _, f := range later {
			f()
		}
	}
}

// free marks e not held and wakes its waiters, or forgets it when nobody
// waits. The table's lock is held.
func free(k key, e *entry) {
	e.held = false
	if e.wake != nil {
		close(e.wake)
		e.wake = nil
	}
	if e.waiters == 0 {
		delete(table.m, k)
	}
}

// Len reports how many locks are held or awaited. It is for tests, which
// check that every lock taken was let go.
func Len() int {
	table.Lock()
	defer table.Unlock()
	return len(table.m)
}
