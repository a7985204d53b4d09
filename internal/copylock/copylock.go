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
// it, until ctx ends. release lets the lock go, after running the work
// that [Do] handed over meanwhile. It must be called exactly once, and
// the caller must not take the same lock again before it has.
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
// false, when nobody holds it; otherwise it hands f to the holder, who
// runs it with later true as it lets the lock go, and returns at once.
// Do never waits for a holder, so it may be called by work that the
// holder itself is doing.
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

// letGo runs the work handed over while the lock was held, including work
// handed over while it runs, and then frees the lock. Should a handed
// function panic, the lock is freed before the panic goes on, and the
// work not yet run is dropped.
func letGo(k key, e *entry) {
	defer func() {
		if p := recover(); p != nil {
			table.Lock()
			e.later = nil
			free(k, e)
			table.Unlock()
			panic(p)
		}
	}()
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
