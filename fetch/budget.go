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
	f.bmu.Lock()
	defer f.bmu.Unlock()
	return f.budgetLocked(server).spent, f.set.budget
}

// budgetLocked returns server's budget, renewed when its window has
// passed. Called with f.bmu held.
func (f *Fetcher) budgetLocked(server string) *budget {
	now := f.now()
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
	b := f.budgetLocked(server)
	b.spent += n
	return b.spent, f.set.budget
}
