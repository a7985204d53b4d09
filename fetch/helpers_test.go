package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcplrefs/refcore/internal/logtest"

	goldenfile "github.com/mcplrefs/refcore/internal/golden"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

const (
	serverName = "fixture"
	token      = "fixture-secret-token"
	// brokenOrigin is the "broken" server's address, which no clause may
	// repeat.
	brokenOrigin = "tcp://127.0.0.1:1/x"
)

// env is one fetcher against one loopback server, with a registry, a
// memory store and captured logs.
type env struct {
	t        *testing.T
	srv      *httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	auth     []string
	handler  http.HandlerFunc
	reg      *refs.Registry
	regCfg   refs.Config
	store    Store
	mem      *MemoryStore
	f        *Fetcher
	logs     *logtest.Buffer
	cfg      Config
	extra    map[string]Server
	rec      refs.Record // the record under test, for handlers
	cancel   context.CancelFunc
	// lookup, if set, is called with each server name the fetcher looks
	// up, before the answer: a test's way in between the fetcher's checks.
	lookup func(name string)
}

// newEnv starts a server answering with h and a fetcher configured by cfg
// (its Logger is filled in). The zero Config withholds references a server
// marked never from the model (F18); a test of the conformance profile
// sets FetchNever with withFetchNever.
func newEnv(t *testing.T, h http.HandlerFunc, mods ...func(*env)) *env {
	t.Helper()
	e := &env{t: t, handler: h, logs: &logtest.Buffer{}, extra: map[string]Server{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.requests.Add(1)
		e.mu.Lock()
		e.auth = append(e.auth, r.Header.Get("Authorization"))
		e.mu.Unlock()
		e.handler(w, r)
	}))
	t.Cleanup(e.srv.Close)
	e.mem = NewMemoryStore()
	e.store = e.mem
	for _, m := range mods {
		m(e)
	}
	reg, err := refs.New(e.regCfg)
	if err != nil {
		t.Fatal(err)
	}
	e.reg = reg
	e.cfg.Logger = e.logs.Logger()
	e.f, err = New(e.reg, ServersFunc(e.server), e.store, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func withConfig(mod func(*Config)) func(*env) { return func(e *env) { mod(&e.cfg) } }

// withFetchNever runs the conformance profile (F18, vector 03): references
// a server marked never are fetched and saved like any other.
func withFetchNever(e *env) { e.cfg.FetchNever = true }

func withStore(s Store) func(*env) { return func(e *env) { e.store = s } }

// server is the host's Servers for the tests.
func (e *env) server(name string) (Server, error) {
	if e.lookup != nil {
		e.lookup(name)
	}
	switch name {
	case serverName:
		return Server{Origin: e.srv.URL + "/mcpl", Token: token}, nil
	case "gone":
		return Server{}, fmt.Errorf("server %q: %w", name, CodeUnknownServer)
	case "stdio":
		return Server{}, fmt.Errorf("server %q: %w", name, CodeNoNetworkAddress)
	case "flaky":
		return Server{}, errors.New("lookup failed with secret " + token)
	case "broken":
		return Server{Origin: brokenOrigin}, nil
	case "secure":
		return Server{Origin: "wss://" + e.host() + "/mcpl", Token: token}, nil
	}
	if s, ok := e.extra[name]; ok {
		return s, nil
	}
	return Server{}, CodeUnknownServer
}

func (e *env) host() string { return strings.TrimPrefix(e.srv.URL, "http://") }

func (e *env) port() string {
	_, port, err := net.SplitHostPort(e.host())
	if err != nil {
		e.t.Fatal(err)
	}
	return port
}

// flightTotal returns the decoded bytes the running download of record
// id has read, or -1 when none runs.
func (f *Fetcher) flightTotal(id string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.flights[id]
	if fl == nil {
		return -1
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.total
}

// sendThenWait writes n zero bytes of a response and flushes them, then
// waits for ready. It reports false when the request ended first.
func sendThenWait(w http.ResponseWriter, r *http.Request, n int, ready <-chan struct{}) bool {
	w.Write(make([]byte, n))
	w.(http.Flusher).Flush()
	select {
	case <-ready:
		return true
	case <-r.Context().Done():
		return false
	}
}

// endlessAfter is a handler that sends 4 KiB, waits for ready, and then
// sends zeros until the request ends.
func endlessAfter(ready <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sendThenWait(w, r, 4096, ready) {
			return
		}
		for {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				return
			}
		}
	}
}

// authHeaders returns the Authorization header of every request so far.
func (e *env) authHeaders() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth...)
}

// ref registers a block ($ORIGIN and $HOST replaced) as content of server
// and returns its record.
func (e *env) ref(server, block string) refs.Record {
	e.t.Helper()
	block = strings.ReplaceAll(block, "$ORIGIN", e.srv.URL)
	block = strings.ReplaceAll(block, "$HOST", e.host())
	b := convert.Classify([]byte(block))
	if b.Kind != convert.KindReference {
		e.t.Fatalf("block is %s, not a reference: %s", b.Kind, block)
	}
	entry := e.reg.Register(context.Background(), convert.Registration{Testimony: b.Testimony, Server: server, Never: b.Testimony.Never()})
	rec, ok := e.reg.Lookup(entry.ID)
	if !ok {
		e.t.Fatalf("registered record %s not found", entry.ID)
	}
	return rec
}

// entry returns the view entry of rec's record, as a converter would pass
// it to [Fetcher.Refusal].
func (e *env) entry(rec refs.Record) convert.Entry {
	e.t.Helper()
	ent, ok := e.reg.EntryForURI(rec.URI)
	if !ok {
		e.t.Fatalf("no entry for record %s", rec.ID)
	}
	return ent
}

