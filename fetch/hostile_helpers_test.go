package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/refs"
)

// This file holds the hostile-input suite's own helpers (hostile_test.go
// has the tables). They lean on helpers_test.go's env where it fits.

// hostileCaseLimit bounds one Fetch in the hostile suite: a call that has
// not returned by then is a hang, reported as such. It is a liveness
// guard, never a speed assertion.
const hostileCaseLimit = 30 * time.Second

// fetchReturn is what one Fetch gave, with the store directory's entries
// as they were the moment it returned.
type fetchReturn struct {
	res     Result
	err     error
	entries []string // the DirStore directory's names, read right after Fetch returned
}

// fetchBounded runs Fetch on a goroutine and gives up after
// hostileCaseLimit. When dir is set and gives a directory, it is listed
// on that goroutine straight after Fetch returns, before anything else
// can run for the test, so a partial copy removed later is still seen.
// A failure's clause and remedy are checked as e.fetch checks them.
func fetchBounded(t *testing.T, e *env, ctx context.Context, id string, req Request, dir func() string) fetchReturn {
	t.Helper()
	done := make(chan fetchReturn, 1)
	go func() {
		res, err := e.f.Fetch(ctx, id, req)
		r := fetchReturn{res: res, err: err}
		if dir != nil {
			if d := dir(); d != "" {
				r.entries = dirNames(d)
			}
		}
		done <- r
	}()
	select {
	case r := <-done:
		var f *Failure
		if errors.As(r.err, &f) {
			if rec, ok := e.reg.Lookup(id); ok {
				e.assertModelSafe(rec, "failure "+string(f.Code), f.Clause, f.Remedy.String(), f.Error())
			}
		}
		return r
	case <-time.After(hostileCaseLimit):
		t.Fatalf("Fetch did not return within %s:\n%s", hostileCaseLimit, goroutineDump())
		return fetchReturn{}
	}
}

// dirNames lists a directory's entry names; a directory that cannot be
// read lists as one pseudo-entry saying why, so that it never passes for
// an empty one.
func dirNames(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{"<unreadable: " + err.Error() + ">"}
	}
	names := make([]string, 0, len(entries))
	for _, d := range entries {
		names = append(names, d.Name())
	}
	return names
}

// tmpNames returns the names that are a DirStore's partial copies.
func tmpNames(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			out = append(out, n)
		}
	}
	return out
}

// goroutineDump returns every goroutine's stack, cut to a readable size.
func goroutineDump() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	s := b.String()
	if len(s) > 20000 {
		s = s[:20000] + "\n…(cut)"
	}
	return s
}

// leakCheck records the goroutine count; its check, run once the test's
// servers are closed, waits a short while for the count to fall back to
// it. httptest's own goroutines end with its servers, so the servers are
// closed first; a goroutine still running after that is the fetcher's.
type leakCheck struct{ before int }

func newLeakCheck() leakCheck {
	runtime.GC()
	return leakCheck{before: runtime.NumGoroutine()}
}

// check closes what close names (servers, clients) and waits for the
// goroutine count to settle at or below the count before.
func (l leakCheck) check(t *testing.T, closers ...func()) {
	t.Helper()
	closeAll(t, closers...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= l.before {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines before the case, %d after it settled; left over:\n%s", l.before, n, goroutineDump())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closeAll runs each closer with a bound: an httptest server whose
// handler still runs (a transfer the fetcher never closed) would block
// its Close for ever.
func closeAll(t *testing.T, closers ...func()) {
	t.Helper()
	for _, c := range closers {
		done := make(chan struct{})
		go func() { c(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("closing the test servers blocked: a handler is still running, so the fetcher left a transfer open:\n%s", goroutineDump())
			return
		}
	}
}

// addressish matches what a model-facing text must not carry whatever the
// row: an IPv4 address, an IPv6 loopback, a scheme separator, a loopback
// name, a reserved test domain or a bearer credential.
var addressish = regexp.MustCompile(`(?i)\b\d{1,3}(\.\d{1,3}){3}\b|::1|\[[0-9a-f:.%]*\]|://|localhost|\.(test|example|invalid|nip\.io)\b|bearer|refcore!origin|rebind`)

// assertNoAddress checks the clause and remedy of f against addressish,
// the given ports (as numbers of their own) and the given literal strings.
func assertNoAddress(t *testing.T, f *Failure, ports []string, literal ...string) {
	t.Helper()
	for _, text := range []string{f.Clause, f.Remedy.String(), f.Error(), f.Sentence("ref_x")} {
		if m := addressish.FindString(text); m != "" {
			t.Errorf("%s: %q carries %q", f.Code, text, m)
		}
		for _, p := range ports {
			if p != "" && regexp.MustCompile(`(^|[^0-9,])`+regexp.QuoteMeta(p)+`($|[^0-9,])`).MatchString(text) {
				t.Errorf("%s: %q carries the port %s", f.Code, text, p)
			}
		}
		for _, s := range literal {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s: %q carries %q", f.Code, text, s)
			}
		}
	}
}

// portOf returns the port of a listener address or URL's host:port.
func portOf(hostport string) string {
	hostport = strings.TrimPrefix(strings.TrimPrefix(hostport, "http://"), "https://")
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return ""
	}
	return p
}

// countingServer is a loopback server that must not be reached: it counts
// the connections it accepted and the requests it answered (with the
// given bytes, so that a fetch it answered would succeed).
type countingServer struct {
	srv      *httptest.Server
	conns    atomic.Int64
	requests atomic.Int64
}

// newCountingServer listens on addr ("127.0.0.1:0" and the like). ok is
// false when addr cannot be bound here.
func newCountingServer(addr string, payload []byte) (*countingServer, bool) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false
	}
	c := &countingServer{}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		w.Write(payload)
	}))
	c.srv.Listener.Close()
	c.srv.Listener = l
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.srv.Start()
	return c, true
}

