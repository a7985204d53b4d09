package fetch

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/refs"
)

// withHostStore gives the fetcher hs as its Config.HostStore.
func withHostStore(hs Store) func(*env) { return func(e *env) { e.cfg.HostStore = hs } }

// commitCounter counts the commits of the copies it begins.
type commitCounter struct {
	*markingStore
	commits *atomic.Int32
}

func (s commitCounter) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.markingStore.Begin(ctx, name, mime)
	return commitCounterPending{p, s.commits}, err
}

type commitCounterPending struct {
	Pending
	commits *atomic.Int32
}

func (p commitCounterPending) Commit(ctx context.Context) (string, error) {
	p.commits.Add(1)
	return p.Pending.Commit(ctx)
}

// savedPaths lists the paths a memory store holds.
func savedPaths(m *MemoryStore) []string {
	var out []string
	for _, s := range m.Saves() {
		out = append(out, s.Path)
	}
	return out
}

// TestHostStoreHoldsNeverCopies pins F18 with a host-only store: a copy
// the host fetches for itself of a reference a server marked never goes
// to Config.HostStore, never to the store whose paths views name, and the
// host is served it again from there.
func TestHostStoreHoldsNeverCopies(t *testing.T) {
	ctx := context.Background()
	hs := NewMemoryStore()
	e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs))
	rec := e.ref(serverName, blk(`,"sizeBytes":19,"disposition":"never","digest":"`+wavDigest+`"`))

	res, err := e.fetch(ctx, rec, Request{ForHost: true})
	if err != nil {
		t.Fatalf("the host's own request failed: %v", err)
	}
	if got := savedPaths(hs); len(got) != 1 || got[0] != res.Path {
		t.Errorf("host store holds %q; want only the copy at %q", got, res.Path)
	}
	if got := savedPaths(e.mem); len(got) != 0 {
		t.Errorf("the shared store holds %q; want nothing of a never reference", got)
	}
	if cur, _ := e.reg.Lookup(rec.ID); !cur.Never || cur.Copy == nil || *cur.Copy != res.Copy {
		t.Errorf("record: never %t, copy %+v; want marked, with the host's copy", cur.Never, cur.Copy)
	}
	_, err = e.fetch(ctx, rec, Request{})
	failureOf(t, err, CodeWithheld)
	again, err := e.fetch(ctx, rec, Request{ForHost: true})
	if err != nil || !again.FromCopy || again.Path != res.Path {
		t.Errorf("the host's second request = %+v, %v; want the saved copy", again, err)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestHostStoreLeavesOtherCopies pins that a host-only store takes only
// copies of references marked never: the copy of any other reference,
// whoever asked for it, goes to the fetcher's Store, as views expect.
func TestHostStoreLeavesOtherCopies(t *testing.T) {
	ctx := context.Background()
	for _, req := range []Request{{}, {ForHost: true}} {
		hs := NewMemoryStore()
		e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs))
		rec := e.ref(serverName, blk(""))
		res, err := e.fetch(ctx, rec, req)
		if err != nil {
			t.Fatalf("ForHost %t: %v", req.ForHost, err)
		}
		if got := savedPaths(e.mem); len(got) != 1 || got[0] != res.Path {
			t.Errorf("ForHost %t: the shared store holds %q; want the copy at %q", req.ForHost, got, res.Path)
		}
		if got := savedPaths(hs); len(got) != 0 {
			t.Errorf("ForHost %t: host store holds %q; want nothing", req.ForHost, got)
		}
	}
}

// TestHostStoreMarkBeforeBytes pins F17 and F18 with a host-only store:
// a mark that lands before the response arrives sends the shared flight's
// copy to the host store; the model's caller is refused.
func TestHostStoreMarkBeforeBytes(t *testing.T) {
	hs := NewMemoryStore()
	g := newGate(wavBody)
	e := newEnv(t, g.handler, withHostStore(hs))
	rec := e.ref(serverName, blk(""))
	hostRes, hostErr, modErr := markDuringSharedFlight(t, e, g, rec)

	failureOf(t, modErr, CodeWithheld)
	if hostErr != nil || hostRes.Bytes != int64(len(wavBody)) {
		t.Fatalf("the host's caller got %+v, %v", hostRes, hostErr)
	}
	if got := savedPaths(hs); len(got) != 1 || got[0] != hostRes.Path {
		t.Errorf("host store holds %q; want the copy at %q", got, hostRes.Path)
	}
	if got := savedPaths(e.mem); len(got) != 0 {
		t.Errorf("the shared store holds %q; want nothing", got)
	}
}

