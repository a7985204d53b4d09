package fetch

import "time"

// budget is one server's spending in the current window.
type budget struct {
	spent int64
	start time.Time // when the window began
}

// Budget returns the decoded bytes fetched through server in the current
// budget window and the budget itself.
func (f *Fetcher) Budget(server string) (spent, limit int64) {
	return f.budgetAt(server, f.now())
}

// budgetAt is Budget at the time now, for a caller that has read the
// clock already (Refusal reads it once, for the expiry and the budget).
func (f *Fetcher) budgetAt(server string, now time.Time) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	return f.budgetLocked(server, now).spent, f.set.budget
}

// budgetLocked returns server's budget at now, renewed when its window
// has passed. Called with f.bmu held.
func (f *Fetcher) budgetLocked(server string, now time.Time) *budget {
	b := f.budgets[server]
	// A clock that steps back renews nothing: the window ends only once
	// it has lasted its length.
	if b == nil || now.Sub(b.start) >= f.set.window {
		b = &budget{start: now}
		f.budgets[server] = b
	}
	return b
}

// charge counts n decoded bytes against server's budget and returns the
// new state.
func (f *Fetcher) charge(server string, n int64) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	b := f.budgetLocked(server, f.now())
	b.spent += n
	return b.spent, f.set.budget
}
