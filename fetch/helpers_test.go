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
	"path/filepath"
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
	store    Store
	mem      *MemoryStore
	f        *Fetcher
	logs     *logtest.Buffer
	cfg      Config
	extra    map[string]Server
	rec      refs.Record // the record under test, for handlers
	cancel   context.CancelFunc
}

// newEnv starts a server answering with h and a fetcher configured by cfg
// (Logger, and Withhold when hook is set, are filled in).
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
	e.reg = refs.New(refs.Config{})
	e.mem = NewMemoryStore()
	e.store = e.mem
	e.cfg.Budget = -1
	for _, m := range mods {
		m(e)
	}
	e.cfg.Logger = e.logs.Logger()
	e.f = New(e.reg, ServersFunc(e.server), e.store, e.cfg)
	return e
}

func withConfig(mod func(*Config)) func(*env) { return func(e *env) { mod(&e.cfg) } }

func withHook(e *env) { e.cfg.Withhold = e.reg }

func withStore(s Store) func(*env) { return func(e *env) { e.store = s } }

// server is the host's Servers for the tests.
func (e *env) server(name string) (Server, error) {
	switch name {
	case serverName:
		return Server{Origin: e.srv.URL + "/mcpl", Token: token}, nil
	case "gone":
		return Server{}, fmt.Errorf("server %q: %w", name, ErrUnknownServer)
	case "stdio":
		return Server{}, fmt.Errorf("server %q: %w", name, ErrNoNetworkAddress)
	case "flaky":
		return Server{}, errors.New("lookup failed with secret " + token)
	case "broken":
		return Server{Origin: "tcp://127.0.0.1:1/x"}, nil
	case "secure":
		return Server{Origin: "wss://" + e.host() + "/mcpl", Token: token}, nil
	}
	if s, ok := e.extra[name]; ok {
		return s, nil
	}
	return Server{}, ErrUnknownServer
}

func (e *env) host() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// ref registers a block ($ORIGIN replaced) as content of server and
// returns its record.
func (e *env) ref(server, block string) refs.Record {
	e.t.Helper()
	block = strings.ReplaceAll(block, "$ORIGIN", e.srv.URL)
	block = strings.ReplaceAll(block, "$HOST", e.host())
	b := convert.Classify([]byte(block))
	if b.Kind != convert.KindReference {
		e.t.Fatalf("block is %s, not a reference: %s", b.Kind, block)
	}
	entry := e.reg.Register(convert.Registration{Testimony: b.Testimony, Server: server, Never: b.Testimony.Never()})
	rec, ok := e.reg.Lookup(entry.ID)
	if !ok {
		e.t.Fatalf("registered record %s not found", entry.ID)
	}
	return rec
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
	if cur, ok := e.reg.Lookup(rec.ID); ok && cur.Saved != nil {
		e.t.Errorf("record %s names a copy after a failure: %+v", rec.ID, *cur.Saved)
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

// failureOf checks that err is a *Failure unwrapping to sentinel and
// returns it.
func failureOf(t *testing.T, err error, sentinel error) *Failure {
	t.Helper()
	if err == nil {
		t.Fatalf("fetch succeeded, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(err, %v) = false; err = %v", sentinel, err)
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
func (p *discardPending) Commit() (string, error)     { p.d.n.Add(p.n); return "discarded", nil }
func (p *discardPending) Abort() error                { return nil }

var _ io.Writer = (*discardPending)(nil)