// TestHostStoreMarkDuringSharedCopy pins that with a host-only store no
// copy of a reference marked never stays in the shared store: a mark that
// lands once a copy there has begun, or as it is committed, fails the
// fetch for every caller, the host's too, and discards the copy; the
// host's next request downloads into the host store.
func TestHostStoreMarkDuringSharedCopy(t *testing.T) {
	for _, at := range []string{"begin", "commit"} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			hs := NewMemoryStore()
			var ms *markingStore
			var commits atomic.Int32
			e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs), func(e *env) {
				ms = &markingStore{MemoryStore: e.mem, e: e, at: at}
				e.store = commitCounter{ms, &commits}
			})
			e.rec = e.ref(serverName, blk(""))
			res, err := e.fetch(ctx, e.rec, Request{ForHost: true})
			if err == nil {
				t.Fatalf("the host's caller got %+v; want a failure, since the copy was going to the shared store", res)
			}
			if f := failureOf(t, err, CodeWithheld); f.Clause != failWithheldInShared(serverName).Clause || f.Remedy.Kind() != RemedyTryLater {
				t.Errorf("clause %q, remedy %q; want the clause for a mark while saving to the shared store, and a remedy of trying again", f.Clause, f.Remedy)
			}
			if got := savedPaths(e.mem); len(got) != 0 {
				t.Errorf("the shared store holds %q; want nothing", got)
			}
			if n := commits.Load(); at == "begin" && n != 0 {
				t.Errorf("the shared store committed %d copies after the mark; want the download stopped first", n)
			}
			if cur, _ := e.reg.Lookup(e.rec.ID); cur.Copy != nil {
				t.Errorf("record keeps copy %+v", cur.Copy)
			}

			ms.at = "" // marked already; the next request marks nothing
			res, err = e.fetch(ctx, e.rec, Request{ForHost: true})
			if err != nil {
				t.Fatalf("the host's second request: %v", err)
			}
			if got := savedPaths(hs); len(got) != 1 || got[0] != res.Path {
				t.Errorf("host store holds %q; want the copy at %q", got, res.Path)
			}
			if got := savedPaths(e.mem); len(got) != 0 {
				t.Errorf("the shared store holds %q after the second request; want nothing", got)
			}
		})
	}
}

// TestHostStoreWithFetchNever pins that the conformance profile keeps its
// answers with a host-only store: a reference marked never is fetched for
// any caller, and its copy goes to the host store.
func TestHostStoreWithFetchNever(t *testing.T) {
	ctx := context.Background()
	hs := NewMemoryStore()
	e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs), withFetchNever)
	rec := e.ref(serverName, blk(`,"disposition":"never"`))
	res, err := e.fetch(ctx, rec, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got := savedPaths(hs); len(got) != 1 || got[0] != res.Path {
		t.Errorf("host store holds %q; want the copy at %q", got, res.Path)
	}
	if got := savedPaths(e.mem); len(got) != 0 {
		t.Errorf("the shared store holds %q; want nothing", got)
	}
}

