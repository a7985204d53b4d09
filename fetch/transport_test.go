package fetch

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestConcurrentFetchesReuseConnections pins the default transport's idle
// pool: a host fetching eight references from one server at once, and
// then eight more, reuses the first eight connections instead of dialing
// six of them again (the standard transport keeps two idle connections
// per host unless told otherwise).
func TestConcurrentFetchesReuseConnections(t *testing.T) {
	const n = 8
	var (
		mu      sync.Mutex
		clients = map[string]bool{} // client address of each connection
		release chan struct{}
		arrived = make(chan struct{}, n)
	)
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		clients[r.RemoteAddr] = true
		rel := release
		mu.Unlock()
		arrived <- struct{}{}
		<-rel
		w.Write(wavBody)
	})
	wave := func(k int) {
		mu.Lock()
		release = make(chan struct{})
		rel := release
		mu.Unlock()
		var wg sync.WaitGroup
		for i := range n {
			rec := e.ref(serverName, blkURI(fmt.Sprintf("$ORIGIN/wave%d/%d.wav", k, i), ""))
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.f.Fetch(context.Background(), rec.ID, Request{}); err != nil {
					t.Errorf("wave %d fetch %d: %v", k, i, err)
				}
			}()
		}
		// Every request of the wave is open at once before any is answered,
		// so the wave holds n connections.
		for range n {
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				close(rel)
				t.Fatalf("wave %d: the requests never all arrived", k)
			}
		}
		close(rel)
		wg.Wait()
	}
	wave(0)
	wave(1)
	// The transport puts a connection back in its pool on a goroutine of
	// its own once the body is read, so a request of the second wave may
	// rarely start before the pool has it and dial anew: two such dials
	// are allowed. Keeping only two idle connections gives 14.
	if len(clients) > n+2 {
		t.Errorf("two waves of %d concurrent fetches used %d connections, want %d (at most %d)", n, len(clients), n, n+2)
	}
}
