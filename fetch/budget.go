package fetch

import (
	"sync/atomic"
	"time"
)

// budget is one server's spending in one window. Its start never changes:
// a window that has passed is replaced by a new budget.
type budget struct {
	start time.Time // when the window began
	spent atomic.Int64
}

// Budget returns the decoded bytes fetched through server in the current
// budget window and the budget itself.
func (f *Fetcher) Budget(server string) (spent, limit int64) {
	return f.budgetAt(server, f.now())
}

// budgetAt is Budget at the time now, for a caller that has read the
// clock already (Refusal reads it once, for the expiry and the budget).
func (f *Fetcher) budgetAt(server string, now time.Time) (spent, limit int64) {
	return f.budgetOf(server, now).spent.Load(), f.set.budget
}

// budgetOf returns server's budget at now, renewed when its window has
// passed. It takes no lock: Refusal reads a budget for every stub a view
// shows, and with eight sessions on two cores a mutex here made those
// readers queue behind each other (BenchmarkHostFlow/fetchers=8). A
// renewal is one compare-and-swap, so of two callers that find the same
// window over, one installs the new budget and the other charges it.
func (f *Fetcher) budgetOf(server string, now time.Time) *budget {
	v, ok := f.budgets.Load(server)
	for {
		if !ok {
			fresh := &budget{start: now}
			if v, ok = f.budgets.LoadOrStore(server, fresh); !ok {
				return fresh
			}
			continue
		}
		b := v.(*budget)
		// A clock that steps back renews nothing: the window ends only
		// once it has lasted its length.
		if now.Sub(b.start) < f.set.window {
			return b
		}
		fresh := &budget{start: now}
		if f.budgets.CompareAndSwap(server, b, fresh) {
			return fresh
		}
		v, ok = f.budgets.Load(server)
	}
}

// charge counts n decoded bytes against server's budget and returns the
// new state.
func (f *Fetcher) charge(server string, n int64) (spent, limit int64) {
	return f.budgetOf(server, f.now()).spent.Add(n), f.set.budget
}