// nullStore keeps no bytes: it counts what was begun, written, aborted
// and committed, so a row can move hundreds of MiB without the store's
// memory standing in for the fetcher's.
type nullStore struct {
	begun, aborted, committed atomic.Int32
	written                   atomic.Int64
}

func (s *nullStore) Begin(context.Context, string, string) (Pending, error) {
	s.begun.Add(1)
	return &nullPending{s: s}, nil
}

type nullPending struct {
	s    *nullStore
	done bool
}

func (p *nullPending) Write(b []byte) (int, error) {
	p.s.written.Add(int64(len(b)))
	return len(b), nil
}
func (p *nullPending) Commit(context.Context) (string, error) {
	p.done = true
	p.s.committed.Add(1)
	return "null", nil
}
func (p *nullPending) Abort(context.Context) error {
	if !p.done {
		p.done = true
		p.s.aborted.Add(1)
	}
	return nil
}

// meterStore wraps the store of a case and records the most bytes any one
// copy was handed, so a row can check that nothing past a limit ever
// reached the store.
type meterStore struct {
	Store
	most atomic.Int64
	// slowAbort delays each Abort, as a store over a network would: a
	// fetcher that answered before its partial copy was discarded would
	// then be caught every time, not only when the race goes its way.
	slowAbort time.Duration
}

// meterRemover is a meterStore over a store that can remove copies: it
// keeps that ability visible to the fetcher.
type meterRemover struct {
	*meterStore
	refs.Remover
}

// newMeter wraps s, keeping it a [refs.Remover] when it is one.
func newMeter(s Store) (Store, *meterStore) {
	m := &meterStore{Store: s}
	if r, ok := s.(refs.Remover); ok {
		return &meterRemover{meterStore: m, Remover: r}, m
	}
	return m, m
}

func (s *meterStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	return beginWrapped(ctx, s.Store, name, mime, func(p Pending) Pending { return &meterPending{Pending: p, s: s} })
}

// beginWrapped begins a copy in s and hands its Pending to wrap: the one
// shape of the test stores that watch or delay a store's copies.
func beginWrapped(ctx context.Context, s Store, name, mime string, wrap func(Pending) Pending) (Pending, error) {
	p, err := s.Begin(ctx, name, mime)
	if err != nil {
		return nil, err
	}
	return wrap(p), nil
}

type meterPending struct {
	Pending
	s *meterStore
	n int64
}

func (p *meterPending) Abort(ctx context.Context) error {
	time.Sleep(p.s.slowAbort)
	return p.Pending.Abort(ctx)
}

func (p *meterPending) Write(b []byte) (int, error) {
	n, err := p.Pending.Write(b)
	p.n += int64(n)
	for {
		most := p.s.most.Load()
		if p.n <= most || p.s.most.CompareAndSwap(most, p.n) {
			break
		}
	}
	return n, err
}

// errnoStore wraps a store so that its writes fail with errno once after
// bytes have gone through (as a disk fills up), or its Begin fails with
// errno when atBegin is set (as a read-only file system refuses to create
// a file), or its Commit fails with errno when atCommit is set (as a
// close that flushes to a full disk). The error is the *fs.PathError an
// *os.File gives, path included, so a row can check that no clause
// repeats the store's path.
type errnoStore struct {
	Store
	errno    syscall.Errno
	after    int64 // bytes a copy takes before writes fail
	atBegin  bool
	atCommit bool
	path     string // the path the errors name
	aborted  atomic.Int32
}

func (s *errnoStore) err(op string) error {
	return &fs.PathError{Op: op, Path: s.path, Err: s.errno}
}

func (s *errnoStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	if s.atBegin {
		return nil, s.err("open")
	}
	p, err := s.Store.Begin(ctx, name, mime)
	if err != nil {
		return nil, err
	}
	return &errnoPending{Pending: p, s: s}, nil
}

type errnoPending struct {
	Pending
	s *errnoStore
	n int64
}

