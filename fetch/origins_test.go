package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcplrefs/refcore/convert"
)

// cdnServer is the name of the server whose references the tests in this
// file fetch from a second loopback server, the "cdn".
const cdnServer = "withcdn"

// jarSecret is the value of a cookie the host's own client holds for the
// loopback host: no request of the fetcher may carry it.
const jarSecret = "jar-secret-cookie"

// cdn is a second loopback server standing for a CDN. It records what
// every request carried.
type cdn struct {
	srv      *httptest.Server
	requests atomic.Int64
	handler  http.HandlerFunc // set before any request

	mu      sync.Mutex
	auth    []string
	cookies []string
}

func newCDN(t *testing.T) *cdn {
	t.Helper()
	c := &cdn{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		c.mu.Lock()
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.cookies = append(c.cookies, r.Header.Get("Cookie"))
		c.mu.Unlock()
		c.handler(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// seen returns the Authorization and Cookie headers of every request so
// far.
func (c *cdn) seen() (auth, cookies []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.auth...), append([]string(nil), c.cookies...)
}

func (c *cdn) host() string { return strings.TrimPrefix(c.srv.URL, "http://") }

func (c *cdn) port() string {
	_, port, _ := net.SplitHostPort(c.host())
	return port
}

// originsEnv is an env whose host client holds a cookie jar with a cookie
// for the loopback host (so for both servers, whatever their port), whose
// own server also records the Cookie header it receives, and a cdn.
type originsEnv struct {
	*env
	cdn     *cdn
	jar     *cookiejar.Jar
	mu      sync.Mutex
	cookies []string // the Cookie header of every request to the server
}

func newOriginsEnv(t *testing.T, mods ...func(*env)) *originsEnv {
	t.Helper()
	o := &originsEnv{cdn: newCDN(t)}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	o.jar = jar
	u, err := url.Parse(o.cdn.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: jarSecret}})
	withJar := func(e *env) {
		if e.cfg.Client == nil {
			e.cfg.Client = &http.Client{Jar: jar}
		}
	}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.cookies = append(o.cookies, r.Header.Get("Cookie"))
		o.mu.Unlock()
		body(wavBody, "")(w, r)
	}, append(append([]func(*env){}, mods...), withJar)...)
	o.env = e
	if len(jar.Cookies(u)) != 1 {
		t.Fatalf("the host's jar holds %d cookies for the cdn, want 1", len(jar.Cookies(u)))
	}
	return o
}

// serverCookies returns the Cookie header of every request to the server.
func (o *originsEnv) serverCookies() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.cookies...)
}

// expand replaces $ORIGIN, $CDN, $CDNHOST and $DEAD in s.
func (o *originsEnv) expand(s, dead string) string {
	return strings.NewReplacer("$ORIGIN", o.srv.URL, "$CDNHOST", o.cdn.host(), "$CDN", o.cdn.srv.URL, "$DEAD", dead).Replace(s)
}

// assertNoCredentialSent checks that no request to either server carried
// a cookie, and that no request to the cdn carried an Authorization
// header (F3; RFC-005 §6.1).
func (o *originsEnv) assertNoCredentialSent(t *testing.T) {
	t.Helper()
	auth, cookies := o.cdn.seen()
	for i, a := range auth {
		if a != "" {
			t.Errorf("F3: request %d to the cdn carried Authorization %q", i, a)
		}
	}
	for i, c := range cookies {
		if c != "" {
			t.Errorf("F3: request %d to the cdn carried Cookie %q", i, c)
		}
	}
	for i, c := range o.serverCookies() {
		if c != "" {
			t.Errorf("F3: request %d to the server carried Cookie %q", i, c)
		}
	}
}

// assertCDNSafe checks that model-facing texts name neither the cdn's
// address nor its port.
func (o *originsEnv) assertCDNSafe(t *testing.T, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, s := range []string{o.cdn.srv.URL, o.cdn.host(), o.cdn.port()} {
			if strings.Contains(text, s) {
				t.Errorf("F14: %q carries the cdn's %q", text, s)
			}
		}
	}
}

