package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// TestUnicodeHostDialsNoOtherOrigin pins F2 and F3 for host names that
// Unicode case mapping and an HTTP client's IDNA lookup read differently:
// strings.ToLower turns U+0130 (İ) into an ASCII "i", so
// "http://İnternal.test" compared equal to the origin "http://internal.test",
// while net/http dialed xn--internal-o0e.test, another domain, and sent the
// server's token there. Whatever a reference's host holds, the fetcher may
// dial only the server's origin, and only that origin gets the token.
func TestUnicodeHostDialsNoOtherOrigin(t *testing.T) {
	for _, uri := range []string{
		"http://\u0130nternal.test/blob",  // İ: lower-cases to ASCII i
		"http://%C4%B0nternal.test/blob",  // the same, percent-encoded
		"http://INTERNAL.TEST/blob",       // ASCII case: the same origin
		"http://\u212Anternal.test/blob",  // Kelvin sign: lower-cases to ASCII k
		"http://\uff49nternal.test/blob",  // full-width i
		"http://inte\u0280nal.test/blob",  // a letter with no ASCII lower case
		"http://internal.test\u3002/blob", // ideographic full stop
	} {
		t.Run(uri, func(t *testing.T) {
			d, reg := newDialRecorder(t, "http://internal.test/mcpl")
			ferr := d.fetch(t, reg, uri)
			d.mu.Lock()
			defer d.mu.Unlock()
			dialed, auth := d.dialed, d.auth
			for i, a := range dialed {
				// DNS names compare without ASCII case; nothing else folds.
				if uriform.LowerASCII(a) != "internal.test:80" {
					t.Errorf("F2: fetching %q dialed %q; the server's origin is internal.test:80 (fetch error: %v)", uri, a, ferr)
					if i < len(auth) && auth[i] != "" {
						t.Errorf("F3: the request to %q carried the server's token", a)
					}
				}
			}
		})
	}
}

// TestServerlessSpellingDoesNotSteerFetch pins R6 and F2 end to end:
// serverless content that names a server's uri first, spelled with a
// trailing dot (the same key, another origin to the fetcher), used to
// decide where the server's own later reference was fetched from, and
// the fetch was refused as cross-origin.
func TestServerlessSpellingDoesNotSteerFetch(t *testing.T) {
	e := newEnv(t, body([]byte("payload"), "text/plain"))
	planted := convert.Classify([]byte(`{"type":"resource","uri":"http://127.0.0.1.:` + e.port() + `/payload"}`))
	e.reg.Register(t.Context(), convert.Registration{Testimony: planted.Testimony})
	rec := e.ref(serverName, `{"type":"resource","uri":"$ORIGIN/payload"}`)
	if _, err := e.f.Fetch(t.Context(), rec.ID, Request{}); err != nil {
		t.Errorf("R6/F2: the server's own reference, named first by serverless content in another spelling, failed: %v", err)
	}
}

