package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestNew pins what New refuses: a missing registry, Servers or Store, and
// any negative number in the Config, which never means "unlimited".
func TestNew(t *testing.T) {
	reg, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	servers := ServersFunc(func(string) (Server, error) { return Server{}, CodeUnknownServer })
	store := NewMemoryStore()
	if f, err := New(reg, servers, store, Config{}); err != nil || f == nil {
		t.Fatalf("New with the zero Config = %v, %v", f, err)
	}
	for _, tt := range []struct {
		name    string
		reg     *refs.Registry
		servers Servers
		store   Store
		cfg     Config
	}{
		{"nil registry", nil, servers, store, Config{}},
		{"nil servers", reg, nil, store, Config{}},
		{"nil store", reg, servers, nil, Config{}},
		{"negative MaxBytes", reg, servers, store, Config{MaxBytes: -1}},
		{"negative Ceiling", reg, servers, store, Config{Ceiling: -1}},
		{"negative Budget", reg, servers, store, Config{Budget: -1}},
		{"negative BudgetWindow", reg, servers, store, Config{BudgetWindow: -time.Hour}},
		{"negative Timeout", reg, servers, store, Config{Timeout: -time.Second}},
		{"negative EagerCeiling", reg, servers, store, Config{EagerCeiling: -1}},
		{"negative EagerCap", reg, servers, store, Config{EagerCap: -1}},
		{"negative ChunkSize", reg, servers, store, Config{ChunkSize: -1}},
		{"ChunkSize past MaxChunkSize", reg, servers, store, Config{ChunkSize: MaxChunkSize + 1}},
		{"nil ServersFunc", reg, ServersFunc(nil), store, Config{}},
		{"nil *DirStore", reg, servers, (*DirStore)(nil), Config{}},
		{"nil *MemoryStore", reg, servers, (*MemoryStore)(nil), Config{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.reg, tt.servers, tt.store, tt.cfg)
			if err == nil || f != nil {
				t.Errorf("New = %v, %v; want an error and no Fetcher", f, err)
			}
			if !errors.Is(err, ErrBadConfig) {
				t.Errorf("New's error %v does not match ErrBadConfig", err)
			}
		})
	}
	if _, err := New(reg, servers, store, Config{ChunkSize: MaxChunkSize}); err != nil {
		t.Errorf("New with ChunkSize MaxChunkSize = %v, want a Fetcher", err)
	}
}

// TestRefusalOrder pins F2's order where a record fails several checks.
func TestRefusalOrder(t *testing.T) {
	tests := []struct {
		name, reason string
		fetchNever   bool
		forHost      bool
		server       string
		block        string
		budget       int64
		spend        int64
		ceiling      int64
		want         Code
	}{
		{name: "never-before-unknown-server", reason: "the withhold check comes first", server: "gone",
			block: blk(`,"disposition":"never"`), want: CodeWithheld},
		{name: "never-ignored-fetch-never", reason: "under FetchNever a never reference is judged like any other (F18)", fetchNever: true, server: "-",
			block: blk(`,"disposition":"never"`), want: CodeNoServer},
		{name: "never-ignored-for-host", reason: "a request for the host itself judges a never reference like any other (F18)", forHost: true, server: "-",
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
				e.cfg.FetchNever = tt.fetchNever
				e.cfg.Budget = tt.budget
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
			_, err := e.fetch(context.Background(), rec, Request{MaxBytes: 1, ForHost: tt.forHost})
			f := failureOf(t, err, tt.want)
			if f.Code != tt.want {
				t.Errorf("code = %s, want %s (%s)", f.Code, tt.want, tt.reason)
			}
			if n := e.requests.Load(); n != 0 {
				t.Errorf("requests = %d, want 0", n)
			}
		})
	}
}

