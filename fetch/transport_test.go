package fetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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

// TestIdlePoolBoundedUnderFlood is the other side of the idle pool: a
// flood of concurrent fetches from one server (a hostile one may invite
// it) leaves at most 16 of its connections open once the flood is over,
// the bound Config.Client's doc states; the rest are closed, not kept.
func TestIdlePoolBoundedUnderFlood(t *testing.T) {
	const flood, bound = 40, 16
	var (
		mu      sync.Mutex
		open    = map[net.Conn]bool{}
		arrived = make(chan struct{}, flood)
		release = make(chan struct{})
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Write(wavBody)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	e := newEnv(t, body(wavBody, ""), func(e *env) { e.extra["flooded"] = Server{Origin: srv.URL + "/mcpl"} })
	var wg sync.WaitGroup
	for i := range flood {
		rec := e.ref("flooded", blkURI(fmt.Sprintf("%s/f/%d.wav", srv.URL, i), ""))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.f.Fetch(context.Background(), rec.ID, Request{}); err != nil {
				t.Errorf("fetch %d: %v", i, err)
			}
		}()
	}
	for range flood {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("the flood's requests never all arrived")
		}
	}
	close(release)
	wg.Wait()
	// The transport closes what it does not keep as it gets each
	// connection back; the server notices a moment later.
	var n int
	for range 200 {
		mu.Lock()
		n = len(open)
		mu.Unlock()
		if n <= bound {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("after %d concurrent fetches, %d connections stay open; the pool keeps at most %d", flood, n, bound)
}
