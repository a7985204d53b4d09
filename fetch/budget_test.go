package fetch

import (
	"sync"
	"testing"
	"time"
)

// TestBudgetRenewalKeepsEveryCharge pins F5 under concurrency: when many
// downloads charge a server's budget just as its window has passed, the
// budget renews once and every byte lands in the new window. (A renewal
// that overwrote a budget another caller had installed and charged would
// lose that caller's bytes.)
func TestBudgetRenewalKeepsEveryCharge(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, body(wavBody, ""), withConfig(func(c *Config) {
		c.Budget = 1 << 40
		c.BudgetWindow = time.Hour
		c.Now = clock.Now
	}))
	const callers, rounds = 8, 300
	for round := range rounds {
		e.f.charge(serverName, 1000) // spending of the window about to end
		clock.advance(time.Hour)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				e.f.charge(serverName, 1)
			}()
		}
		close(start)
		wg.Wait()
		if spent, _ := e.f.Budget(serverName); spent != callers {
			t.Fatalf("round %d: %d bytes spent in the new window, want %d", round, spent, callers)
		}
	}
}
