package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/refs"
)

// TestRefusalOrder pins F2's order where a record fails several checks.
func TestRefusalOrder(t *testing.T) {
	tests := []struct {
		name, reason string
		hook         bool
		server       string
		block        string
		budget       int64
		spend        int64
		ceiling      int64
		want         Code
	}{
		{name: "never-before-unknown-server", reason: "the withhold check comes first", hook: true, server: "gone",
			block: blk(`,"disposition":"never"`), want: CodeWithheld},
		{name: "never-ignored-without-hook", reason: "without a hook a never reference is judged like any other", server: "-",
			block: blk(`,"disposition":"never"`), want: CodeNoServer},
		{name: "unknown-server-before-bad-uri", reason: "server faults come before the reference's address",
			server: "gone", block: blkURI("http://[::1", ""), want: CodeUnknownServer},
		{name: "stdio-before-bad-uri", reason: "no network address comes before the address parse",
			server: "stdio", block: blkURI("http://[::1", ""), want: CodeNoNetworkAddress},
		{name: "bad-uri-before-bad-server", reason: "the reference's parse comes before the server's",
			server: "broken", block: blkURI("http://[::1", ""), want: CodeBadURI},
		{name: "bad-server-before-credentials", reason: "the server's parse comes before userinfo",
			server: "broken", block: blkURI("http://u:p@$HOST/x", ""), want: CodeBadServerURI},
		{name: "credentials-before-scheme", reason: "userinfo is refused before the scheme",
			block: blkURI("ws://u:p@$HOST/x", ""), want: CodeCredentialsInURL},
		{name: "scheme-before-origin", reason: "the scheme is refused before the origin",
			block: blkURI("ftp://elsewhere.example/x", ""), want: CodeSchemeNotAllowed},
		{name: "origin-before-expiry", reason: "another origin before expiry",
			block: blkURI("http://elsewhere.example/x", `,"expiresAt":"2000-01-01"`), want: CodeCrossOrigin},
		{name: "expiry-before-ceiling", reason: "expiry before the claimed size",
			block: blk(`,"expiresAt":"2000-01-01","sizeBytes":9007199254740991`), want: CodeExpired},
		{name: "server-fault-before-ceiling", reason: "a server fault before a claim past the ceiling",
			server: "gone", block: blk(`,"sizeBytes":9007199254740991`), want: CodeUnknownServer},
		{name: "ceiling-before-spent-budget", reason: "the host ceiling before a spent budget",
			ceiling: 1000, budget: 10, spend: 10, block: blk(`,"sizeBytes":1001`), want: CodeHostCeiling},
		{name: "spent-before-claim-over-left", reason: "a spent budget before a claim over what is left",
			budget: 10, spend: 10, block: blk(`,"sizeBytes":5`), want: CodeBudgetSpent},
		{name: "over-left-before-max", reason: "a claim over the budget left before the call's max bytes",
			budget: 100, spend: 50, block: blk(`,"sizeBytes":60`), want: CodeOverBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, body(wavBody, ""), func(e *env) {
				if tt.hook {
					e.cfg.Withhold = e.reg
				}
				e.cfg.Budget = tt.budget
				if tt.budget == 0 {
					e.cfg.Budget = -1
				}
				e.cfg.Ceiling = tt.ceiling
			})
			server := tt.server
			switch server {
			case "":
				server = serverName
			case "-":
				server = ""
			}
			rec := e.ref(server, tt.block)
			if tt.spend > 0 {
				e.f.charge(serverName, tt.spend)
			}
			_, err := e.f.Fetch(context.Background(), rec, Request{MaxBytes: 1})
			f := failureOf(t, err, tt.want.sentinel())
			if f.Code != tt.want {
				t.Errorf("code = %s, want %s (%s)", f.Code, tt.want, tt.reason)
			}
			if n := e.requests.Load(); n != 0 {
				t.Errorf("requests = %d, want 0", n)
			}
		})
	}
}