// TestRefusalEntry pins Refusal's reading of a view entry: an entry whose
// id is not the record the registry holds for its uri is refused as
// gone, never judged as another record.
func TestRefusalEntry(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	rec := e.ref(serverName, blk(""))
	if r := e.f.Refusal(e.entry(rec)); r != "" {
		t.Errorf("Refusal of a fetchable entry = %q, want none", r)
	}
	stale := e.entry(rec)
	stale.ID = "ref_notthisone"
	if r, want := e.f.Refusal(stale), failGone("").Clause; r != want {
		t.Errorf("Refusal of an entry with another id = %q, want %q", r, want)
	}
	unheld := convert.Entry{ID: "ref_nowhere", Testimony: convert.Testimony{URI: e.srv.URL + "/elsewhere", Present: convert.FieldURI}}
	if r, want := e.f.Refusal(unheld), failGone("").Clause; r != want {
		t.Errorf("Refusal of an entry the registry does not hold = %q, want %q", r, want)
	}
	// It is what a converter's policy takes.
	_ = convert.Policy{Refusal: e.f.Refusal}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("Refusal made %d requests", n)
	}
	if logs := e.logs.String(); logs != "" {
		t.Errorf("Refusal logged:\n%s", logs)
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
			if r.task != taskCheckCredentials {
				t.Errorf("statusRemedy(%d) task = %d, want credentials", code, r.task)
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
		{"TryLater", Remedy{kind: RemedyTryLater}},
		{"TryLaterThenAsk(connection)", Remedy{kind: RemedyTryLaterThenAsk, task: taskCheckConnection}},
		{"WaitForFreshReference", Remedy{kind: RemedyFreshReference}},
		{"WaitForFreshReferenceThenAsk(credentials)", Remedy{kind: RemedyFreshReferenceThenAsk, task: taskCheckCredentials}},
		{"TryLaterThenWaitForFreshReference", Remedy{kind: RemedyTryLaterThenFreshReference}},
		{"PassLargerMaxBytes(129,1000)", largerMaxBytes(129, 1000)},
		{"PassLargerMaxBytes(129,129)", largerMaxBytes(129, 129)},
		{"PassLargerMaxBytes(129,5)", largerMaxBytes(129, 5)},
		{"AskOperator(connection)", Remedy{kind: RemedyAskOperator, task: taskCheckConnection}},
		{"AskOperator(credentials)", Remedy{kind: RemedyAskOperator, task: taskCheckCredentials}},
		{"AskOperator(budget)", Remedy{kind: RemedyAskOperator, task: taskRenewBudget}},
		{"AskOperator(add server)", Remedy{kind: RemedyAskOperator, task: taskAddServer}},
		{"AskOperator(server address)", Remedy{kind: RemedyAskOperator, task: taskCorrectServerAddress}},
		{"AskOperator(other origins)", Remedy{kind: RemedyAskOperator, task: taskCorrectOtherOrigins}},
		{"TryLaterThenAsk(other origins)", Remedy{kind: RemedyTryLaterThenAsk, task: taskCorrectOtherOrigins}},
		{"AskOperator(storage)", Remedy{kind: RemedyAskOperator, task: taskCheckStorage}},
		{"WaitForBudget", Remedy{kind: RemedyWaitForBudget, task: taskRenewBudget}},
		{"BudgetTooSmall(49)", budgetTooSmall(49)},
		{"BudgetTooSmall(1)", budgetTooSmall(1)},
		{"BudgetTooSmall(-5)", budgetTooSmall(-5)},
		{"NothingWillChange", Remedy{kind: RemedyNothing}},
		{"HostCeilingHolds", Remedy{kind: RemedyHostCeiling}},
		{"FixRequest", Remedy{kind: RemedyFixRequest}},
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

	if r := budgetTooSmall(-5); r.UpTo() != 0 || r.task != taskRenewBudget {
		t.Errorf("budgetTooSmall(-5) = up to %d, task %d; want 0 and the budget task", r.UpTo(), r.task)
	}
	if r := largerMaxBytes(129, 5); r.AtLeast() != 129 || r.UpTo() != 129 {
		t.Errorf("largerMaxBytes(129, 5) = %d..%d, want 129..129", r.AtLeast(), r.UpTo())
	}
	f := fail(CodeExpired, "", "the reference is expired: its expiry time has passed")
	if got, want := f.Sentence("ref_abc"), "couldn't fetch ref_abc: the reference is expired: its expiry time has passed. "+(Remedy{kind: RemedyFreshReference}).String(); got != want {
		t.Errorf("Sentence = %q, want %q", got, want)
	}
}

// allCodes lists every Code the package declares.
var allCodes = []Code{
	CodeInvalidRequest, CodeWithheld, CodeNoServer, CodeUnknownServer, CodeServerLookup,
	CodeNoNetworkAddress, CodeBadURI, CodeBadServerURI, CodeCredentialsInURL, CodeSchemeNotAllowed,
	CodeCrossOrigin, CodeExpired, CodeHostCeiling, CodeBudgetSpent, CodeOverBudget, CodeTooLarge,
	CodeRedirect, CodeStatus, CodeNoContent, CodeBadEncoding, CodeDigestMismatch, CodeTimeout,
	CodeCanceled, CodeNetwork, CodeStorage, CodeGone,
}

// TestCodes pins F14 for the taxonomy: every code carries a remedy (no
// failure can be built without one), a Code is an error value, and a
// failure matches its own code and no other.
func TestCodes(t *testing.T) {
	if len(codes) != len(allCodes) {
		t.Errorf("the code table has %d codes, the package declares %d", len(codes), len(allCodes))
	}
	for _, c := range allCodes {
		info, ok := codes[c]
		if !ok || info.remedy.Kind() == 0 {
			t.Errorf("code %s has no remedy in the table", c)
		}
		if got, want := c.Error(), "fetch: "+string(c); got != want {
			t.Errorf("%s.Error() = %q, want %q", c, got, want)
		}
		f := fail(c, "fixture", "a clause")
		wrapped := fmt.Errorf("host: %w", f)
		for _, other := range allCodes {
			if got := errors.Is(wrapped, other); got != (other == c) {
				t.Errorf("errors.Is(failure %s, %s) = %t", c, other, got)
			}
		}
		if got := errors.Is(f, context.DeadlineExceeded); got != (c == CodeTimeout) {
			t.Errorf("errors.Is(failure %s, context.DeadlineExceeded) = %t", c, got)
		}
		if got := errors.Is(f, context.Canceled); got != (c == CodeCanceled) {
			t.Errorf("errors.Is(failure %s, context.Canceled) = %t", c, got)
		}
		if f.Timeout() != (c == CodeTimeout) {
			t.Errorf("failure %s: Timeout() = %t", c, f.Timeout())
		}
		if got, want := f.Error(), "fetch: a clause"; got != want {
			t.Errorf("failure %s: Error() = %q, want %q", c, got, want)
		}
	}
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
		{name: "03-verified-never", reason: "under FetchNever a never reference is fetched and saved, and its record carries the copy (F18)",
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
			// The success vectors run the conformance profile (F18):
			// FetchNever, so vector 03's never reference is fetched. The
			// zero Config's refusals are TestFailures' withheld rows.
			e := newEnv(t, tt.handler, withFetchNever)
			rec := e.ref(serverName, tt.block)
			res, err := e.fetch(context.Background(), rec, Request{MaxBytes: tt.max})
			if err != nil {
				t.Fatalf("fetch failed: %v (%s)", err, tt.reason)
			}
			ext := extension(tt.wantMime)
			want := Result{Copy: convert.Copy{Path: rec.ID + ext, Bytes: int64(len(tt.wantBytes)), MimeType: tt.wantMime, DigestVerified: tt.wantVerified}}
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
			if got := e.authHeaders()[0]; got != "Bearer "+token {
				t.Errorf("Authorization = %q, want the server's bearer token", got)
			}
			// Every successful fetch records its facts, a never record's
			// included (F19, vector 03).
			cur, _ := e.reg.Lookup(rec.ID)
			if diff := cmp.Diff(&res.Copy, cur.Copy); diff != "" {
				t.Errorf("record's copy (-want +got):\n%s", diff)
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
	e := newEnv(t, body(wavBody, "audio/wav"), withConfig(func(c *Config) { c.Now = clock }))
	rec := e.ref(serverName, blk(`,"expiresAt":"2030-01-02T00:00:00Z"`))
	first, err := e.fetch(context.Background(), rec, Request{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(48 * time.Hour)
	mu.Unlock()
	if r := e.f.Refusal(e.entry(rec)); r != "" {
		t.Errorf("Refusal of an expired record with a copy = %q, want none", r)
	}
	again, err := e.fetch(context.Background(), rec, Request{})
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
	e.reg.MarkNever(context.Background(), rec.URI, serverName)
	_, err = e.fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, CodeWithheld); f.Code != CodeWithheld {
		t.Errorf("code = %s, want withheld", f.Code)
	}
}

// TestConformanceMarkWhileSaving pins the conformance profile (F18, F19,
// vector 03): under FetchNever, a mark landing as the copy is saved does
// not fail the fetch, and the record carries the copy's verified facts
// like any other.
func TestConformanceMarkWhileSaving(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"), withFetchNever, func(e *env) {
		e.store = &markingStore{MemoryStore: e.mem, e: e, at: "commit"}
	})
	e.rec = e.ref(serverName, blk(""))
	res, err := e.fetch(context.Background(), e.rec, Request{})
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
	if cur.Copy == nil || *cur.Copy != res.Copy {
		t.Errorf("F19: the record's verified facts = %+v, want those of %+v", cur.Copy, res)
	}
}

// TestConformanceNeverFetched pins vector 03 in the library: under
// FetchNever, a reference marked never before the fetch is fetched, and
// its record carries the verified facts (F18, F19).
func TestConformanceNeverFetched(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"), withFetchNever)
	e.rec = e.ref(serverName, blk(`,"disposition":"never"`))
	if r := e.f.Refusal(e.entry(e.rec)); r != "" {
		t.Errorf("Refusal under FetchNever = %q, want none", r)
	}
	res, err := e.fetch(context.Background(), e.rec, Request{})
	if err != nil {
		t.Fatalf("fetch failed: %v", err)
	}
	cur, _ := e.reg.Lookup(e.rec.ID)
	if diff := cmp.Diff(&res.Copy, cur.Copy); diff != "" {
		t.Errorf("F19: the never record's verified facts (-want +got):\n%s", diff)
	}
}

// TestRemarkedUnderNewRecord pins F18: the fetcher reads the uri's
// current mark. A record let go is no longer fetched by its old id, and a
// uri marked again under a fresh record stays refused.
func TestRemarkedUnderNewRecord(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	old := e.ref(serverName, blk(""))
	e.reg.Remove(old.ID)
	fresh := e.ref(serverName, blk(`,"disposition":"never"`))
	_, err := e.fetch(context.Background(), old, Request{})
	if !errors.Is(err, refs.ErrUnknownReference) {
		t.Errorf("fetch by the let-go id: err = %v, want an unknown reference", err)
	}
	_, err = e.fetch(context.Background(), fresh, Request{})
	if f := failureOf(t, err, CodeWithheld); f.Code != CodeWithheld {
		t.Errorf("code = %s, want withheld", f.Code)
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

// TestMarkStoreWithholds pins F18 across a fleet: a mark another host put
// in the shared mark store after the record was registered stops the
// fetch before dialing, and one that lands during the download stops the
// copy being saved.
func TestMarkStoreWithholds(t *testing.T) {
	marks := refs.NewMemoryMarks(0)
	// The other host of the fleet marks through its own registry.
	other, err := refs.New(refs.Config{Marks: marks})
	if err != nil {
		t.Fatal(err)
	}
	var e *env
	var markDuring atomic.Bool
	e = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if markDuring.Load() {
			other.MarkNever(r.Context(), e.rec.URI, "elsewhere")
		}
		w.Write(wavBody)
	}, func(e *env) { e.regCfg.Marks = marks })

	before := e.ref(serverName, blkURI("$ORIGIN/before", ""))
	other.MarkNever(context.Background(), before.URI, "elsewhere")
	if e.reg.MarkedHere(before.URI) {
		t.Fatal("the mark reached this host's memory; the test needs it in the store only")
	}
	_, err = e.fetch(context.Background(), before, Request{})
	failureOf(t, err, CodeWithheld)
	if n := e.requests.Load(); n != 0 {
		t.Errorf("a uri the mark store holds was dialed: %d requests", n)
	}

	markDuring.Store(true)
	e.rec = e.ref(serverName, blkURI("$ORIGIN/during", ""))
	_, err = e.fetch(context.Background(), e.rec, Request{})
	failureOf(t, err, CodeWithheld)
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	e.assertNothingKept(e.rec)
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
	_, err := e.fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, CodeRedirect); f.Status != http.StatusFound {
		t.Errorf("status = %d, want 302", f.Status)
	}
	if targetHits != 0 {
		t.Errorf("the redirect target got %d requests", targetHits)
	}
	if fmt.Sprintf("%p", host.CheckRedirect) != fmt.Sprintf("%p", follow) || host.Transport != nil {
		t.Error("the host's client was changed")
	}
	if auth := e.authHeaders(); len(auth) != 1 || auth[0] != "Bearer "+token {
		t.Errorf("Authorization headers = %q", auth)
	}
}

// TestNoCredentialWithoutToken: a server with no token gets no
// Authorization header.
func TestNoCredentialWithoutToken(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	e.extra["open"] = Server{Origin: e.srv.URL}
	rec := e.ref("open", blk(""))
	if _, err := e.fetch(context.Background(), rec, Request{}); err != nil {
		t.Fatal(err)
	}
	if auth := e.authHeaders(); auth[0] != "" {
		t.Errorf("Authorization = %q, want none", auth[0])
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
			_, err := e.fetch(context.Background(), rec, Request{})
			if tt.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			f := failureOf(t, err, CodeNetwork)
			// The clause gives the kind of cause in fixed words (F13, F21):
			// the address was not one the connection resolved.
			if !strings.Contains(f.Clause, "not one its connection resolved") {
				t.Errorf("clause does not give the kind of cause: %s", f.Clause)
			}
			if !strings.Contains(e.logs.String(), "resolved") {
				t.Errorf("the log does not give the cause:\n%s", e.logs)
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
		_, err := e.fetch(context.Background(), rec, Request{})
		failureOf(t, err, CodeNetwork)
		if n := e.requests.Load(); n != 0 {
			t.Errorf("requests = %d, want 0", n)
		}
	})
}

// TestPinnedAddrsDeprecatedDials pins F21 for a host transport that dials
// through the deprecated Dial or DialTLS fields, which net/http still uses
// when the context forms are unset. The host's dialer here reaches the
// test server whatever address it is asked for, as a rebound name would;
// the pin must refuse that connection all the same.
func TestPinnedAddrsDeprecatedDials(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", secure), func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				requests.Add(1)
				w.Write(wavBody)
			}))
			if secure {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			tr := srv.Client().Transport.(*http.Transport).Clone()
			at := srv.Listener.Addr().String()
			if secure {
				//lint:ignore SA1019 the deprecated field is what this test is about
				tr.DialTLS = func(network, _ string) (net.Conn, error) {
					return tls.Dial(network, at, tr.TLSClientConfig)
				}
			} else {
				//lint:ignore SA1019 the deprecated field is what this test is about
				tr.Dial = func(network, _ string) (net.Conn, error) { return net.Dial(network, at) }
			}
			reg, err := refs.New(refs.Config{})
			if err != nil {
				t.Fatal(err)
			}
			servers := ServersFunc(func(string) (Server, error) {
				return Server{Origin: srv.URL, Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.7")}}, nil
			})
			f, err := New(reg, servers, NewMemoryStore(), Config{Client: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			b := convert.Classify([]byte(`{"type":"resource","uri":"` + srv.URL + `/take.wav"}`))
			e := reg.Register(context.Background(), convert.Registration{Testimony: b.Testimony, Server: "s"})
			_, err = f.Fetch(context.Background(), e.ID, Request{Timeout: 5 * time.Second})
			failureOf(t, err, CodeNetwork)
			if n := requests.Load(); n != 0 {
				t.Errorf("the server answered %d requests over a connection to an address not resolved", n)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fakeClock is a Config.Now the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestBudget pins F5's per-server budget: it counts decoded bytes across
// fetches and renews only when its window has passed.
func TestBudget(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, body(wavBody, ""), withConfig(func(c *Config) {
		c.Budget = 30
		c.BudgetWindow = time.Hour
		c.Now = clock.Now
	}))
	a := e.ref(serverName, blkURI("$ORIGIN/a", ""))
	b := e.ref(serverName, blkURI("$ORIGIN/b", ""))
	if _, err := e.fetch(context.Background(), a, Request{}); err != nil {
		t.Fatal(err)
	}
	if spent, limit := e.f.Budget(serverName); spent != 19 || limit != 30 {
		t.Errorf("Budget = %d of %d, want 19 of 30", spent, limit)
	}
	// b claims no size; its response announces 19 bytes with 11 left, so
	// it is refused before a byte is read, and nothing more is charged.
	_, err := e.fetch(context.Background(), b, Request{})
	f := failureOf(t, err, CodeOverBudget)
	if f.Code != CodeOverBudget || f.Limit != 11 || f.Got != 19 {
		t.Errorf("code %s, limit %d, got %d; want over-budget, 11 left, 19 announced", f.Code, f.Limit, f.Got)
	}
	if f.Remedy.Kind() != RemedyWaitForBudget || f.Remedy.task != taskRenewBudget {
		t.Errorf("remedy = %s, want to wait for the budget, or the operator to raise it", f.Remedy)
	}
	if spent, limit := e.f.Budget(serverName); spent != 19 || limit != 30 {
		t.Errorf("Budget after the refusal = %d of %d, want 19 of 30", spent, limit)
	}
	// Within the window the budget stays spent.
	clock.advance(59 * time.Minute)
	_, err = e.fetch(context.Background(), b, Request{})
	failureOf(t, err, CodeOverBudget)
	// Past it, it renews.
	clock.advance(time.Minute)
	if _, err := e.fetch(context.Background(), b, Request{}); err != nil {
		t.Errorf("fetch after the window passed: %v", err)
	}
	if spent, limit := e.f.Budget(serverName); spent != 19 || limit != 30 {
		t.Errorf("Budget in the new window = %d of %d, want 19 of 30", spent, limit)
	}
}

// TestBudgetWindow pins the default window: a spent budget refuses until
// DefaultBudgetWindow has passed on Config.Now, then the fetch succeeds.
func TestBudgetWindow(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, body(wavBody, ""), withConfig(func(c *Config) {
		c.Budget = 19
		c.Now = clock.Now
	}))
	a := e.ref(serverName, blkURI("$ORIGIN/a", `,"sizeBytes":19`))
	b := e.ref(serverName, blkURI("$ORIGIN/b", `,"sizeBytes":19`))
	if _, err := e.fetch(context.Background(), a, Request{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.fetch(context.Background(), b, Request{})
	failureOf(t, err, CodeBudgetSpent)
	if r := e.f.Refusal(e.entry(b)); r == "" {
		t.Error("Refusal of a reference whose server's budget is spent = none")
	}
	clock.advance(DefaultBudgetWindow - time.Second)
	_, err = e.fetch(context.Background(), b, Request{})
	failureOf(t, err, CodeBudgetSpent)
	clock.advance(time.Second)
	if r := e.f.Refusal(e.entry(b)); r != "" {
		t.Errorf("Refusal once the window passed = %q, want none", r)
	}
	res, err := e.fetch(context.Background(), b, Request{})
	if err != nil || res.Bytes != 19 {
		t.Errorf("fetch once the window passed = %+v, %v", res, err)
	}
	if n := e.requests.Load(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

// TestDirStoreCloseWithPending pins F22 across Close: a host that closes
// a DirStore while copies are still being written (a fetch under way)
// must not be left with their temporary files. Close lets them finish,
// and a copy committed meanwhile can still be removed (the fetcher
// withdraws one its record no longer wants); only after the last copy is
// the directory released, and no new copy begins after Close.
func TestDirStoreCloseWithPending(t *testing.T) {
	ds, dir, copies := pendingCopies(t, "ref_a.bin", "ref_b.bin")
	aborted, committed := copies[0], copies[1]
	ctx := t.Context()
	if err := ds.Close(); err != nil {
		t.Fatalf("Close with copies pending = %v", err)
	}
	if _, err := ds.Begin(ctx, "ref_c.bin", ""); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Begin after Close = %v, want os.ErrClosed", err)
	}
	path, err := committed.Commit(ctx)
	if err != nil || path != filepath.Join(ds.Dir(), "ref_b.bin") {
		t.Errorf("Commit after Close = %q, %v", path, err)
	}
	if err := ds.Remove(ctx, path); err != nil {
		t.Errorf("Remove while a copy is still pending = %v", err)
	}
	if err := aborted.Abort(ctx); err != nil {
		t.Errorf("Abort after Close = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directory holds %d entries, want none: %v", len(entries), entries)
	}
	if err := ds.Remove(ctx, path); err != nil {
		t.Errorf("Remove of a copy already gone, once the directory is released = %v", err)
	}
	if err := ds.Close(); err != nil {
		t.Errorf("a second Close = %v", err)
	}
}

// TestDirStoreBeginWaitsForCreate: DirStore creates its temporary files
// one at a time. A Begin waiting for its turn gives up when its context
// ends, and then holds nothing: no file, and no hold that would keep Close
// from releasing the directory (F22).
func TestDirStoreBeginWaitsForCreate(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ds.creating <- struct{}{} // another Begin is creating its file
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan error, 1)
	go func() {
		p, err := ds.Begin(ctx, "ref_a.bin", "")
		if p != nil {
			p.Abort(t.Context())
		}
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("Begin whose context ended while it waited = %v, want context.Canceled", err)
	}
	<-ds.creating
	p, err := ds.Begin(t.Context(), "ref_b.bin", "")
	if err != nil {
		t.Fatalf("Begin once the other create is done = %v", err)
	}
	if err := p.Abort(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	ds.mu.Lock()
	released := ds.released
	ds.mu.Unlock()
	if !released {
		t.Error("Close left the directory held: the abandoned Begin kept its hold")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directory holds %d entries, want none: %v", len(entries), entries)
	}
}

// TestZeroDirStoreBegin: Begin on a DirStore not made by NewDirStore
// fails at once, even with a context that never ends, rather than wait for
// a turn to create that never comes.
func TestZeroDirStoreBegin(t *testing.T) {
	var ds DirStore
	done := make(chan error, 1)
	go func() {
		_, err := safeBegin(context.Background(), &ds, "ref_a.bin", "")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Begin on a zero DirStore succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Begin on a zero DirStore is still waiting after 10 s")
	}
}

// TestDirStoreWithdrawAfterClose: a fetch under way when the host closed
// its DirStore commits the only pending copy, which releases the
// directory; its record then refuses the copy, and the fetcher withdraws
// it through Remove. The file must not stay behind (F20, F22). Remove
// opens the directory again for that, but never a directory put in the
// store's place since.
func TestDirStoreWithdrawAfterClose(t *testing.T) {
	ds, dir, copies := pendingCopies(t, "ref_a.bin")
	p := copies[0]
	ctx := t.Context()
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	path, err := p.Commit(ctx)
	if err != nil {
		t.Fatalf("Commit after Close = %v", err)
	}
	if err := ds.Remove(ctx, path); err != nil {
		t.Errorf("withdrawing the copy after the directory was released = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directory holds %v, want nothing", entries)
	}

	// A directory put at the store's path after Close is not the store's.
	dir2 := t.TempDir()
	ds2, err := NewDirStore(dir2)
	if err != nil {
		t.Fatal(err)
	}
	ds2.Close()
	moved := dir2 + ".old"
	if err := os.Rename(dir2, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir2, 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir2, "ref_b.bin")
	if err := os.WriteFile(planted, []byte("not the store's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ds2.Remove(ctx, planted); err == nil {
		t.Error("Remove after Close deleted a file in a directory that replaced the store's")
	}
	if _, err := os.Stat(planted); err != nil {
		t.Errorf("the planted file is gone: %v", err)
	}
}

// pendingCopies opens a DirStore in a directory of its own and begins a
// copy, with a few bytes written, under each name.
func pendingCopies(t *testing.T, names ...string) (*DirStore, string, []Pending) {
	t.Helper()
	dir := t.TempDir()
	ds, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	var copies []Pending
	for _, name := range names {
		p, err := ds.Begin(t.Context(), name, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("payload")); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, p)
	}
	return ds, dir, copies
}

// TestDirStore pins F22: writes go through a temporary name, a failed
// fetch leaves no file, and names cannot escape.
func TestDirStore(t *testing.T) {
	if _, err := NewDirStore(""); err == nil {
		t.Error("NewDirStore(\"\") opened the working directory")
	}
	if _, err := NewDirStore(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("NewDirStore opened a directory that does not exist")
	}
	dir := t.TempDir()
	ds, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ctx := context.Background()
	e := newEnv(t, body(wavBody, "audio/wav"), withStore(ds), func(e *env) { e.mem = nil })
	good := e.ref(serverName, blkURI("$ORIGIN/good", `,"digest":"`+wavDigest+`"`))
	res, err := e.fetch(ctx, good, Request{})
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
	_, err = e.fetch(ctx, bad, Request{})
	failureOf(t, err, CodeDigestMismatch)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, d := range entries {
		names = append(names, d.Name())
	}
	if diff := cmp.Diff([]string{good.ID + ".wav"}, names); diff != "" {
		t.Errorf("directory after a failed fetch (-want +got):\n%s", diff)
	}
	for _, name := range []string{"", ".hidden", "../x", "a/b", `a\b`, "..", strings.Repeat("a", 256)} {
		if _, err := ds.Begin(ctx, name, ""); err == nil {
			t.Errorf("Begin(%q) accepted a name that is not plain", name)
		}
	}
	if err := ds.Remove(ctx, filepath.Join(dir, "..", "etc-passwd")); err == nil {
		t.Error("Remove accepted a path outside the store")
	}
	if err := ds.Remove(ctx, res.Path); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if err := ds.Remove(ctx, res.Path); err != nil {
		t.Errorf("Remove of a removed copy: %v", err)
	}
	p, _ := ds.Begin(ctx, "x.bin", "")
	p.Write([]byte("partial"))
	if err := p.Abort(ctx); err != nil {
		t.Errorf("Abort: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("aborted copy left %d entries", len(entries))
	}
	// Abort after a successful Commit changes nothing.
	q, _ := ds.Begin(ctx, "y.bin", "")
	q.Write([]byte("kept"))
	path, err := q.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Abort(ctx); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "kept" {
		t.Errorf("committed file after Abort = %q, %v", b, err)
	}
}

// TestGoneWithDirStore pins F20 end to end: a copy committed for a record
// evicted during the fetch is removed from disk.
func TestGoneWithDirStore(t *testing.T) {
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
	_, err = e.fetch(context.Background(), e.rec, Request{})
	failureOf(t, err, CodeGone)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the copy of a let-go record left %d entries", len(entries))
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

// TestCauseWords pins F13's two halves: the words a clause gives are a
// fixed phrase per kind of cause, never the error's own text, and the
// operator's detail keeps that text but loses every query, userinfo, path
// and token.
func TestCauseWords(t *testing.T) {
	const uri = "http://h.example:8080/p?sig=abc123"
	u, _ := url.Parse(uri)
	tg := target{rec: refs.Record{URI: uri}, u: u, conn: Server{Token: "tok-secret"}}
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: uri, Err: err} }
	dial := func(err error) error { return wrap(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"dns", dial(&net.DNSError{Err: "no such host", Name: "h.example"}), "the server's host name could not be resolved"},
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "the connection was refused"},
		{"reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), "the connection was reset"},
		{"certificate", wrap(x509.UnknownAuthorityError{}), "the server's certificate was not accepted"},
		{"early-eof", wrap(io.ErrUnexpectedEOF), "the connection closed early"},
		{"timeout", dial(&timeoutError{}), "the connection timed out"},
		{"dial", dial(errors.New("h.example:8080 is not reachable")), "the connection could not be made"},
		{"other", wrap(errors.New("something at h.example:8080 broke")), "the connection failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := causeOf(tt.err, tg)
			if c.words != tt.want {
				t.Errorf("words = %q, want %q", c.words, tt.want)
			}
			if c.detail == "" {
				t.Error("no detail for the operator")
			}
			for _, bad := range []string{"abc123", "tok-secret", "/p"} {
				if strings.Contains(c.detail, bad) {
					t.Errorf("detail %q carries %q", c.detail, bad)
				}
			}
		})
	}
	err := fmt.Errorf("Get %q: dial tcp: lookup h.example: no such host (tok-secret) via http://user:pw@proxy.example/x?y=z", uri)
	c := causeOf(err, tg)
	for _, bad := range []string{"abc123", "tok-secret", "user:pw", "y=z", "/x"} {
		if strings.Contains(c.detail, bad) {
			t.Errorf("detail %q carries %q", c.detail, bad)
		}
	}
	if !strings.Contains(c.detail, "no such host") {
		t.Errorf("detail %q lost the error's words", c.detail)
	}
	for _, bad := range []string{"h.example", "8080", "no such host", "proxy"} {
		if strings.Contains(c.words, bad) {
			t.Errorf("words %q carry the error's text %q", c.words, bad)
		}
	}
}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout at h.example:8080" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// TestMemoryStore pins the observer's store: commits are recorded and
// removals forget them.
func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryStore()
	p, _ := m.Begin(ctx, "ref_a.wav", "audio/wav")
	p.Write(wavBody)
	path, err := p.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []SavedCopy{{Name: "ref_a.wav", Path: "ref_a.wav", MimeType: "audio/wav", Bytes: wavBody}}
	if diff := cmp.Diff(want, m.Saves()); diff != "" {
		t.Errorf("saves (-want +got):\n%s", diff)
	}
	if err := p.Abort(ctx); err != nil || len(m.Saves()) != 1 {
		t.Errorf("Abort after Commit = %v and left %d saves, want nil and 1", err, len(m.Saves()))
	}
	q, _ := m.Begin(ctx, "ref_b.bin", "")
	q.Write([]byte("x"))
	q.Abort(ctx)
	if _, err := q.Commit(ctx); err == nil {
		t.Error("an aborted copy could still be committed")
	}
	m.Remove(ctx, path)
	if n := len(m.Saves()); n != 0 {
		t.Errorf("%d saves after removal and abort", n)
	}
	if _, err := m.Begin(ctx, "../x", ""); err == nil {
		t.Error("MemoryStore accepted a path")
	}
}

// TestUnknownID: an id the registry does not hold, let go before the call
// or never issued, is an unknown reference, and nothing is dialed for it
// (F20, R4).
func TestUnknownID(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	rec := e.ref(serverName, blk(""))
	e.reg.Remove(rec.ID)
	for _, id := range []string{rec.ID, "ref_neverissued"} {
		_, err := e.f.Fetch(context.Background(), id, Request{})
		var unknown *refs.UnknownError
		if !errors.As(err, &unknown) || unknown.ID != id || !errors.Is(err, refs.ErrUnknownReference) {
			t.Errorf("Fetch(%q) = %v, want an unknown reference for that id", id, err)
		}
		var f *Failure
		if errors.As(err, &f) {
			t.Errorf("Fetch(%q) returned a *Failure: %v", id, err)
		}
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

// TestRefusalOfEmptyURI pins Refusal's promise to give the clause a fetch
// would be refused with for a reference whose uri is empty: the registry
// keeps a record for it, but finds no record by the empty uri, so the
// stub said the host had let go of a reference it still held.
func TestRefusalOfEmptyURI(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	rec := e.ref(serverName, `{"type":"resource","uri":""}`)
	_, err := e.fetch(context.Background(), rec, Request{})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("fetch of an empty uri = %v, want a *Failure", err)
	}
	ent, ok := e.reg.Entry(rec.ID)
	if !ok {
		t.Fatal("setup: no entry for the record")
	}
	if r := e.f.Refusal(ent); r != f.Clause {
		t.Errorf("Refusal = %q, want the fetch's clause %q", r, f.Clause)
	}
}

// unreadableMarks is a mark store that cannot be read or written.
type unreadableMarks struct{}

func (unreadableMarks) Mark(context.Context, string, string) error {
	return errors.New("mark store down")
}
func (unreadableMarks) Marked(context.Context, string) (bool, error) {
	return false, errors.New("mark store down")
}

// TestUnconfirmedNeverClause pins the clause of a reference withheld only
// because the mark store could not be read when it arrived (N7): the
// fetch is refused for the model as for any never, but no server is said
// to have asked for it, and Refusal gives the same words.
func TestUnconfirmedNeverClause(t *testing.T) {
	e := newEnv(t, body(wavBody, ""), func(e *env) { e.regCfg.Marks = unreadableMarks{} })
	rec := e.ref(serverName, blk(""))
	_, err := e.fetch(context.Background(), rec, Request{})
	f := failureOf(t, err, CodeWithheld)
	if want := failUnchecked(serverName).Clause; f.Clause != want {
		t.Errorf("N7: clause = %q, want %q", f.Clause, want)
	}
	if r := e.f.Refusal(e.entry(rec)); r != f.Clause {
		t.Errorf("N7: Refusal = %q, want the fetch's clause %q", r, f.Clause)
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("N1: a withheld fetch made %d requests", n)
	}
}

// waitingMarks is a mark store that answers only when its context ends,
// as a client of a store that stopped responding does.
type waitingMarks struct{ hung atomic.Bool }

func (*waitingMarks) Mark(context.Context, string, string) error { return nil }

func (m *waitingMarks) Marked(ctx context.Context, _ string) (bool, error) {
	if m.hung.Load() {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return false, nil
}

// TestMarkQuestionWithinDeadline pins F12 for the question a model's
// fetch asks the mark store before it dials: the question gets the call's
// deadline, so a store that stopped answering cannot hold the caller past
// it. The reference is withheld, since its marks could not be read (N7).
func TestMarkQuestionWithinDeadline(t *testing.T) {
	marks := &waitingMarks{}
	e := newEnv(t, body(wavBody, "audio/wav"), func(e *env) { e.regCfg.Marks = marks })
	rec := e.ref(serverName, blk(""))
	marks.hung.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := e.f.Fetch(context.Background(), rec.ID, Request{Timeout: 100 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		f := failureOf(t, err, CodeWithheld)
		if f.Remedy.Kind() != RemedyTryLater {
			t.Errorf("remedy %s, want to try later", f.Remedy)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("F12: the fetch still waits on the mark store 10 s after its 100 ms deadline")
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("%d requests, want none: the marks could not be read", n)
	}
}