// fetch is Fetch by the record's id. Every failure it returns is checked
// for what no model-facing text may carry (see assertModelSafe), so the
// check covers every failure the suite produces through it.
func (e *env) fetch(ctx context.Context, rec refs.Record, req Request) (Result, error) {
	e.t.Helper()
	res, err := e.f.Fetch(ctx, rec.ID, req)
	var f *Failure
	if errors.As(err, &f) {
		e.assertModelSafe(rec, "failure "+string(f.Code), f.Clause, f.Remedy.String(), f.Error())
	}
	return res, err
}

// forbidden lists what no clause, remedy or tool answer may carry for
// rec: the token, every origin's host and port the fixture's servers were
// dialed at, and the reference's address, host, path, query and userinfo.
func (e *env) forbidden(rec refs.Record) []string {
	out := []string{token, e.srv.URL, e.host(), ":" + e.port(), "127.0.0.1:1", brokenOrigin}
	for _, s := range e.extra {
		if u, err := url.Parse(s.Origin); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	if rec.URI == "" {
		return out
	}
	out = append(out, rec.URI)
	u, err := url.Parse(rec.URI)
	if err != nil {
		return out
	}
	if u.Host != "" {
		out = append(out, u.Host)
	}
	if len(u.Path) > 1 {
		out = append(out, u.Path)
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
	}
	if u.User != nil {
		out = append(out, u.User.String())
	}
	return out
}

// assertModelSafe checks that model-facing texts about rec carry nothing
// forbidden, nor the test server's port as a number of its own.
func (e *env) assertModelSafe(rec refs.Record, what string, texts ...string) {
	e.t.Helper()
	port := regexp.MustCompile(`(^|[^0-9,])` + regexp.QuoteMeta(e.port()) + `($|[^0-9,])`)
	for _, text := range texts {
		for _, s := range e.forbidden(rec) {
			if strings.Contains(text, s) {
				e.t.Errorf("%s: %q carries %q", what, text, s)
			}
		}
		if port.MatchString(text) {
			e.t.Errorf("%s: %q carries the server's port %s", what, text, e.port())
		}
	}
}

// saves returns what the memory store holds. A test that gave the fetcher
// a store with no memory store behind it has nothing to read here, and an
// empty answer would pass for "nothing kept", so that is a test bug.
func (e *env) saves() []SavedCopy {
	e.t.Helper()
	if e.mem == nil {
		e.t.Fatal("the fetcher's store is not backed by the env's memory store, so there is nothing to inspect")
	}
	return e.mem.Saves()
}

// assertNothingKept checks that a failed fetch left no copy and no facts.
func (e *env) assertNothingKept(rec refs.Record) {
	e.t.Helper()
	if s := e.saves(); len(s) != 0 {
		e.t.Errorf("store holds %d copies after a failure, want none", len(s))
	}
	if cur, ok := e.reg.Lookup(rec.ID); ok && cur.Copy != nil {
		e.t.Errorf("record %s names a copy after a failure: %+v", rec.ID, *cur.Copy)
	}
}

// assertNoSecrets checks that nothing the fetcher wrote carries the token
// or a query or userinfo part.
func (e *env) assertNoSecrets(extra ...string) {
	e.t.Helper()
	logs := e.logs.String()
	for _, s := range append([]string{token, "fixture-secret"}, extra...) {
		if strings.Contains(logs, s) {
			e.t.Errorf("logs carry %q:\n%s", s, logs)
		}
	}
}

// failureOf checks that err is a *Failure matching want (a Code, or the
// context error a timeout or cancellation also matches) and returns it.
func failureOf(t *testing.T, err error, want error) *Failure {
	t.Helper()
	if err == nil {
		t.Fatalf("fetch succeeded, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Errorf("errors.Is(err, %v) = false; err = %v", want, err)
	}
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("error %T is not a *Failure", err)
	}
	if f.Remedy.Kind() == 0 {
		t.Errorf("failure %s carries no remedy", f.Code)
	}
	if strings.HasSuffix(f.Clause, ".") || f.Clause == "" || f.Clause != strings.TrimSpace(f.Clause) {
		t.Errorf("clause %+q is empty, padded or ends with a period", f.Clause)
	}
	return f
}

// golden compares got with testdata/fetch/<name>.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("..", "testdata", "fetch", name+".golden"), got)
}

// body returns a handler that serves b with an optional content type.
func body(b []byte, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(b)
	}
}

// chunked returns a handler that streams n bytes of fill without a
// Content-Length.
func chunked(n int, fill byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := n // each request streams all n bytes
		w.Header().Set("Content-Type", "application/octet-stream")
		buf := bytes.Repeat([]byte{fill}, 4096)
		fl := w.(http.Flusher)
		fl.Flush()
		for n > 0 {
			k := min(n, len(buf))
			if _, err := w.Write(buf[:k]); err != nil {
				return
			}
			fl.Flush()
			n -= k
		}
	}
}

// hijacked returns a handler that writes raw bytes on the connection and
// then closes it.
func hijacked(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, bufrw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		bufrw.WriteString(raw)
		bufrw.Flush()
		conn.Close()
	}
}

// deadOrigin returns an http origin where nothing listens.
func deadOrigin(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// discardStore counts bytes and keeps none.
type discardStore struct{ n atomic.Int64 }

func (d *discardStore) Begin(context.Context, string, string) (Pending, error) {
	return &discardPending{d: d}, nil
}

type discardPending struct {
	d *discardStore
	n int64
}

func (p *discardPending) Write(b []byte) (int, error) { p.n += int64(len(b)); return len(b), nil }
func (p *discardPending) Commit(context.Context) (string, error) {
	p.d.n.Add(p.n)
	return "discarded", nil
}
func (p *discardPending) Abort(context.Context) error { return nil }

var _ io.Writer = (*discardPending)(nil)