// TestStatusRemedy pins F11 as a pure function, then its texts.
func TestStatusRemedy(t *testing.T) {
	want := map[int]RemedyKind{
		400: RemedyFreshReference, 401: RemedyAskOperator, 403: RemedyFreshReferenceThenAsk,
		404: RemedyFreshReference, 405: RemedyFreshReference, 408: RemedyTryLater, 409: RemedyTryLater,
		410: RemedyFreshReference, 418: RemedyFreshReference, 423: RemedyTryLater, 425: RemedyTryLater,
		429: RemedyTryLater, 451: RemedyFreshReference, 500: RemedyTryLater, 501: RemedyNothing,
		502: RemedyTryLater, 503: RemedyTryLater, 504: RemedyTryLater, 505: RemedyNothing, 599: RemedyTryLater,
	}
	var out strings.Builder
	for _, code := range []int{400, 401, 403, 404, 405, 408, 409, 410, 418, 423, 425, 429, 451, 500, 501, 502, 503, 504, 505, 599} {
		r := statusRemedy(code)
		if r.Kind() != want[code] {
			t.Errorf("statusRemedy(%d) = %d, want %d", code, r.Kind(), want[code])
		}
		if code == 401 || code == 403 {
			if r.Task() != TaskCheckCredentials {
				t.Errorf("statusRemedy(%d) task = %d, want credentials", code, r.Task())
			}
		}
		f := failStatus("fixture", code)
		fmt.Fprintf(&out, "%d: %s. %s\n", code, f.Clause, f.Remedy)
	}
	golden(t, "status", out.String())
}

// TestRemedyTexts pins every remedy's sentence.
func TestRemedyTexts(t *testing.T) {
	all := []struct {
		name string
		r    Remedy
	}{
		{"TryLater", TryLater()},
		{"TryLaterThenAsk(connection)", TryLaterThenAsk(TaskCheckConnection)},
		{"WaitForFreshReference", WaitForFreshReference()},
		{"WaitForFreshReferenceThenAsk(credentials)", WaitForFreshReferenceThenAsk(TaskCheckCredentials)},
		{"TryLaterThenWaitForFreshReference", TryLaterThenWaitForFreshReference()},
		{"PassLargerMaxBytes(129,1000)", PassLargerMaxBytes(129, 1000)},
		{"PassLargerMaxBytes(129,129)", PassLargerMaxBytes(129, 129)},
		{"PassLargerMaxBytes(129,5)", PassLargerMaxBytes(129, 5)},
		{"AskOperator(connection)", AskOperator(TaskCheckConnection)},
		{"AskOperator(credentials)", AskOperator(TaskCheckCredentials)},
		{"AskOperator(budget)", AskOperator(TaskRenewBudget)},
		{"AskOperator(add server)", AskOperator(TaskAddServer)},
		{"AskOperator(server address)", AskOperator(TaskCorrectServerAddress)},
		{"AskOperator(storage)", AskOperator(TaskCheckStorage)},
		{"BudgetTooSmall(49)", BudgetTooSmall(49)},
		{"BudgetTooSmall(1)", BudgetTooSmall(1)},
		{"NothingWillChange", NothingWillChange()},
		{"HostCeilingHolds", HostCeilingHolds()},
	}
	var out strings.Builder
	for _, r := range all {
		s := r.r.String()
		if !strings.HasSuffix(s, ".") || strings.Contains(s, "  ") {
			t.Errorf("%s: %q is not a finished sentence", r.name, s)
		}
		fmt.Fprintf(&out, "%s: %s\n", r.name, s)
	}
	golden(t, "remedies", out.String())

	f := NewFailure(CodeExpired, "the reference is expired: its expiry time has passed", WaitForFreshReference())
	if got, want := f.Sentence("ref_abc"), "couldn't fetch ref_abc: the reference is expired: its expiry time has passed. "+WaitForFreshReference().String(); got != want {
		t.Errorf("Sentence = %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewFailure accepted a zero Remedy")
		}
	}()
	NewFailure(CodeExpired, "x", Remedy{})
}