// TestZoneCaseIsAnotherLink pins F2 and F3 for an IPv6 zone: interface
// names are case-sensitive, so [fe80::1%ETH0] is another link than the
// server's [fe80::1%eth0], and the token must not go there. Lower-casing
// the whole host name made them one origin.
func TestZoneCaseIsAnotherLink(t *testing.T) {
	d, reg := newDialRecorder(t, "http://[fe80::1%25eth0]:8080/mcpl")
	for _, uri := range []string{"http://[fe80::1%25ETH0]:8080/blob", "http://[FE80::1%25eth0]:8080/blob"} {
		d.fetch(t, reg, uri)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	dialed := d.dialed
	for _, a := range dialed {
		if a != "[fe80::1%eth0]:8080" && a != "[FE80::1%eth0]:8080" {
			t.Errorf("F2/F3: dialed %q with the token of the server at [fe80::1%%eth0]:8080", a)
		}
	}
	if len(dialed) != 1 {
		t.Errorf("dialed %q; want one fetch, of the spelling that differs only in the address's case", dialed)
	}
}

// dialRecorder is a fetcher whose every dial goes to one loopback server,
// standing in for name resolution, and records the address asked for and
// the Authorization header the server received.
type dialRecorder struct {
	f  *Fetcher
	mu sync.Mutex
	// dialed and auth are the addresses dialed and the headers received,
	// in order.
	dialed, auth []string
}

// newDialRecorder returns a dialRecorder whose one server, "fixture", is
// at origin with the token s3cret-token.
func newDialRecorder(t *testing.T, origin string) (*dialRecorder, *refs.Registry) {
	t.Helper()
	d := &dialRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.auth = append(d.auth, r.Header.Get("Authorization"))
		d.mu.Unlock()
		w.Write([]byte("payload"))
	}))
	t.Cleanup(srv.Close)
	backend := srv.Listener.Addr().String()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.mu.Lock()
		d.dialed = append(d.dialed, addr)
		d.mu.Unlock()
		var dialer net.Dialer
		return dialer.DialContext(ctx, network, backend)
	}}}
	reg, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	servers := ServersFunc(func(string) (Server, error) {
		return Server{Origin: origin, Token: "s3cret-token"}, nil
	})
	if d.f, err = New(reg, servers, NewMemoryStore(), Config{Client: client}); err != nil {
		t.Fatal(err)
	}
	return d, reg
}

// fetch registers uri as the fixture server's reference and fetches it.
func (d *dialRecorder) fetch(t *testing.T, reg *refs.Registry, uri string) error {
	b := convert.Classify([]byte(`{"type":"resource","uri":"` + uri + `"}`))
	e := reg.Register(t.Context(), convert.Registration{Testimony: b.Testimony, Server: "fixture"})
	_, err := d.f.Fetch(t.Context(), e.ID, Request{})
	return err
}

// TestLaterServerFetchesItsOwnOrigin pins F2 and F3 for a record two
// servers' contents named: another server that named the uri first is the
// record's first server, but the uri points at the later server's origin.
// The fetch is judged against the bound server whose origin the uri is
// at, and carries that server's token; it used to be refused as
// cross-origin, so the first server to name a uri could make another
// server's reference unfetchable.
func TestLaterServerFetchesItsOwnOrigin(t *testing.T) {
	e := newEnv(t, body([]byte("payload"), "text/plain"))
	e.extra["first"] = Server{Origin: "https://first.example", Token: "first-token"}
	rec := e.boundAfter("first")
	res, err := e.f.Fetch(t.Context(), rec.ID, Request{})
	if err != nil || res.Bytes != int64(len("payload")) {
		t.Fatalf("F2: fetch = %+v, %v; want the payload from the later server's own origin", res, err)
	}
	for _, a := range e.authHeaders() {
		if a != "Bearer "+token {
			t.Errorf("F3: the request carried %q, not the origin's own server's token", a)
		}
	}
	if spent, _ := e.f.Budget(serverName); spent != int64(len("payload")) {
		t.Errorf("the fetch charged %d bytes to the server whose origin served it, want %d", spent, len("payload"))
	}
}

// TestOriginServerChosenWhateverTheFirstServer pins the same for a first
// server that fails for another reason than its origin (no network
// address, gone from the host): the reference is still judged for the
// bound server whose origin it is at.
func TestOriginServerChosenWhateverTheFirstServer(t *testing.T) {
	for _, first := range []string{"stdio", "gone"} {
		t.Run(first, func(t *testing.T) {
			e := newEnv(t, body([]byte("payload"), "text/plain"))
			rec := e.boundAfter(first)
			if _, err := e.f.Fetch(t.Context(), rec.ID, Request{}); err != nil {
				t.Errorf("F2: the later server's own-origin reference failed: %v", err)
			}
		})
	}
}