// TestOtherOrigins pins the host policy of RFC-005 §6.1 and §7.2 that
// Server.UnauthenticatedOrigins carries: a reference at an origin the host
// names for its server is fetched with no credential (no bearer token, no
// cookie), every other check unchanged, its bytes charged to that server's
// budget; every other origin is refused before dialing as before (F2),
// and a redirect is never followed (F4). Refusal says what Fetch would.
//
// Both loopback servers are on 127.0.0.1, on two ports: every case is
// also the case of a CDN on the server's host at another port, where the
// token must not go either (F3).
func TestOtherOrigins(t *testing.T) {
	digest := `,"digest":"` + wavDigest + `"`
	tests := []struct {
		name, reason string
		mods         []func(*env)
		// server is the cdnServer's entry; $ORIGIN, $CDN and $DEAD are
		// replaced in its Origin and UnauthenticatedOrigins.
		server Server
		uri    string // $ORIGIN, $CDN, $CDNHOST and $DEAD replaced
		extra  string // the block's other JSON members
		cdn    func(o *originsEnv) http.HandlerFunc
		want   Code // "" for a fetch that succeeds
		// clause, when set, is a part the failure's clause must hold.
		clause         string
		remedy         RemedyKind
		serverRequests int64
		cdnRequests    int64
		bearer         bool // the server's requests carry the token
		dialed         bool // the fetch dialed, though no request arrived
	}{
		{name: "cdn-allowed", reason: "F3, RFC-005 §6.1: an origin the host names is fetched without any credential, digest checked",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/files/payload", extra: digest + `,"sizeBytes":19`, cdnRequests: 1},
		{name: "cdn-allowed-among-others", reason: "RFC-005 §6.1: any listed origin matches; the default port and case do not matter",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$DEAD", "HTTP://$CDNHOST", "https://cdn.example"}},
			uri:    "$CDN/payload", extra: digest, cdnRequests: 1},
		{name: "own-origin-keeps-token", reason: "F3: the server's own origin still gets the token when a cdn is listed",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$ORIGIN/payload", extra: digest, serverRequests: 1, bearer: true},
		{name: "own-origin-listed-too", reason: "F3: listing the server's own origin changes nothing there",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$ORIGIN"}},
			uri:    "$ORIGIN/payload", extra: digest, serverRequests: 1, bearer: true},
		{name: "cdn-not-listed", reason: "F2, RFC-005 §7.2: by default another origin is refused before dialing",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token},
			uri:    "$CDN/payload", want: CodeCrossOrigin, clause: "this host fetches only from that origin", remedy: RemedyNothing},
		{name: "cdn-not-among-listed", reason: "F2: an origin the host does not name is refused before dialing",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$DEAD"}},
			uri:    "$CDN/payload", want: CodeCrossOrigin, clause: "nor to one of the other origins", remedy: RemedyNothing},
		{name: "listed-other-port", reason: "F2: a listed origin on another port than the reference's does not match",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$DEAD/payload", want: CodeCrossOrigin, remedy: RemedyNothing},
		{name: "listed-other-scheme", reason: "F2: a listed https origin does not match an http reference on its host and port",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"https://$CDNHOST"}},
			uri:    "$CDN/payload", want: CodeCrossOrigin, remedy: RemedyNothing},
		{name: "stdio-with-origins", reason: "RFC-005 §6.1: a stdio server's references at an origin the host names are fetched unauthenticated",
			server: Server{Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload", extra: digest, cdnRequests: 1},
		{name: "stdio-without-origins", reason: "F2: a stdio server with no origin named has no fetchable references",
			server: Server{Token: token},
			uri:    "$CDN/payload", want: CodeNoNetworkAddress, clause: "allows no other origin", remedy: RemedyNothing},
		{name: "stdio-elsewhere", reason: "F2: a stdio server's reference at an origin the host does not name is refused before dialing",
			server: Server{UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$ORIGIN/payload", want: CodeCrossOrigin, clause: "reached without a network address", remedy: RemedyNothing},
		{name: "cdn-redirect", reason: "F4: a redirect from the cdn is refused and nothing is sent onward",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload",
			cdn: func(o *originsEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, o.srv.URL+"/payload", http.StatusFound)
				}
			},
			want: CodeRedirect, clause: "the origin the reference points to answered HTTP 302", remedy: RemedyNothing, cdnRequests: 1},
		{name: "cdn-forbidden", reason: "F11: a 403 from the cdn asks for a fresh reference, not for the server's credentials",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload",
			cdn: func(*originsEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }
			},
			want: CodeStatus, clause: "the origin the reference points to answered HTTP 403", remedy: RemedyFreshReference, cdnRequests: 1},
		{name: "cdn-unreachable", reason: "F13: a failed request to the cdn is said of the cdn, not of the server",
			server: Server{Origin: "$ORIGIN/mcpl", Token: token, UnauthenticatedOrigins: []string{"$DEAD"}},
			uri:    "$DEAD/payload", want: CodeNetwork, dialed: true,
			clause: "the request to the origin the reference points to failed: the connection was refused", remedy: RemedyTryLaterThenAsk},
		{name: "cdn-corrupt-gzip", reason: "F7: a corrupt gzip stream from the cdn is said of the cdn, not of the server",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload",
			cdn: func(*originsEnv) http.HandlerFunc {
				return gzipBody([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xffnot deflate data at all"))
			},
			want: CodeBadEncoding, clause: "from the origin the reference points to, the gzip stream stopped decoding",
			remedy: RemedyTryLaterThenFreshReference, cdnRequests: 1},
		{name: "cdn-digest-mismatch", reason: "F8: the cdn's bytes are checked against the digest",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload", extra: `,"digest":"sha256:2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz_o"`,
			want: CodeDigestMismatch, remedy: RemedyTryLaterThenFreshReference, cdnRequests: 1},
		{name: "cdn-announced-over-budget", reason: "F5: the cdn's bytes count against the server's budget",
			mods:   []func(*env){withConfig(func(c *Config) { c.Budget = 10 })},
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload", want: CodeOverBudget,
			clause: `the origin the reference points to announced 19 bytes, but only 10 bytes remain of this host's fetch budget for the "withcdn" server for now, so nothing was read`,
			remedy: RemedyWaitForBudget, cdnRequests: 1},
		{name: "cdn-claim-over-budget", reason: "F2: a claim over the budget is refused before dialing the cdn",
			mods:   []func(*env){withConfig(func(c *Config) { c.Budget = 10 })},
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload", extra: `,"sizeBytes":19`, want: CodeOverBudget, remedy: RemedyWaitForBudget},
		{name: "cdn-expired", reason: "F2, E2: an expired reference at the cdn is refused before dialing",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "$CDN/payload", extra: `,"expiresAt":"2000-01-01"`, want: CodeExpired, remedy: RemedyFreshReference},
		{name: "cdn-userinfo", reason: "F2: a user name or password in a cdn address is refused before dialing",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "http://u:p@$CDNHOST/payload", want: CodeCredentialsInURL, remedy: RemedyNothing},
		{name: "cdn-ws-scheme", reason: "F2: a ws reference is refused on the scheme, even at a listed host and port",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "ws://$CDNHOST/payload", want: CodeSchemeNotAllowed, remedy: RemedyNothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOriginsEnv(t, tt.mods...)
			dead := deadOrigin(t)
			o.cdn.handler = func(w http.ResponseWriter, r *http.Request) {
				// The cdn tries to leave a cookie in the host's jar.
				http.SetCookie(w, &http.Cookie{Name: "tracker", Value: "from-cdn"})
				body(wavBody, "")(w, r)
			}
			if tt.cdn != nil {
				o.cdn.handler = tt.cdn(o)
			}
			srv := tt.server
			srv.Origin = o.expand(srv.Origin, dead)
			srv.UnauthenticatedOrigins = nil
			for _, s := range tt.server.UnauthenticatedOrigins {
				srv.UnauthenticatedOrigins = append(srv.UnauthenticatedOrigins, o.expand(s, dead))
			}
			o.extra[cdnServer] = srv
			rec := o.ref(cdnServer, blkURI(o.expand(tt.uri, dead), tt.extra))
			refusal := o.f.Refusal(o.entry(rec))

			res, err := o.fetch(context.Background(), rec, Request{})

			if tt.want == "" {
				if err != nil {
					t.Fatalf("%s: fetch failed: %v", tt.reason, err)
				}
				if res.Bytes != int64(len(wavBody)) || res.MimeType != "audio/wav" {
					t.Errorf("result = %+v, want %d bytes of audio/wav", res, len(wavBody))
				}
				if strings.Contains(tt.extra, "digest") && !res.DigestVerified {
					t.Errorf("F8: the digest was not verified: %+v", res)
				}
				if s := o.saves(); len(s) != 1 || string(s[0].Bytes) != string(wavBody) {
					t.Errorf("F19: store holds %d copies, want the payload once", len(s))
				}
				if spent, _ := o.f.Budget(cdnServer); spent != int64(len(wavBody)) {
					t.Errorf("F5: the %q server's budget spent = %d, want %d", cdnServer, spent, len(wavBody))
				}
				if refusal != "" {
					t.Errorf("Refusal = %q, but Fetch went ahead", refusal)
				}
			} else {
				f := failureOf(t, err, tt.want)
				if f.Code != tt.want {
					t.Errorf("code = %s, want %s (%s)", f.Code, tt.want, tt.reason)
				}
				if tt.clause != "" && !strings.Contains(f.Clause, tt.clause) {
					t.Errorf("clause %q does not hold %q", f.Clause, tt.clause)
				}
				if f.Remedy.Kind() != tt.remedy {
					t.Errorf("remedy = %v (%s), want kind %d", f.Remedy.Kind(), f.Remedy, tt.remedy)
				}
				o.assertNothingKept(rec)
				o.assertCDNSafe(t, f.Clause, f.Remedy.String())
				// Refusal agrees with Fetch: a failure before dialing is
				// the refusal, one after dialing is not.
				wantRefusal := ""
				if tt.serverRequests+tt.cdnRequests == 0 && !tt.dialed {
					wantRefusal = f.Clause
				}
				if refusal != wantRefusal {
					t.Errorf("Refusal = %q, want %q", refusal, wantRefusal)
				}
			}
			if n := o.requests.Load(); n != tt.serverRequests {
				t.Errorf("requests to the server = %d, want %d (%s)", n, tt.serverRequests, tt.reason)
			}
			if n := o.cdn.requests.Load(); n != tt.cdnRequests {
				t.Errorf("requests to the cdn = %d, want %d (%s)", n, tt.cdnRequests, tt.reason)
			}
			for i, a := range o.authHeaders() {
				if want := map[bool]string{true: "Bearer " + token}[tt.bearer]; a != want {
					t.Errorf("F3: request %d to the server carried Authorization %q, want %q", i, a, want)
				}
			}
			o.assertNoCredentialSent(t)
			// The host's jar is the caller's: the fetcher neither used it
			// nor let the cdn add to it.
			u, _ := url.Parse(o.cdn.srv.URL)
			if c := o.jar.Cookies(u); len(c) != 1 || c[0].Value != jarSecret {
				t.Errorf("the host's jar now holds %v, want only its own cookie", c)
			}
			if o.cfg.Client.Jar != o.jar {
				t.Error("New changed the caller's *http.Client")
			}
			o.assertNoSecrets(jarSecret)
		})
	}
}

// TestOtherOriginsBadEntry pins the reading of Server.UnauthenticatedOrigins:
// an entry that is not a serialized http or https origin fails every fetch
// of the server's references before dialing, at its own origin too, with
// a clause and remedy that never repeat the entry (F2, F14); the
// operator's log gives the entry's position and fault, not the entry.
func TestOtherOriginsBadEntry(t *testing.T) {
	tests := []struct {
		name, entry, why string
		secrets          []string // parts of the entry no text may carry
	}{
		{"path", "http://$CDNHOST/secret-path", "has a path", []string{"secret-path"}},
		{"trailing-slash", "http://$CDNHOST/", "has a path (a trailing slash counts)", nil},
		{"userinfo", "http://cdnuser:cdn-password@$CDNHOST", "carries a user name or password", []string{"cdnuser", "cdn-password"}},
		{"ws-scheme", "ws://$CDNHOST", "does not use the http or https scheme", nil},
		{"wss-scheme", "wss://$CDNHOST", "does not use the http or https scheme", nil},
		{"no-scheme", "$CDNHOST", "is not a URL", nil},
		{"junk", "not an origin at all", "does not use the http or https scheme", []string{"not an origin"}},
		{"unparsable", "http://[::1", "is not a URL", nil},
		{"empty", "", "does not use the http or https scheme", nil},
		{"no-host", "https://", "names no host", nil},
		{"port-only", "https://:8443", "names no host", nil},
		{"query", "http://$CDNHOST?key=secret-query", "has a query", []string{"secret-query"}},
		{"empty-query", "http://$CDNHOST?", "has a query", nil},
		{"fragment", "http://$CDNHOST#secret-fragment", "has a fragment", []string{"secret-fragment"}},
		{"empty-port", "http://127.0.0.1:", "has an empty port", nil},
		{"port-zero", "http://127.0.0.1:0", "has a port outside 1 to 65535 or with a leading zero", nil},
		{"port-leading-zero", "http://127.0.0.1:08080", "has a port outside 1 to 65535 or with a leading zero", nil},
		{"port-too-large", "http://127.0.0.1:65536", "has a port outside 1 to 65535 or with a leading zero", nil},
		{"zone", "http://[fe80::1%25eth0]:8080", "is not written as scheme://host or scheme://host:port", []string{"eth0"}},
		{"non-ascii-host", "https://café.example", "has a host that is neither an ASCII host name nor an IP address", []string{"café"}},
		{"sub-delims", "https://cdn.example;secret=1", "has a host that is neither an ASCII host name nor an IP address", []string{"secret=1"}},
		{"empty-label", "https://cdn..example", "has a host that is neither an ASCII host name nor an IP address", []string{"cdn..example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOriginsEnv(t)
			o.cdn.handler = body(wavBody, "")
			entry := o.expand(tt.entry, "")
			o.extra[cdnServer] = Server{Origin: o.srv.URL + "/mcpl", Token: token,
				UnauthenticatedOrigins: []string{o.cdn.srv.URL, entry}}
			for _, uri := range []string{o.cdn.srv.URL + "/payload", o.srv.URL + "/payload"} {
				rec := o.ref(cdnServer, blkURI(uri, ""))
				refusal := o.f.Refusal(o.entry(rec))
				_, err := o.fetch(context.Background(), rec, Request{})
				f := failureOf(t, err, CodeBadServerURI)
				if f.Remedy.Kind() != RemedyAskOperator {
					t.Errorf("F14: remedy = %s, want one that asks the operator", f.Remedy)
				}
				// The server's own address is fine: the list is what the
				// operator must correct.
				if r := f.Remedy.String(); !strings.Contains(r, "list of other origins") || strings.Contains(r, "address") {
					t.Errorf("F14: remedy %q does not point the operator at the list of other origins", r)
				}
				if refusal != f.Clause {
					t.Errorf("Refusal = %q, want Fetch's clause %q", refusal, f.Clause)
				}
				for _, text := range []string{f.Clause, f.Remedy.String(), f.Error()} {
					for _, s := range append([]string{entry}, tt.secrets...) {
						if s != "" && strings.Contains(text, s) {
							t.Errorf("F14: %q carries the entry's %q", text, s)
						}
					}
				}
				o.assertCDNSafe(t, f.Clause, f.Remedy.String())
			}
			if n, m := o.requests.Load(), o.cdn.requests.Load(); n+m != 0 {
				t.Errorf("F2: requests = %d to the server, %d to the cdn; want none", n, m)
			}
			logs := o.logs.String()
			if want := "Server.UnauthenticatedOrigins[1] " + tt.why; !strings.Contains(logs, want) {
				t.Errorf("the log does not give the entry's position and fault %q:\n%s", want, logs)
			}
			for _, s := range tt.secrets {
				if strings.Contains(logs, s) {
					t.Errorf("the log carries the entry's %q:\n%s", s, logs)
				}
			}
			if len(entry) > len("https://") && strings.Contains(logs, entry) {
				t.Errorf("the log carries the entry %q:\n%s", entry, logs)
			}
		})
	}
}

// TestParseOtherOrigin pins the entries Server.UnauthenticatedOrigins
// accepts, and the origin each compares as.
func TestParseOtherOrigin(t *testing.T) {
	tests := []struct {
		entry string
		want  origin
	}{
		{"https://cdn.example", origin{"https", "cdn.example", "443"}},
		{"https://cdn.example:443", origin{"https", "cdn.example", "443"}},
		{"HTTPS://CDN.Example:8443", origin{"https", "cdn.example", "8443"}},
		{"http://cdn.example", origin{"http", "cdn.example", "80"}},
		{"http://10.0.0.7:8080", origin{"http", "10.0.0.7", "8080"}},
		{"http://[::1]:9", origin{"http", "::1", "9"}},
		{"https://xn--caf-dma.example", origin{"https", "xn--caf-dma.example", "443"}},
		{"https://my_cdn-1.example:65535", origin{"https", "my_cdn-1.example", "65535"}},
	}
	for _, tt := range tests {
		got, why := parseOtherOrigin(tt.entry)
		if why != "" || got != tt.want {
			t.Errorf("parseOtherOrigin(%q) = %+v, %q; want %+v", tt.entry, got, why, tt.want)
		}
	}
}

// TestOtherOriginsPinning pins F21 with other origins: the addresses a
// connection resolved hold the requests to the server's own origin and
// never those to an origin the host names for its references, which
// resolve as usual and are not refused for a transport that cannot be
// held to addresses.
func TestOtherOriginsPinning(t *testing.T) {
	elsewhere := []netip.Addr{netip.MustParseAddr("192.0.2.7")}
	loopback := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	tests := []struct {
		name    string
		mods    []func(*env)
		origin  bool // the server has its own Origin
		addrs   []netip.Addr
		ownCode Code // "" when a reference at the server's origin is fetched
	}{
		{name: "pinned-elsewhere", origin: true, addrs: elsewhere, ownCode: CodeNetwork},
		{name: "pinned-loopback", origin: true, addrs: loopback},
		{name: "unpinnable-transport", origin: true, addrs: loopback, ownCode: CodeNetwork,
			mods: []func(*env){withConfig(func(c *Config) {
				c.Client = &http.Client{Transport: roundTripFunc(http.DefaultTransport.RoundTrip)}
			})}},
		{name: "stdio-addrs", addrs: elsewhere},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOriginsEnv(t, tt.mods...)
			o.cdn.handler = body(wavBody, "")
			srv := Server{Token: token, Addrs: tt.addrs, UnauthenticatedOrigins: []string{o.cdn.srv.URL}}
			if tt.origin {
				srv.Origin = o.srv.URL + "/mcpl"
			}
			o.extra[cdnServer] = srv

			rec := o.ref(cdnServer, blkURI(o.cdn.srv.URL+"/payload", `,"digest":"`+wavDigest+`"`))
			if r := o.f.Refusal(o.entry(rec)); r != "" {
				t.Errorf("Refusal of the cdn reference = %q, want none", r)
			}
			res, err := o.fetch(context.Background(), rec, Request{})
			if err != nil {
				t.Fatalf("F21: the cdn reference was not fetched: the server's addresses held it: %v", err)
			}
			if !res.DigestVerified {
				t.Errorf("the digest was not verified: %+v", res)
			}
			if n := o.cdn.requests.Load(); n != 1 {
				t.Errorf("requests to the cdn = %d, want 1", n)
			}
			if !tt.origin {
				return
			}
			own := o.ref(cdnServer, blkURI(o.srv.URL+"/payload", ""))
			_, err = o.fetch(context.Background(), own, Request{})
			if tt.ownCode == "" {
				if err != nil {
					t.Fatalf("the server's own reference was not fetched: %v", err)
				}
				if got := o.authHeaders(); len(got) != 1 || got[0] != "Bearer "+token {
					t.Errorf("F3: the server's own origin got Authorization %q, want the token once", got)
				}
			} else {
				failureOf(t, err, tt.ownCode)
				if n := o.requests.Load(); n != 0 {
					t.Errorf("F21: requests to the server = %d, want 0: the addresses did not hold it", n)
				}
			}
			o.assertNoCredentialSent(t)
		})
	}
}

// TestOtherOriginsEager pins G1 with other origins: EagerPlan picks only
// references at the server's own origin, though Refusal lets a reference
// at an origin the host names be fetched when asked.
func TestOtherOriginsEager(t *testing.T) {
	o := newOriginsEnv(t)
	o.cdn.handler = body(wavBody, "")
	o.extra[cdnServer] = Server{Origin: o.srv.URL + "/mcpl", UnauthenticatedOrigins: []string{o.cdn.srv.URL}}
	o.extra["stdio-cdn"] = Server{UnauthenticatedOrigins: []string{o.cdn.srv.URL}}
	conv, err := convert.New(o.reg, convert.Policy{Refusal: o.f.Refusal})
	if err != nil {
		t.Fatal(err)
	}
	ingest := func(server string, uris ...string) *convert.Content {
		raw := make([]json.RawMessage, len(uris))
		for i, u := range uris {
			raw[i] = json.RawMessage(blkURI(u, `,"sizeBytes":19`))
		}
		return conv.Ingest(context.Background(), raw, convert.Source{Server: server, Lane: convert.LaneToolResult, Tool: "render"})
	}
	ct := ingest(cdnServer, o.cdn.srv.URL+"/a", o.srv.URL+"/b")
	plan := o.f.EagerPlan(ct)
	var got []string
	for _, id := range plan {
		rec, _ := o.reg.Lookup(id)
		got = append(got, rec.URI)
	}
	if len(got) != 1 || got[0] != o.srv.URL+"/b" {
		t.Errorf("G1: eager plan = %q, want only the server's own %q", got, o.srv.URL+"/b")
	}
	for _, id := range ct.IDs() {
		rec, _ := o.reg.Lookup(id)
		if r := o.f.Refusal(o.entry(rec)); r != "" {
			t.Errorf("Refusal(%s) = %q, want none", rec.URI, r)
		}
	}
	if plan := o.f.EagerPlan(ingest("stdio-cdn", o.cdn.srv.URL+"/c")); len(plan) != 0 {
		t.Errorf("G1: eager plan for a stdio server = %v, want none", plan)
	}
	if n, m := o.requests.Load(), o.cdn.requests.Load(); n+m != 0 {
		t.Errorf("F1: planning made %d and %d requests", n, m)
	}
}

// TestOtherOriginsOrder pins where Server.UnauthenticatedOrigins enters
// F2's order: a stdio server with other origins passes the network
// address check; its entries are read after the server's own address and
// before the reference's user name and password; the origin check that
// consults them keeps its place before expiry.
func TestOtherOriginsOrder(t *testing.T) {
	const bad = "http://cdn.example/"
	tests := []struct {
		name, reason string
		server       Server // $CDN replaced in UnauthenticatedOrigins
		uri, extra   string
		want         Code
		clause       string
	}{
		{name: "bad-uri-before-bad-entry", reason: "the reference's parse comes before the entries",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{bad}},
			uri:    "http://[::1", want: CodeBadURI},
		{name: "bad-server-before-bad-entry", reason: "the server's own address comes before the entries",
			server: Server{Origin: brokenOrigin, UnauthenticatedOrigins: []string{bad}},
			uri:    "$CDN/x", want: CodeBadServerURI, clause: "server's own address"},
		{name: "bad-entry-before-credentials", reason: "the entries come before the reference's userinfo",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN", bad}},
			uri:    "http://u:p@$CDNHOST/x", want: CodeBadServerURI, clause: "list of other origins"},
		{name: "stdio-with-origins-bad-uri", reason: "a stdio server with origins is judged on the reference's address",
			server: Server{UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "http://[::1", want: CodeBadURI},
		{name: "stdio-with-origins-scheme", reason: "a stdio server with origins is judged on the reference's scheme",
			server: Server{UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "ftp://$CDNHOST/x", want: CodeSchemeNotAllowed},
		{name: "origin-before-expiry", reason: "an origin not listed before expiry",
			server: Server{Origin: "$ORIGIN/mcpl", UnauthenticatedOrigins: []string{"$CDN"}},
			uri:    "http://elsewhere.example/x", extra: `,"expiresAt":"2000-01-01"`, want: CodeCrossOrigin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOriginsEnv(t)
			o.cdn.handler = body(wavBody, "")
			srv := tt.server
			srv.Origin = o.expand(srv.Origin, "")
			srv.UnauthenticatedOrigins = nil
			for _, s := range tt.server.UnauthenticatedOrigins {
				srv.UnauthenticatedOrigins = append(srv.UnauthenticatedOrigins, o.expand(s, ""))
			}
			o.extra[cdnServer] = srv
			rec := o.ref(cdnServer, blkURI(o.expand(tt.uri, ""), tt.extra))
			refusal := o.f.Refusal(o.entry(rec))
			_, err := o.fetch(context.Background(), rec, Request{})
			f := failureOf(t, err, tt.want)
			if f.Code != tt.want || !strings.Contains(f.Clause, tt.clause) {
				t.Errorf("F2: failure %s %q, want %s holding %q (%s)", f.Code, f.Clause, tt.want, tt.clause, tt.reason)
			}
			if refusal != f.Clause {
				t.Errorf("Refusal = %q, want Fetch's clause %q", refusal, f.Clause)
			}
			if n, m := o.requests.Load(), o.cdn.requests.Load(); n+m != 0 {
				t.Errorf("F2: requests = %d to the server, %d to the cdn; want none", n, m)
			}
		})
	}
}

// TestOriginCache: a server origin read through the fetcher's cache is
// the one a fresh parse gives, the second time as the first, for good and
// bad strings alike, and the cache stops growing at its bound.
func TestOriginCache(t *testing.T) {
	inputs := []string{
		"https://files.example", "HTTPS://Files.Example:443", "http://127.0.0.1:8080/ignored/path",
		"wss://[::1]:9000", "ftp://files.example", "https://", "not a url", "%zz", "",
		"https://user:pw@files.example",
	}
	var c originCache
	for round := range 2 {
		for _, in := range inputs {
			var want parsedOrigin
			if u, err := url.Parse(in); err == nil {
				want.o, want.ok = originOf(u)
			}
			o, ok := c.parse(in)
			if o != want.o || ok != want.ok {
				t.Errorf("round %d: parse(%q) = %+v, %t; want %+v, %t", round, in, o, ok, want.o, want.ok)
			}
		}
	}
	for i := range 2 * maxOrigins {
		c.parse(fmt.Sprintf("https://h%d.example", i))
	}
	if n := c.n.Load(); n != maxOrigins {
		t.Errorf("the cache holds %d origins after %d distinct ones; want its bound %d", n, 2*maxOrigins+len(inputs), maxOrigins)
	}
	stored := 0
	c.m.Range(func(any, any) bool { stored++; return true })
	if stored != maxOrigins {
		t.Errorf("the cache's map holds %d entries; want %d", stored, maxOrigins)
	}
}