// linkedStore is a DirStore opened through a symbolic link at link to
// dir.
func linkedStore(t *testing.T, dir, link string) *DirStore {
	t.Helper()
	if err := os.Symlink(dir, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	d, err := NewDirStore(link)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestHostStoreRefusedWhenUnusable pins New's checks of Config.HostStore:
// a typed nil, the fetcher's own Store again, a directory store in the
// shared store's directory or one nested with it, and a shared store that
// cannot remove the copy a late mark reaches are configuration errors,
// since none keeps such copies away from the shared store.
func TestHostStoreRefusedWhenUnusable(t *testing.T) {
	reg, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	servers := ServersFunc(func(string) (Server, error) { return Server{}, nil })
	dirStore := func(dir string) *DirStore {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		d, err := NewDirStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	base := t.TempDir()
	mem, shared := NewMemoryStore(), dirStore(filepath.Join(base, "shared"))
	for _, tc := range []struct {
		name           string
		shared, hostly Store
	}{
		{"typed nil", mem, (*DirStore)(nil)},
		{"same store", mem, mem},
		{"same directory", shared, dirStore(filepath.Join(base, "shared"))},
		{"inside the shared directory", shared, dirStore(filepath.Join(base, "shared", "host"))},
		{"around the shared directory", dirStore(filepath.Join(base, "a", "shared")), dirStore(filepath.Join(base, "a"))},
		{"a shared store that cannot remove", struct{ Store }{mem}, NewMemoryStore()},
		{"a host store that cannot remove", mem, struct{ Store }{NewMemoryStore()}},
		{"a link to the shared directory", shared, linkedStore(t, filepath.Join(base, "shared"), filepath.Join(base, "link"))},
		{"a link inside the shared directory", shared, linkedStore(t, dirStore(filepath.Join(base, "elsewhere")).Dir(), filepath.Join(base, "shared", "host-link"))},
		{"a wrapped store of the shared directory", shared, struct{ *DirStore }{dirStore(filepath.Join(base, "shared"))}},
		{"a wrapped shared store", struct{ *DirStore }{shared}, dirStore(filepath.Join(base, "shared", "inner"))},
	} {
		if _, err := New(reg, servers, tc.shared, Config{HostStore: tc.hostly}); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: New = %v; want ErrBadConfig", tc.name, err)
		}
	}
	for name, pair := range map[string][2]Store{
		"memory stores":            {mem, NewMemoryStore()},
		"directories side by side": {shared, dirStore(filepath.Join(base, "shared-host"))},
		"a shared store opened through a link in the host directory": {
			linkedStore(t, dirStore(filepath.Join(base, "s2")).Dir(), filepath.Join(dirStore(filepath.Join(base, "h2")).Dir(), "to-shared")),
			dirStore(filepath.Join(base, "h2"))},
		"a zero store and a directory": {&struct{ *DirStore }{&DirStore{}}, dirStore(filepath.Join(base, "h3"))},
	} {
		if _, err := New(reg, servers, pair[0], Config{HostStore: pair[1]}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// beginCounter counts the copies a memory store begins.
type beginCounter struct {
	*MemoryStore
	begun atomic.Int32
	// onBegin, if set, runs as each copy begins.
	onBegin func()
}

func (s *beginCounter) Begin(ctx context.Context, name, mime string) (Pending, error) {
	s.begun.Add(1)
	if s.onBegin != nil {
		s.onBegin()
	}
	return s.MemoryStore.Begin(ctx, name, mime)
}

// TestHostStoreAsksMarkStore pins F18 across a fleet with a host-only
// store: a mark another host put in the shared mark store after this host
// registered the uri sends the host's copy to the host store; the shared
// store begins nothing.
func TestHostStoreAsksMarkStore(t *testing.T) {
	ctx := context.Background()
	marks := refs.NewMemoryMarks(0)
	other, err := refs.New(refs.Config{Marks: marks})
	if err != nil {
		t.Fatal(err)
	}
	hs := NewMemoryStore()
	shared := &beginCounter{MemoryStore: NewMemoryStore()}
	e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs), withStore(shared), func(e *env) { e.regCfg.Marks = marks })
	rec := e.ref(serverName, blk(""))
	other.MarkNever(ctx, rec.URI, "elsewhere")
	if e.reg.MarkedHere(rec.URI) {
		t.Fatal("setup: the mark reached this host's memory; the test needs it in the store only")
	}

	res, err := e.fetch(ctx, rec, Request{ForHost: true})
	if err != nil {
		t.Fatalf("the host's own request failed: %v", err)
	}
	if n := shared.begun.Load(); n != 0 {
		t.Errorf("the shared store began %d copies of a reference the mark store marks", n)
	}
	if got := savedPaths(hs); len(got) != 1 || got[0] != res.Path {
		t.Errorf("host store holds %q; want the copy at %q", got, res.Path)
	}
	if cur, _ := e.reg.Lookup(rec.ID); !cur.Never || cur.Copy == nil || *cur.Copy != res.Copy {
		t.Errorf("record: never %t, copy %+v; want marked, with the host's copy", cur.Never, cur.Copy)
	}
}

// switchMarks is a mark store that holds no mark and can be made
// unreadable.
type switchMarks struct{ down atomic.Bool }

func (m *switchMarks) Mark(context.Context, string, string) error {
	if m.down.Load() {
		return errors.New("mark store down")
	}
	return nil
}

func (m *switchMarks) Marked(context.Context, string) (bool, error) {
	if m.down.Load() {
		return false, errors.New("mark store down")
	}
	return false, nil
}

// TestHostStoreMarkStoreOutage pins N7 with a host-only store: while the
// mark store cannot be read, a host's own fetch of a reference registered
// before the outage goes to the host store, since the reference may be
// marked; as no mark is known when it is saved, the record may not name
// that copy (views and the model's fetches would show its path), so the
// copy is removed and the fetch fails with a remedy of trying later. Once
// the store can be read the fetch succeeds.
func TestHostStoreMarkStoreOutage(t *testing.T) {
	ctx := context.Background()
	marks := &switchMarks{}
	hs := NewMemoryStore()
	shared := &beginCounter{MemoryStore: NewMemoryStore()}
	e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(hs), withStore(shared), func(e *env) { e.regCfg.Marks = marks })
	rec := e.ref(serverName, blk(""))
	marks.down.Store(true)
	for i := range 2 {
		res, err := e.fetch(ctx, rec, Request{ForHost: true})
		if err == nil {
			t.Fatalf("host fetch %d during the outage got %+v; want a failure", i, res)
		}
		if f := failureOf(t, err, CodeWithheld); f.Clause != failUncheckedDuring(serverName).Clause || f.Remedy.Kind() != RemedyTryLater {
			t.Errorf("host fetch %d: clause %q, remedy %q; want the clause for unreadable marks, and trying later", i, f.Clause, f.Remedy)
		}
	}
	if got := savedPaths(hs); len(got) != 0 {
		t.Errorf("host store holds %q after the outage's fetches; want nothing", got)
	}
	if n := shared.begun.Load(); n != 0 {
		t.Errorf("the shared store began %d copies during the outage", n)
	}
	if cur, _ := e.reg.Lookup(rec.ID); cur.Never || cur.Copy != nil {
		t.Errorf("record: never %t, copy %+v; want unmarked, with no copy", cur.Never, cur.Copy)
	}
	marks.down.Store(false)
	res, err := e.fetch(ctx, rec, Request{ForHost: true})
	if err != nil {
		t.Fatalf("host fetch after the outage: %v", err)
	}
	if got := savedPaths(shared.MemoryStore); len(got) != 1 || got[0] != res.Path {
		t.Errorf("shared store holds %q; want the copy at %q of a reference no mark names", got, res.Path)
	}
}

// TestHostStoreLateModelCaller pins F17 and F18 with a host-only store: a
// model's caller that passed its never check before the mark, and joins
// the host's flight while the copy going to the shared store is being
// discarded, is answered as the model's callers are, not told to fetch
// again for the host.
func TestHostStoreLateModelCaller(t *testing.T) {
	ctx := context.Background()
	rest := make(chan struct{})
	payload := append(append([]byte{}, wavBody...), make([]byte, 8<<10)...)
	handler := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(payload[:4<<10])
		w.(http.Flusher).Flush()
		<-rest
		w.Write(payload[4<<10:])
	}
	shared := &abortGateStore{MemoryStore: NewMemoryStore(), aborting: make(chan struct{}),
		release: make(chan struct{}), began: make(chan struct{})}
	e := newEnv(t, handler, withHostStore(NewMemoryStore()), withStore(shared))
	e.rec = e.ref(serverName, blk(""))
	hostErr := make(chan error, 1)
	go func() { _, err := e.fetch(ctx, e.rec, Request{ForHost: true}); hostErr <- err }()
	<-shared.began

	// The model's caller has passed its never check and is looking its
	// server up: the mark lands, the host's flight discards the copy it
	// began, and the model's caller joins while the abort waits.
	e.lookup = func(string) {
		e.reg.MarkNever(ctx, e.rec.URI, serverName)
		close(rest)
		<-shared.aborting
	}
	go func() {
		waitFor(t, "the model's caller to join", func() bool { return e.f.waiting(e.rec.ID) == 2 })
		close(shared.release)
	}()
	_, modErr := e.fetch(ctx, e.rec, Request{})
	if f := failureOf(t, modErr, CodeWithheld); f.Clause != failWithheldDuring(serverName).Clause || f.Remedy.Kind() != RemedyNothing {
		t.Errorf("the model's caller: clause %q, remedy %q; want the model's clause for a mark during the fetch", f.Clause, f.Remedy)
	}
	if f := failureOf(t, <-hostErr, CodeWithheld); f.Clause != failWithheldInShared(serverName).Clause {
		t.Errorf("the host's caller: clause %q; want the host's clause", f.Clause)
	}
}

// downOnBegin is a gated store that makes the mark store unreadable as
// each copy begins.
type downOnBegin struct {
	*gatedStore
	marks *switchMarks
}

func (s downOnBegin) Begin(ctx context.Context, name, mime string) (Pending, error) {
	s.marks.down.Store(true)
	return s.gatedStore.Begin(ctx, name, mime)
}

// TestUncheckedLateJoinerWording pins N7's wording for a model's caller
// that joins a host's flight after the mark store could not be read
// before the commit, and is the last caller left: it is told that the
// marks could not be read, not that a server marked the reference.
func TestUncheckedLateJoinerWording(t *testing.T) {
	marks := &switchMarks{}
	gs := newGatedStore(false)
	e := newEnv(t, body(wavBody, "audio/wav"), func(e *env) {
		e.regCfg.Marks = marks
		e.mem, e.store = gs.MemoryStore, downOnBegin{gs, marks}
	})
	e.rec = e.ref(serverName, blk(""))
	hostCtx, leave := context.WithCancel(context.Background())
	defer leave()
	hostErr := make(chan error, 1)
	go func() { _, err := e.fetch(hostCtx, e.rec, Request{ForHost: true}); hostErr <- err }()
	<-gs.entered // the commit check has met the outage; the store commits
	marks.down.Store(false)
	go func() {
		waitFor(t, "the model's caller to join", func() bool { return e.f.waiting(e.rec.ID) == 2 })
		leave()
		<-hostErr
		close(gs.open)
	}()
	_, err := e.fetch(context.Background(), e.rec, Request{})
	if f := failureOf(t, err, CodeWithheld); f.Clause != failUncheckedDuring(serverName).Clause {
		t.Errorf("the model's caller: clause %q; want the clause for unreadable marks", f.Clause)
	}
	e.assertNothingKept(e.rec)
}

// hookMarks is a mark store that holds no mark, can be made unreadable,
// and runs onMarked, if set, as it is asked.
type hookMarks struct {
	switchMarks
	onMarked func()
}

func (m *hookMarks) Marked(ctx context.Context, key string) (bool, error) {
	if m.onMarked != nil {
		m.onMarked()
	}
	return m.switchMarks.Marked(ctx, key)
}

// TestUncheckedNeverIsNoKnownMark pins N7's wording when the record for a
// uri is withheld only because the mark store could not be read when it
// was made: here the reference is let go and named again while a model's
// fetch asks the mark store, which has just stopped answering. No server
// is known to have marked it, and the refusal says the marks could not be
// read.
func TestUncheckedNeverIsNoKnownMark(t *testing.T) {
	marks := &hookMarks{}
	e := newEnv(t, body(wavBody, "audio/wav"), func(e *env) { e.regCfg.Marks = marks })
	rec := e.ref(serverName, blk(""))
	var once atomic.Bool
	marks.onMarked = func() {
		if once.CompareAndSwap(false, true) {
			marks.down.Store(true)
			e.reg.Remove(rec.ID)
			if again := e.ref(serverName, blk("")); !again.Never || !again.NeverUnconfirmed {
				t.Errorf("setup: the reference named again is not withheld for unreadable marks: %+v", again)
			}
		}
	}
	_, err := e.fetch(context.Background(), rec, Request{})
	if f := failureOf(t, err, CodeWithheld); f.Clause != failUncheckedNow(serverName).Clause {
		t.Errorf("clause %q; want the clause for marks that cannot be read", f.Clause)
	}
}

// slowFirstWrite is a store whose copies' first Write waits until open is
// closed, so the chunks read meanwhile queue up for the writer; it counts
// the bytes the store was given.
type slowFirstWrite struct {
	*MemoryStore
	entered chan struct{} // closed once the first Write has begun
	open    chan struct{}
	once    sync.Once
	written atomic.Int64
}

func (s *slowFirstWrite) Begin(ctx context.Context, name, mime string) (Pending, error) {
	return beginWrapped(ctx, s.MemoryStore, name, mime, func(p Pending) Pending { return &slowFirstPending{Pending: p, s: s} })
}

type slowFirstPending struct {
	Pending
	s *slowFirstWrite
}

func (p *slowFirstPending) Write(b []byte) (int, error) {
	p.s.once.Do(func() { close(p.s.entered); <-p.s.open })
	p.s.written.Add(int64(len(b)))
	return p.Pending.Write(b)
}

// stallingPayload is size bytes of a wav and a handler that sends them,
// then sends nothing more until the request ends.
func stallingPayload(size int) ([]byte, http.HandlerFunc) {
	payload := make([]byte, size)
	copy(payload, wavBody)
	return payload, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(payload)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}
}

