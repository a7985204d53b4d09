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
// It only reads: a server that has fetched nothing in the window has
// spent nothing, and asking about it, as every stub shown does, keeps
// nothing (TestBudgetsForgetIdleServers).
func (f *Fetcher) budgetAt(server string, now time.Time) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	if b := f.budgets[server]; b != nil && !f.passed(b, now) {
		spent = b.spent
	}
	return spent, f.set.budget
}

// passed reports whether b's window has passed at now. A clock that steps
// back renews nothing: the window ends only once it has lasted its
// length.
func (f *Fetcher) passed(b *budget, now time.Time) bool { return now.Sub(b.start) >= f.set.window }

// budgetLocked returns server's budget at now, a new one when it has none
// or its window has passed. Called with f.bmu held.
func (f *Fetcher) budgetLocked(server string, now time.Time) *budget {
	b := f.budgets[server]
	if b == nil || f.passed(b, now) {
		if b == nil && len(f.budgets) >= f.sweepAt {
			f.sweepLocked(now)
		}
		b = &budget{start: now}
		f.budgets[server] = b
	}
	return b
}

// sweepLocked drops the budgets whose window has passed, which count
// nothing any more, so that a host naming a server per connection does
// not grow the map for the fetcher's life. It runs when the map has
// doubled since the last sweep, so its cost spreads to a constant per new
// server. Called with f.bmu held.
func (f *Fetcher) sweepLocked(now time.Time) {
	for server, b := range f.budgets {
		if f.passed(b, now) {
			delete(f.budgets, server)
		}
	}
	f.sweepAt = max(sweepMin, 2*len(f.budgets))
}

// sweepMin is the fewest budgets a fetcher holds before it first looks
// for ones to drop.
const sweepMin = 64

// charge counts n decoded bytes against server's budget and returns the
// new state.
func (f *Fetcher) charge(server string, n int64) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	b := f.budgetLocked(server, f.now())
	b.spent += n
	return b.spent, f.set.budget
}
