package fetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestCloseIdleConnections fetches references concurrently, so the
// fetcher's clients keep several connections open for reuse, and checks
// that CloseIdleConnections closes every one of them: the default client's
// and those of the clients pinned to a server's resolved addresses, which
// a host cannot reach through its own transport. A host that makes a
// fetcher per session would otherwise leave each one's connections open
// until their idle timeout, or forever with a transport that sets none.
func TestCloseIdleConnections(t *testing.T) {
	for _, tt := range []struct {
		name string
		addr []netip.Addr
		// client is the Config.Client; nil is the fetcher's own.
		client *http.Client
		// hostCloses is set when the connections are the host's
		// transport's, which the host closes itself.
		hostCloses bool
	}{
		{name: "own-client"},
		{name: "own-client-pinned", addr: []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
		{name: "host-client-pinned", addr: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
			client: &http.Client{Transport: &http.Transport{IdleConnTimeout: 0}}},
		{name: "host-client", client: &http.Client{Transport: &http.Transport{IdleConnTimeout: 0}}, hostCloses: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var open atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(5 * time.Millisecond) // so that the fetches overlap and need connections of their own
				w.Write([]byte("payload"))
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				switch s {
				case http.StateNew:
					open.Add(1)
				case http.StateClosed, http.StateHijacked:
					open.Add(-1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			reg, err := refs.New(refs.Config{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Client: tt.client}
			f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: srv.URL, Addrs: tt.addr}, nil }),
				NewMemoryStore(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 4 {
				e := reg.Register(t.Context(), convert.Registration{
					Testimony: convert.Testimony{URI: fmt.Sprintf("%s/p%d", srv.URL, i), Present: convert.FieldURI}, Server: "s"})
				wg.Go(func() {
					if _, err := f.Fetch(context.Background(), e.ID, Request{}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if open.Load() == 0 {
				t.Fatal("no connection stayed open after the fetches; the test shows nothing")
			}
			f.CloseIdleConnections()
			if tt.hostCloses {
				time.Sleep(50 * time.Millisecond)
				if open.Load() == 0 {
					t.Fatal("the fetcher closed the connections of the host's own transport")
				}
				tt.client.CloseIdleConnections()
			}
			deadline := time.Now().Add(5 * time.Second)
			for open.Load() > 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := open.Load(); n > 0 {
				t.Errorf("%d connections stay open after CloseIdleConnections", n)
			}
		})
	}
}