// TestHostStoreMarkStopsQueuedWrites pins F18 ("stops a download at its
// next chunk once marked") on the writing side, with a host-only store: of
// a copy going to the shared store, no chunk that waits for the store
// when a never mark lands is written there afterwards, and the fetch is
// answered at once, though the server sends nothing more.
func TestHostStoreMarkStopsQueuedWrites(t *testing.T) {
	const chunk = 4 << 10
	payload, handler := stallingPayload(6 * chunk)
	shared := &slowFirstWrite{MemoryStore: NewMemoryStore(), entered: make(chan struct{}), open: make(chan struct{})}
	e := newEnv(t, handler, withHostStore(NewMemoryStore()), withStore(shared), withConfig(func(c *Config) { c.ChunkSize = chunk }))
	e.rec = e.ref(serverName, blk(""))

	// A hang guard only: a fetch still waiting on the server fails here.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var read atomic.Int64
	hostErr, modErr := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := e.fetch(ctx, e.rec, Request{ForHost: true, Progress: func(got, _ int64) { read.Store(got) }})
		hostErr <- err
	}()
	<-shared.entered
	go func() { _, err := e.fetch(ctx, e.rec, Request{}); modErr <- err }()
	waitFor(t, "the model's caller to join", func() bool { return e.f.waiting(e.rec.ID) == 2 })
	waitFor(t, "the whole payload to be read", func() bool { return read.Load() == int64(len(payload)) })
	e.reg.MarkNever(context.Background(), e.rec.URI, serverName)
	close(shared.open)

	if f := failureOf(t, <-hostErr, CodeWithheld); f.Clause != failWithheldInShared(serverName).Clause || f.Remedy.Kind() != RemedyTryLater {
		t.Errorf("the host's caller: clause %q, remedy %q; want the clause for a mark while saving to the shared store, and a remedy of trying again", f.Clause, f.Remedy)
	}
	if f := failureOf(t, <-modErr, CodeWithheld); f.Clause != failWithheldDuring(serverName).Clause || f.Remedy.Kind() != RemedyNothing {
		t.Errorf("the model's caller: clause %q, remedy %q; want the model's clause for a mark during the fetch", f.Clause, f.Remedy)
	}
	// The first chunk's write was under way when the mark landed.
	if n := shared.written.Load(); n > chunk {
		t.Errorf("the shared store was given %d bytes; want at most the first chunk's %d", n, chunk)
	}
	if got := savedPaths(shared.MemoryStore); len(got) != 0 {
		t.Errorf("the shared store holds %q; want nothing", got)
	}
}