// TestOwnOriginServerBeforeAllowedOther pins F2 and F3 when the record's
// first server merely lists the uri's origin among its
// UnauthenticatedOrigins: the origin's own server, bound later, fetches
// it, with its token and on its budget, rather than the first server
// without one.
func TestOwnOriginServerBeforeAllowedOther(t *testing.T) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("payload"))
	})
	e.extra["lister"] = Server{Origin: "https://lister.example", Token: "lister-token", UnauthenticatedOrigins: []string{e.srv.URL}}
	rec := e.boundAfter("lister")
	res, err := e.f.Fetch(t.Context(), rec.ID, Request{})
	if err != nil || res.Bytes != int64(len("payload")) {
		t.Fatalf("fetch = %+v, %v; want the payload through the origin's own server", res, err)
	}
	if spent, _ := e.f.Budget(serverName); spent != int64(len("payload")) {
		t.Errorf("the fetch charged %d bytes to the origin's own server, want %d", spent, len("payload"))
	}
	if spent, _ := e.f.Budget("lister"); spent != 0 {
		t.Errorf("the fetch charged %d bytes to the server that only lists the origin", spent)
	}
}

// TestRefusalAllocations pins what Refusal, asked for every stub a view
// shows, allocates for a reference at its one server's own origin: the
// copy of the record's server list the registry hands out, and the
// address this test's Servers builds; nothing for choosing among servers
// (keeping a fallback server by pointer made it three).
func TestRefusalAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	e := newEnv(t, body(wavBody, "audio/wav"))
	rec := e.ref(serverName, blk(""))
	ent := e.entry(rec)
	if r := e.f.Refusal(ent); r != "" {
		t.Fatalf("setup: Refusal = %q", r)
	}
	if n := testing.AllocsPerRun(100, func() { _ = e.f.Refusal(ent) }); n > 2 {
		t.Errorf("Refusal allocated %.0f times per call, want at most 2", n)
	}
}

// TestJoinWaitsForAnotherServersDownload pins F2, F3 and F17 together: a
// fetch judged for the origin's own server does not join a download that
// a server only allowing that origin started, without a token, before the
// own server named the uri. It waits for that download to end, then
// fetches with its own server's token and budget.
func TestJoinWaitsForAnotherServersDownload(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			<-release
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("payload"))
	})
	e.extra["lister"] = Server{Origin: "https://lister.example", UnauthenticatedOrigins: []string{e.srv.URL}}
	rec := e.ref("lister", `{"type":"resource","uri":"$ORIGIN/payload"}`)
	first := make(chan error, 1)
	go func() { _, err := e.f.Fetch(t.Context(), rec.ID, Request{}); first <- err }()
	waitFor(t, "the lister's request", func() bool { return e.requests.Load() == 1 })

	e.ref(serverName, `{"type":"resource","uri":"$ORIGIN/payload"}`)
	judged := make(chan struct{})
	var once sync.Once
	e.lookup = func(name string) {
		if name == serverName {
			once.Do(func() { close(judged) })
		}
	}
	second := make(chan error, 1)
	var res Result
	go func() {
		var err error
		res, err = e.f.Fetch(t.Context(), rec.ID, Request{})
		second <- err
	}()
	<-judged
	// Let the second fetch reach the running download before it ends; a
	// fetch that came later would start its own either way.
	time.Sleep(50 * time.Millisecond)
	close(release)
	failureOf(t, <-first, CodeStatus)
	if err := <-second; err != nil || res.Bytes != int64(len("payload")) {
		t.Fatalf("the own server's fetch = %+v, %v; want the payload with its token", res, err)
	}
	if spent, _ := e.f.Budget(serverName); spent != int64(len("payload")) {
		t.Errorf("own server's budget spent %d, want %d", spent, len("payload"))
	}
}

// boundAfter registers $ORIGIN/payload from server first, then from the
// fixture's server, and returns the record, whose first server first must
// stay.
func (e *env) boundAfter(first string) refs.Record {
	e.t.Helper()
	e.ref(first, `{"type":"resource","uri":"$ORIGIN/payload"}`)
	rec := e.ref(serverName, `{"type":"resource","uri":"$ORIGIN/payload"}`)
	if rec.Server() != first {
		e.t.Fatalf("setup: the record's first server is %q", rec.Server())
	}
	return rec
}