func (p *errnoPending) Write(b []byte) (int, error) {
	if p.s.atCommit {
		return p.Pending.Write(b)
	}
	room := max(p.s.after-p.n, 0)
	if int64(len(b)) <= room {
		p.n += int64(len(b))
		return p.Pending.Write(b)
	}
	n, _ := p.Pending.Write(b[:room])
	p.n += int64(n)
	return n, p.s.err("write")
}

func (p *errnoPending) Commit(ctx context.Context) (string, error) {
	if p.s.atCommit {
		return "", p.s.err("close")
	}
	return p.Pending.Commit(ctx)
}

func (p *errnoPending) Abort(ctx context.Context) error {
	p.s.aborted.Add(1)
	return p.Pending.Abort(ctx)
}

// bomb is a gzip stream of zeros that the server writes lazily: a head
// (the gzip header and the first MiB), then the same byte-aligned deflate
// segment (one more MiB of zeros each) as often as asked. Its trailer is
// never sent: no fetcher that honours a ceiling reads that far.
type bomb struct {
	head, seg []byte
}

const bombUnit = 1 << 20 // decoded bytes per segment

func newBomb(t testing.TB) bomb {
	t.Helper()
	var buf bytes.Buffer
	z, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, bombUnit)
	step := func() []byte {
		n := buf.Len()
		if _, err := z.Write(zeros); err != nil {
			t.Fatal(err)
		}
		if err := z.Flush(); err != nil {
			t.Fatal(err)
		}
		return bytes.Clone(buf.Bytes()[n:])
	}
	b := bomb{head: step()}
	b.seg = step()
	if again := step(); !bytes.Equal(again, b.seg) {
		t.Fatal("deflate segments differ; the bomb cannot repeat one")
	}
	// The head and three segments must decode to 4 MiB of zeros.
	zr, err := gzip.NewReader(io.MultiReader(bytes.NewReader(b.head), bytes.NewReader(bytes.Repeat(b.seg, 3))))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(zr, 4*bombUnit))
	if err != nil || len(got) != 4*bombUnit || bytes.IndexFunc(got, func(r rune) bool { return r != 0 }) >= 0 {
		t.Fatalf("the bomb does not decode to zeros: %d bytes, %v", len(got), err)
	}
	return b
}

// handler serves decoded bytes of zeros, gzip-coded, stopping early when
// the client goes away.
func (b bomb) handler(decoded int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/octet-stream")
		if _, err := w.Write(b.head); err != nil {
			return
		}
		for sent := int64(bombUnit); sent < decoded; sent += bombUnit {
			if _, err := w.Write(b.seg); err != nil {
				return
			}
		}
	}
}

// pacedHandler is handler with a flush and a millisecond's pause after
// each segment, for rows that run hundreds at once: it keeps the server
// from filling every socket's buffer before the client aborts.
func (b bomb) pacedHandler(decoded int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/octet-stream")
		if _, err := w.Write(b.head); err != nil {
			return
		}
		for sent := int64(bombUnit); sent < decoded; sent += bombUnit {
			w.(http.Flusher).Flush()
			if !wait(r, time.Millisecond) {
				return
			}
			if _, err := w.Write(b.seg); err != nil {
				return
			}
		}
	}
}

// quitter ends a case's handlers: once quit runs, every request context
// the case's server hands its handler is done, as when the client goes
// away. A case runs quit before closing its servers, and registers it as
// a cleanup too, so that a case that failed early (a hang the fetcher
// caused) does not leave httptest's Close waiting for ever on a handler.
type quitter struct {
	ch     chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	active atomic.Int64 // handlers running
}

func newQuitter() *quitter {
	ctx, cancel := context.WithCancel(context.Background())
	return &quitter{ch: make(chan struct{}), ctx: ctx, cancel: cancel}
}

func (q *quitter) quit() {
	q.once.Do(func() {
		close(q.ch)
		q.cancel()
	})
}

// wrap gives h a request whose context also ends when quit runs.
func (q *quitter) wrap(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q.active.Add(1)
		defer q.active.Add(-1)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(q.ctx, cancel)
		defer stop()
		h(w, r.WithContext(ctx))
	}
}

// settled waits, before quit runs, for every handler of the case to end
// on its own: a handler that only ends when its client goes away (a
// stall, a trickle, an endless body) still running well after Fetch
// returned means the fetcher left the transfer open (F6: the connection
// is closed).
func (q *quitter) settled(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for q.active.Load() > 0 {
		if time.Now().After(deadline) {
			t.Errorf("%d handlers still ran 10s after Fetch returned: the fetcher left the transfer open:\n%s", q.active.Load(), goroutineDump())
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// wait blocks for d or until the request's connection ends, and reports
// whether d passed.
func wait(r *http.Request, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// waitForTmp polls dir until a partial copy exists and returns its name,
// or "" when the request ended first or a bound passed.
func waitForTmp(r *http.Request, dir string) string {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if tmp := tmpNames(dirNames(dir)); len(tmp) == 1 {
			return tmp[0]
		}
		if !wait(r, time.Millisecond) {
			return ""
		}
	}
	return ""
}