// writeMeter is a store that counts the bytes its copies were given, and
// the copies begun and bytes given once marked is set.
type writeMeter struct {
	Store
	marked        atomic.Bool
	written       atomic.Int64
	beganMarked   atomic.Int32
	writtenMarked atomic.Int64
}

func (s *writeMeter) Begin(ctx context.Context, name, mime string) (Pending, error) {
	if s.marked.Load() {
		s.beganMarked.Add(1)
	}
	return beginWrapped(ctx, s.Store, name, mime, func(p Pending) Pending { return &meterWrites{Pending: p, s: s} })
}

func (s *writeMeter) Remove(ctx context.Context, path string) error {
	return s.Store.(refs.Remover).Remove(ctx, path)
}

type meterWrites struct {
	Pending
	s *writeMeter
}

func (p *meterWrites) Write(b []byte) (int, error) {
	if p.s.marked.Load() {
		p.s.writtenMarked.Add(int64(len(b)))
	}
	p.s.written.Add(int64(len(b)))
	return p.Pending.Write(b)
}

// TestHostStoreMarkWhileWriterIdle pins F18 with a host-only store when
// every byte read so far is already written and the server stalls: a mark
// that lands then still stops the copy going to the shared store at once.
// Nothing is left in the shared directory, and both callers are answered
// without waiting for the server.
func TestHostStoreMarkWhileWriterIdle(t *testing.T) {
	const chunk = 4 << 10
	payload, handler := stallingPayload(6 * chunk)
	sharedDir := t.TempDir()
	shared, err := NewDirStore(sharedDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	meter := &writeMeter{Store: shared}
	e := newEnv(t, handler, withHostStore(NewMemoryStore()), withStore(meter), withConfig(func(c *Config) { c.ChunkSize = chunk }))
	e.rec = e.ref(serverName, blk(""))

	// A hang guard only: a fetch still waiting on the server fails here.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hostErr, modErr := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.fetch(ctx, e.rec, Request{ForHost: true}); hostErr <- err }()
	go func() { _, err := e.fetch(ctx, e.rec, Request{}); modErr <- err }()
	waitFor(t, "both callers to wait", func() bool { return e.f.waiting(e.rec.ID) == 2 })
	waitFor(t, "the whole payload to be written", func() bool { return meter.written.Load() == int64(len(payload)) })
	e.reg.MarkNever(context.Background(), e.rec.URI, serverName)
	meter.marked.Store(true)

	if f := failureOf(t, <-hostErr, CodeWithheld); f.Clause != failWithheldInShared(serverName).Clause {
		t.Errorf("the host's caller: clause %q; want the clause for a mark while saving to the shared store", f.Clause)
	}
	if f := failureOf(t, <-modErr, CodeWithheld); f.Clause != failWithheldDuring(serverName).Clause {
		t.Errorf("the model's caller: clause %q; want the model's clause for a mark during the fetch", f.Clause)
	}
	if names, _ := filepath.Glob(filepath.Join(sharedDir, "*")); len(names) != 0 {
		t.Errorf("the shared directory holds %q; want nothing", names)
	}
}

// TestHostStoreSmallPayloadMarkedBeforeCommit pins F18 with a host-only
// store for a payload shorter than the bytes sniffed for its type, which
// the shared store is given only at the commit: a mark that another host
// puts in the mark store after the last byte was read keeps the shared
// store from beginning a copy at all.
func TestHostStoreSmallPayloadMarkedBeforeCommit(t *testing.T) {
	marks := refs.NewMemoryMarks(0)
	other, err := refs.New(refs.Config{Marks: marks})
	if err != nil {
		t.Fatal(err)
	}
	meter := &writeMeter{Store: NewMemoryStore()}
	e := newEnv(t, body(wavBody, "audio/wav"), withHostStore(NewMemoryStore()), withStore(meter), func(e *env) { e.regCfg.Marks = marks })
	e.rec = e.ref(serverName, blk(""))
	mark := func(got, _ int64) {
		if got == int64(len(wavBody)) {
			other.MarkNever(context.Background(), e.rec.URI, "elsewhere")
			meter.marked.Store(true)
		}
	}
	_, err = e.fetch(context.Background(), e.rec, Request{ForHost: true, Progress: mark})
	if f := failureOf(t, err, CodeWithheld); f.Clause != failWithheldInShared(serverName).Clause {
		t.Errorf("clause %q; want the clause for a mark while saving to the shared store", f.Clause)
	}
	if n, w := meter.beganMarked.Load(), meter.writtenMarked.Load(); n != 0 || w != 0 {
		t.Errorf("the shared store began %d copies and was given %d bytes after the mark; want none", n, w)
	}
}