// TestFetchVectors runs the successful fetch vectors of RFC-005 §11.
func TestFetchVectors(t *testing.T) {
	wavGz := append([]byte("RIFF0000WAVE"), []byte(strings.Repeat("x", 500))...)
	// wavLong spans the sniffed head and several read chunks.
	wavLong := append([]byte("RIFF0000WAVE"), benchPayload(3*DefaultChunkSize+100)...)
	tests := []struct {
		name, reason string
		block        string
		handler      http.HandlerFunc
		max          int64
		wantMime     string
		wantBytes    []byte
		wantVerified bool
	}{
		{name: "03-verified-ref", reason: "a verified ref payload is saved and recorded",
			block:   blk(`,"sizeBytes":19,"disposition":"ref","digest":"` + wavDigest + `"`),
			handler: body(wavBody, "audio/wav"), max: 128,
			wantMime: "audio/wav", wantBytes: wavBody, wantVerified: true},
		{name: "03-verified-never", reason: "without a hook a never reference is fetched and saved (F18); the registry keeps no copy on a marked record",
			block:   blk(`,"sizeBytes":19,"disposition":"never","digest":"` + wavDigest + `"`),
			handler: body(wavBody, "audio/wav"), max: 128,
			wantMime: "audio/wav", wantBytes: wavBody, wantVerified: true},
		{name: "13-observed-mime", reason: "sniffed bytes beat a declared and a claimed image/png",
			block:   `{"type":"resource","uri":"$ORIGIN/payload","name":"attachment.wav","mimeType":"image/png","sizeBytes":12}`,
			handler: body(wavBody, "image/png"), max: 128,
			wantMime: "audio/wav", wantBytes: wavBody},
		{name: "14-path-label", reason: "the server's name is never a path component",
			block:   `{"type":"resource","uri":"$ORIGIN/payload","name":"../../.ssh/authorized_keys","mimeType":"audio/wav","sizeBytes":12}`,
			handler: body(wavBody, ""), max: 128,
			wantMime: "audio/wav", wantBytes: wavBody},
		{name: "18-label-device", reason: "a device name is never a path component",
			block:   `{"type":"resource","uri":"$ORIGIN/payload","name":"CON","mimeType":"audio/wav","sizeBytes":12}`,
			handler: body(wavBody, ""), max: 128,
			wantMime: "audio/wav", wantBytes: wavBody},
		{name: "19-gzip-identity", reason: "size and digest describe the decoded octets",
			block:   blk(`,"sizeBytes":512,"digest":"sha256:lpLtodXIVBMEdKIHuQpBcKep8qRs7_PZ2yMPG55ZsIU"`),
			handler: gzipBody(gzipped(t, wavGz)), max: 1024,
			wantMime: "audio/wav", wantBytes: wavGz, wantVerified: true},
		{name: "multi-chunk", reason: "bytes past the sniffed head and across several chunks are all stored, and verified (F6, F8, F19)",
			block:   blk(`,"digest":"` + digestOf(wavLong) + `"`),
			handler: body(wavLong, "audio/wav"), max: 1 << 20,
			wantMime: "audio/wav", wantBytes: wavLong, wantVerified: true},
		{name: "gzip-multi-member", reason: "concatenated gzip members decode as one payload",
			block:    blk(""),
			handler:  gzipBody(append(gzipped(t, wavGz[:100]), gzipped(t, wavGz[100:])...)),
			wantMime: "audio/wav", wantBytes: wavGz},
		{name: "empty-body", reason: "a 200 with no bytes is a zero-byte payload",
			block:    blk(`,"sizeBytes":0`),
			handler:  body(nil, "application/json"),
			wantMime: "application/json", wantBytes: []byte{}},
		{name: "text-keeps-declared", reason: "text that sniffs as plain keeps a textual declared type",
			block:    blk(""),
			handler:  body([]byte(`{"a":1}`), "application/json; charset=utf-8"),
			wantMime: "application/json", wantBytes: []byte(`{"a":1}`)},
		{name: "claim-type-fallback", reason: "unrecognisable bytes with no Content-Type take the claim",
			block: blk(""),
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil // keep net/http from sniffing
				w.Write([]byte{0, 1, 2, 3, 0xfe})
			},
			wantMime: "audio/wav", wantBytes: []byte{0, 1, 2, 3, 0xfe}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No withhold hook: the success vectors run the conformance
			// profile. The hook's refusals are TestFailures' withheld rows.
			e := newEnv(t, tt.handler)
			rec := e.ref(serverName, tt.block)
			res, err := e.f.Fetch(context.Background(), rec, Request{MaxBytes: tt.max})
			if err != nil {
				t.Fatalf("fetch failed: %v (%s)", err, tt.reason)
			}
			ext := extension(tt.wantMime)
			want := Result{Path: rec.ID + ext, Bytes: int64(len(tt.wantBytes)), MimeType: tt.wantMime, DigestVerified: tt.wantVerified}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			saves := e.mem.Saves()
			if len(saves) != 1 {
				t.Fatalf("%d saves, want 1", len(saves))
			}
			if got := saves[0]; got.Name != rec.ID+ext || got.MimeType != tt.wantMime || string(got.Bytes) != string(tt.wantBytes) {
				t.Errorf("saved %q (%s, %d bytes), want %q (%s, %d bytes)", got.Name, got.MimeType, len(got.Bytes), rec.ID+ext, tt.wantMime, len(tt.wantBytes))
			}
			if strings.ContainsAny(saves[0].Name, `/\`) || strings.Contains(saves[0].Name, serverName) {
				t.Errorf("storage name %q has a separator or the server's name", saves[0].Name)
			}
			if n := e.requests.Load(); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
			if got := e.auth[0]; got != "Bearer "+token {
				t.Errorf("Authorization = %q, want the server's bearer token", got)
			}
			// Every successful fetch records its facts, a never record's
			// included (F19, vector 03).
			cur, _ := e.reg.Lookup(rec.ID)
			wantSaved := &refs.Saved{Path: res.Path, Bytes: res.Bytes, MimeType: res.MimeType, DigestVerified: res.DigestVerified, Against: rec.Testimony}
			if diff := cmp.Diff(wantSaved, cur.Saved); diff != "" {
				t.Errorf("record's saved facts (-want +got):\n%s", diff)
			}
			e.assertNoSecrets()
		})
	}
}

// TestSavedCopy pins F16: a saved copy is served without dialing, even
// once expired, unless never-marked.
func TestSavedCopy(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, body(wavBody, "audio/wav"), withConfig(func(c *Config) { c.Now = clock }), withHook)
	rec := e.ref(serverName, blk(`,"expiresAt":"2030-01-02T00:00:00Z"`))
	first, err := e.f.Fetch(context.Background(), rec, Request{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(48 * time.Hour)
	mu.Unlock()
	if r := e.f.Refusal(rec); r != nil {
		t.Errorf("Refusal of an expired record with a copy = %v, want nil", r)
	}
	again, err := e.f.Fetch(context.Background(), rec, Request{})
	if err != nil {
		t.Fatalf("the saved copy of an expired reference was not served: %v", err)
	}
	want := first
	want.FromCopy = true
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("served copy (-want +got):\n%s", diff)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	e.reg.MarkNever(rec.URI, serverName)
	_, err = e.f.Fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, ErrWithheld); f.Code != CodeWithheld {
		t.Errorf("code = %s, want withheld", f.Code)
	}
}

// TestWithheldWithoutHook pins the conformance profile (F18, F19, vector
// 03): a mark landing as the copy is saved does not fail the fetch, and the
// record carries the copy's verified facts like any other.
func TestWithheldWithoutHook(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"), func(e *env) {
		e.store = &markingStore{MemoryStore: e.mem, e: e, at: "commit"}
	})
	e.rec = e.ref(serverName, blk(""))
	res, err := e.f.Fetch(context.Background(), e.rec, Request{})
	if err != nil {
		t.Fatalf("fetch failed: %v", err)
	}
	if len(e.mem.Saves()) != 1 || res.Path == "" {
		t.Errorf("copy not kept: %+v, %d saves", res, len(e.mem.Saves()))
	}
	cur, _ := e.reg.Lookup(e.rec.ID)
	if !cur.Never {
		t.Fatal("the store did not mark the record during the fetch")
	}
	if cur.Saved == nil || cur.Saved.Path != res.Path || cur.Saved.Bytes != res.Bytes || cur.Saved.MimeType != res.MimeType {
		t.Errorf("F19: the record's verified facts = %+v, want those of %+v", cur.Saved, res)
	}
}

// TestNeverFetchedWithoutHook pins vector 03 in the library: without a
// withhold hook, a reference marked never before the fetch is fetched,
// and its record carries the verified facts (F18, F19).
func TestNeverFetchedWithoutHook(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"))
	e.rec = e.ref(serverName, blk(`,"disposition":"never"`))
	res, err := e.f.Fetch(context.Background(), e.rec, Request{})
	if err != nil {
		t.Fatalf("fetch failed: %v", err)
	}
	cur, _ := e.reg.Lookup(e.rec.ID)
	want := &refs.Saved{Path: res.Path, Bytes: res.Bytes, MimeType: res.MimeType, DigestVerified: res.DigestVerified, Against: cur.Testimony}
	if diff := cmp.Diff(want, cur.Saved); diff != "" {
		t.Errorf("F19: the never record's verified facts (-want +got):\n%s", diff)
	}
}

// TestRemarkedUnderNewRecord pins F18: the fetcher reads the uri's current
// mark, so a uri whose record was dropped and then re-marked under a fresh
// record stays refused.
func TestRemarkedUnderNewRecord(t *testing.T) {
	e := newEnv(t, body(wavBody, ""), withHook)
	old := e.ref(serverName, blk(""))
	e.reg.Remove(old.ID)
	e.ref(serverName, blk(`,"disposition":"never"`))
	_, err := e.f.Fetch(context.Background(), old, Request{})
	if f := failureOf(t, err, ErrWithheld); f.Code != CodeWithheld {
		t.Errorf("code = %s, want withheld", f.Code)
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

// TestCredentialScope pins F3 and F4 with a host client that would follow
// redirects: the copy refuses them, the caller's client is unchanged, and
// the redirect target sees nothing.
func TestCredentialScope(t *testing.T) {
	var targetHits int
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits++
		w.Write(wavBody)
	}))
	defer target.Close()
	follow := func(*http.Request, []*http.Request) error { return nil }
	host := &http.Client{CheckRedirect: follow}
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/payload", http.StatusFound)
	}, withConfig(func(c *Config) { c.Client = host }))
	rec := e.ref(serverName, blk(""))
	_, err := e.f.Fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, ErrRedirect); f.Status != http.StatusFound {
		t.Errorf("status = %d, want 302", f.Status)
	}
	if targetHits != 0 {
		t.Errorf("the redirect target got %d requests", targetHits)
	}
	if fmt.Sprintf("%p", host.CheckRedirect) != fmt.Sprintf("%p", follow) || host.Transport != nil {
		t.Error("the host's client was changed")
	}
	if len(e.auth) != 1 || e.auth[0] != "Bearer "+token {
		t.Errorf("Authorization headers = %q", e.auth)
	}
}

// TestNoCredentialWithoutToken: a server with no token gets no
// Authorization header.
func TestNoCredentialWithoutToken(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	e.extra["open"] = Server{Origin: e.srv.URL}
	rec := e.ref("open", blk(""))
	if _, err := e.f.Fetch(context.Background(), rec, Request{}); err != nil {
		t.Fatal(err)
	}
	if e.auth[0] != "" {
		t.Errorf("Authorization = %q, want none", e.auth[0])
	}
}

// TestDefaultClient pins F21's defaults.
func TestDefaultClient(t *testing.T) {
	c, own := baseClient(nil)
	tr, ok := c.Transport.(*http.Transport)
	if !own || !ok {
		t.Fatalf("default transport is %T", c.Transport)
	}
	if tr.Proxy != nil {
		t.Error("the default transport takes a proxy")
	}
	if !tr.DisableCompression || tr.MaxResponseHeaderBytes != maxResponseHeaderBytes || tr.TLSHandshakeTimeout == 0 {
		t.Errorf("default transport not bounded: %+v", tr)
	}
	if c.CheckRedirect == nil {
		t.Error("the default client follows redirects")
	}
}

// TestPinnedAddrs pins F21: given the addresses a connection resolved, the
// fetcher dials only those.
func TestPinnedAddrs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		addrs  []netip.Addr
		wantOK bool
	}{
		{"resolved", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true},
		{"mapped", []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, true},
		{"elsewhere", []netip.Addr{netip.MustParseAddr("192.0.2.7")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, body(wavBody, ""))
			e.extra["pinned"] = Server{Origin: e.srv.URL, Token: token, Addrs: tt.addrs}
			rec := e.ref("pinned", blk(""))
			_, err := e.f.Fetch(context.Background(), rec, Request{})
			if tt.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			f := failureOf(t, err, ErrNetwork)
			if !strings.Contains(f.Clause, "resolved") {
				t.Errorf("clause does not give the cause: %s", f.Clause)
			}
			if n := e.requests.Load(); n != 0 {
				t.Errorf("requests = %d, want 0", n)
			}
		})
	}
	t.Run("unpinnable-transport", func(t *testing.T) {
		e := newEnv(t, body(wavBody, ""), withConfig(func(c *Config) {
			c.Client = &http.Client{Transport: roundTripFunc(http.DefaultTransport.RoundTrip)}
		}))
		e.extra["pinned"] = Server{Origin: e.srv.URL, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
		rec := e.ref("pinned", blk(""))
		_, err := e.f.Fetch(context.Background(), rec, Request{})
		failureOf(t, err, ErrNetwork)
		if n := e.requests.Load(); n != 0 {
			t.Errorf("requests = %d, want 0", n)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestBudget pins F5's per-server budget: it counts decoded bytes across
// fetches and renews only when the host says so.
func TestBudget(t *testing.T) {
	e := newEnv(t, body(wavBody, ""), withConfig(func(c *Config) { c.Budget = 30 }))
	a := e.ref(serverName, blkURI("$ORIGIN/a", ""))
	b := e.ref(serverName, blkURI("$ORIGIN/b", ""))
	if _, err := e.f.Fetch(context.Background(), a, Request{}); err != nil {
		t.Fatal(err)
	}
	if spent, limit := e.f.Budget(serverName); spent != 19 || limit != 30 {
		t.Errorf("Budget = %d of %d, want 19 of 30", spent, limit)
	}
	// b claims no size; its response announces 19 bytes with 11 left, so
	// it is refused before a byte is read, and nothing more is charged.
	_, err := e.f.Fetch(context.Background(), b, Request{})
	f := failureOf(t, err, ErrBudget)
	if f.Code != CodeOverBudget || f.Limit != 11 || f.Got != 19 {
		t.Errorf("code %s, limit %d, got %d; want over-budget, 11 left, 19 announced", f.Code, f.Limit, f.Got)
	}
	if f.Remedy.Kind() != RemedyAskOperator || f.Remedy.Task() != TaskRenewBudget {
		t.Errorf("remedy = %s, want the operator to renew the budget", f.Remedy)
	}
	if spent, limit := e.f.Budget(serverName); spent != 19 || limit != 30 {
		t.Errorf("Budget after the refusal = %d of %d, want 19 of 30", spent, limit)
	}
	e.f.RenewBudget(serverName, 0)
	if _, err := e.f.Fetch(context.Background(), b, Request{}); err != nil {
		t.Errorf("fetch after renewal: %v", err)
	}
}

// TestDirStore pins F22: writes go through a temporary name, a failed
// fetch leaves no file, and names cannot escape.
func TestDirStore(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	e := newEnv(t, body(wavBody, "audio/wav"), withStore(ds), func(e *env) { e.mem = nil })
	good := e.ref(serverName, blkURI("$ORIGIN/good", `,"digest":"`+wavDigest+`"`))
	res, err := e.f.Fetch(context.Background(), good, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(ds.Dir(), good.ID+".wav"); res.Path != want {
		t.Errorf("path = %q, want %q", res.Path, want)
	}
	if b, err := os.ReadFile(res.Path); err != nil || string(b) != string(wavBody) {
		t.Errorf("saved file = %q, %v", b, err)
	}
	bad := e.ref(serverName, blkURI("$ORIGIN/bad", `,"digest":"sha256:2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz_o"`))
	_, err = e.f.Fetch(context.Background(), bad, Request{})
	failureOf(t, err, ErrDigestMismatch)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, d := range entries {
		names = append(names, d.Name())
	}
	if diff := cmp.Diff([]string{good.ID + ".wav"}, names); diff != "" {
		t.Errorf("directory after a failed fetch (-want +got):\n%s", diff)
	}
	for _, name := range []string{"", ".hidden", "../x", "a/b", `a\b`, "..", strings.Repeat("a", 256)} {
		if _, err := ds.Begin(context.Background(), name, ""); err == nil {
			t.Errorf("Begin(%q) accepted a name that is not plain", name)
		}
	}
	if err := ds.Remove(filepath.Join(dir, "..", "etc-passwd")); err == nil {
		t.Error("Remove accepted a path outside the store")
	}
	if err := ds.Remove(res.Path); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if err := ds.Remove(res.Path); err != nil {
		t.Errorf("Remove of a removed copy: %v", err)
	}
	p, _ := ds.Begin(context.Background(), "x.bin", "")
	p.Write([]byte("partial"))
	if err := p.Abort(); err != nil {
		t.Errorf("Abort: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("aborted copy left %d entries", len(entries))
	}
}

// TestStaleWithDirStore pins F20 end to end: a copy committed for a record
// evicted during the fetch is removed from disk.
func TestStaleWithDirStore(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	var e *env
	e = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		e.reg.Remove(e.rec.ID)
		w.Write(wavBody)
	}, withStore(ds), func(e *env) { e.mem = nil })
	e.rec = e.ref(serverName, blk(""))
	_, err = e.f.Fetch(context.Background(), e.rec, Request{})
	failureOf(t, err, ErrStale)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("stale copy left %d entries", len(entries))
	}
	if !strings.Contains(e.logs.String(), "removed a copy no record names") {
		t.Errorf("the removal was not logged:\n%s", e.logs)
	}
}

// TestSniff pins F9's table and F10's extensions.
func TestSniff(t *testing.T) {
	tests := []struct {
		name, head, contentType, claim, want, ext string
	}{
		{"wav", "RIFF\x10\x00\x00\x00WAVEfmt ", "", "", "audio/wav", ".wav"},
		{"wave-alias-declared", "\x00\x01", "audio/wave", "", "audio/wav", ".wav"},
		{"x-wav-claim", "\x00\x01", "", "audio/x-wav", "audio/wav", ".wav"},
		{"vnd-wave", "\x00\x01", "AUDIO/VND.WAVE; codecs=1", "", "audio/wav", ".wav"},
		{"png-over-claim", "\x89PNG\r\n\x1a\n....", "text/plain", "audio/wav", "image/png", ".png"},
		{"flac", "fLaC\x00\x00", "", "", "audio/flac", ".flac"},
		{"mp3", "ID3\x03\x00", "", "", "audio/mpeg", ".mp3"},
		{"pdf", "%PDF-1.7", "", "", "application/pdf", ".pdf"},
		{"html", "<!DOCTYPE html><html>", "image/png", "", "text/html", ".html"},
		{"text-plain", "hello", "image/png", "", "text/plain", ".txt"},
		{"text-csv", "a,b\n1,2", "text/csv", "", "text/csv", ".csv"},
		{"unknown-declared", "\x00\x01", "application/x-thing", "", "application/x-thing", ".bin"},
		{"cleaned-declared", "\x00\x01", "audio/\u202ewav", "image/png", "audio/wav", ".wav"},
		{"unusable-declared", "\x00\x01", "not a type", "image/png", "image/png", ".png"},
		{"nothing", "\x00\x01", "", "", "application/octet-stream", ".bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := observedType([]byte(tt.head), tt.contentType, tt.claim)
			if got != tt.want {
				t.Errorf("observedType(%+q, %+q, %+q) = %+q, want %+q", tt.head, tt.contentType, tt.claim, got, tt.want)
			}
			if e := extension(got); e != tt.ext {
				t.Errorf("extension(%q) = %q, want %q", got, e, tt.ext)
			}
		})
	}
}

// TestCauseWords pins F13's scrubbing: a cause keeps its words but loses
// every query, userinfo and token.
func TestCauseWords(t *testing.T) {
	f := &Fetcher{}
	u, _ := http.NewRequest("GET", "http://h.example:8080/p?sig=abc123", nil)
	tg := target{rec: refs.Record{URI: "http://h.example:8080/p?sig=abc123"}, u: u.URL, conn: Server{Token: "tok-secret"}}
	got := f.causeWords(fmt.Errorf("Get %q: dial tcp: lookup h.example: no such host (tok-secret) via http://user:pw@proxy.example/x?y=z", "http://h.example:8080/p?sig=abc123"), tg)
	for _, bad := range []string{"abc123", "tok-secret", "user:pw", "y=z"} {
		if strings.Contains(got, bad) {
			t.Errorf("cause %q carries %q", got, bad)
		}
	}
	if !strings.Contains(got, "no such host") {
		t.Errorf("cause %q lost its words", got)
	}
}

// TestMemoryStore pins the observer's store: commits are recorded and
// removals forget them.
func TestMemoryStore(t *testing.T) {
	m := NewMemoryStore()
	p, _ := m.Begin(context.Background(), "ref_a.wav", "audio/wav")
	p.Write(wavBody)
	path, err := p.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := []SavedCopy{{Name: "ref_a.wav", Path: "ref_a.wav", MimeType: "audio/wav", Bytes: wavBody}}
	if diff := cmp.Diff(want, m.Saves()); diff != "" {
		t.Errorf("saves (-want +got):\n%s", diff)
	}
	q, _ := m.Begin(context.Background(), "ref_b.bin", "")
	q.Write([]byte("x"))
	q.Abort()
	if _, err := q.Commit(); err == nil {
		t.Error("an aborted copy could still be committed")
	}
	m.Remove(path)
	if n := len(m.Saves()); n != 0 {
		t.Errorf("%d saves after removal and abort", n)
	}
	if _, err := m.Begin(context.Background(), "../x", ""); err == nil {
		t.Error("MemoryStore accepted a path")
	}
}

// TestGoneBeforeDialing: a record the registry let go before the call is
// not dialed for, since nothing could be saved for it (F20).
func TestGoneBeforeDialing(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	rec := e.ref(serverName, blk(""))
	e.reg.Remove(rec.ID)
	_, err := e.f.Fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, ErrStale); f.Code != CodeStale {
		t.Errorf("code = %s, want stale", f.Code)
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}
