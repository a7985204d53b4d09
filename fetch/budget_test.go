package fetch

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
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

// TestBudgetsForgetIdleServers pins how much a fetcher remembers of the
// servers it has seen: nothing for one whose references were only shown
// or whose budget was only asked about, and nothing, in the end, for one
// whose window has passed. A host that names a server per connection
// would otherwise grow the fetcher's memory with every connection for as
// long as the fetcher lives (F5).
func TestBudgetsForgetIdleServers(t *testing.T) {
	const n = 200
	clock := newFakeClock()
	srv := httptest.NewServer(body([]byte("payload"), "application/octet-stream"))
	t.Cleanup(srv.Close)
	reg, err := refs.New(refs.Config{Capacity: 4 * n})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL}, nil }),
		NewMemoryStore(), Config{Now: clock.Now, BudgetWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	register := func(server string, i int) convert.Entry {
		return reg.Register(t.Context(), convert.Registration{
			Testimony: convert.Testimony{URI: fmt.Sprintf("%s/%s/%d", srv.URL, server, i), Present: convert.FieldURI}, Server: server})
	}
	for i := range 5 * n {
		server := fmt.Sprintf("shown-%d", i)
		if r := f.Refusal(register(server, i)); r != "" {
			t.Fatalf("Refusal(%s) = %q", server, r)
		}
		if spent, _ := f.Budget(server); spent != 0 {
			t.Fatalf("Budget(%s) = %d, want 0", server, spent)
		}
	}
	if len(f.budgets) != 0 {
		t.Errorf("the fetcher keeps budgets for %d servers that fetched nothing", len(f.budgets))
	}
	fetchAll := func(prefix string) {
		for i := range n {
			server := prefix + strconv.Itoa(i)
			if _, err := f.Fetch(t.Context(), register(server, i).ID, Request{}); err != nil {
				t.Fatal(err)
			}
			if spent, _ := f.Budget(server); spent != int64(len("payload")) {
				t.Fatalf("Budget(%s) = %d after one fetch", server, spent)
			}
		}
	}
	fetchAll("first-")
	clock.advance(time.Hour)
	if spent, _ := f.Budget("first-0"); spent != 0 {
		t.Errorf("Budget once the window passed = %d, want 0", spent)
	}
	fetchAll("second-")
	if len(f.budgets) >= 2*n {
		t.Errorf("the fetcher keeps budgets for %d servers after %d fetched in a window that passed and %d in the next",
			len(f.budgets), n, n)
	}
}
