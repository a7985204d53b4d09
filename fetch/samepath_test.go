package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// samePath is a record whose copies a DirStore keeps under one storage
// name whatever their digest, served by a server whose bytes the test
// switches, for the races between putting a copy there and removing one.
type samePath struct {
	t       *testing.T
	srv     *httptest.Server
	bytes   atomic.Pointer[[]byte]
	stall   atomic.Pointer[stall] // the next request's, if set
	store   *DirStore
	reg     *refs.Registry
	servers Servers
}

func newSamePath(t *testing.T, remover func(*DirStore) refs.Remover, first []byte) *samePath {
	s := &samePath{t: t}
	s.bytes.Store(&first)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := *s.bytes.Load() // the bytes of the testimony when the request came
		if st := s.stall.Swap(nil); st != nil {
			close(st.at)
			<-st.open
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(b)
	}))
	t.Cleanup(s.srv.Close)
	var err error
	if s.store, err = NewDirStore(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.store.Close() })
	if s.reg, err = refs.New(refs.Config{Remover: remover(s.store)}); err != nil {
		t.Fatal(err)
	}
	s.servers = ServersFunc(func(string) (Server, error) { return Server{Origin: s.srv.URL}, nil })
	return s
}

// stall holds the next request at the server: at is closed once it
// arrives, and it is answered, with the bytes the server had then, once
// open is closed.
type stall struct{ at, open chan struct{} }

func (s *samePath) stallNext() *stall {
	st := &stall{at: make(chan struct{}), open: make(chan struct{})}
	s.stall.Store(st)
	return st
}

func (s *samePath) fetcher(store Store) *Fetcher {
	f, err := New(s.reg, s.servers, store, Config{})
	if err != nil {
		s.t.Fatal(err)
	}
	return f
}

// register gives the record the digest of b, and the server b.
func (s *samePath) register(b []byte) string {
	s.bytes.Store(&b)
	return s.reg.Register(context.Background(), convert.Registration{Server: "s", Testimony: convert.Testimony{
		URI: s.srv.URL + "/take.txt", Digest: digestOf(b), Present: convert.FieldURI | convert.FieldDigest}}).ID
}

// holds checks that the record names a copy that exists and holds want.
func (s *samePath) holds(id string, want []byte) {
	s.t.Helper()
	rec, _ := s.reg.Lookup(id)
	if rec.Copy == nil {
		s.t.Fatalf("the record names no copy, want one holding %q", want)
	}
	if got, err := os.ReadFile(rec.Copy.Path); err != nil || string(got) != string(want) {
		s.t.Errorf("the record names %s, which holds %q (%v); want %q", rec.Copy.Path, got, err, want)
	}
}

// waitOrGoOn waits for done to report, and keeps its report for the
// caller, or goes on after a while if it does not: a fetch that has to
// wait for another step on its record does not report before that step
// is let go.
func waitOrGoOn(done chan error) {
	select {
	case err := <-done:
		done <- err
	case <-time.After(300 * time.Millisecond):
	}
}

// ctxRemover is a Remover that honours its context, as a delete from
// object storage does: its first Remove waits until open is closed or its
// context ends.
type ctxRemover struct {
	refs.Remover
	entered chan struct{}
	open    chan struct{}
	first   atomic.Bool
}

func (r *ctxRemover) Remove(ctx context.Context, path string) error {
	if r.first.CompareAndSwap(false, true) {
		close(r.entered)
		select {
		case <-r.open:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.Remover.Remove(ctx, path)
}

// TestRemovalKeepsCopyCommittedMeanwhile pins F20 and N3: the removal of
// a copy that no record names any more must not delete a new copy that a
// fetch put at the same path in the meantime. The record's copy is made
// stale by a new digest, and the Remover is slow to delete it; a fetch of
// the new bytes, which the DirStore names as it named the old ones,
// commits and saves meanwhile. The record must go on naming a copy that
// exists and holds the new bytes.
func TestRemovalKeepsCopyCommittedMeanwhile(t *testing.T) {
	oldBytes, newBytes := []byte("old take\n"), []byte("new take\n")
	gate := &ctxRemover{entered: make(chan struct{}), open: make(chan struct{})}
	s := newSamePath(t, func(d *DirStore) refs.Remover { gate.Remover = d; return gate }, oldBytes)
	f := s.fetcher(s.store)
	id := s.register(oldBytes)
	if _, err := f.Fetch(context.Background(), id, Request{}); err != nil {
		t.Fatal(err)
	}
	registered := make(chan struct{})
	go func() { s.register(newBytes); close(registered) }()
	<-gate.entered // the old copy is no longer named, and is being removed
	fetched := make(chan error, 1)
	go func() { _, err := f.Fetch(context.Background(), id, Request{}); fetched <- err }()
	waitOrGoOn(fetched)
	close(gate.open)
	<-registered
	if err := <-fetched; err != nil {
		t.Fatal(err)
	}
	s.holds(id, newBytes)
}

// commitGate is a DirStore whose first Commit, once begun, waits until
// open is closed, or with untilLeft until every caller of the fetch has
// left, and then commits all the same, as a store that cannot stop a
// commit under way does.
type commitGate struct {
	*DirStore
	untilLeft bool
	entered   chan struct{}
	open      chan struct{}
	first     atomic.Bool
}

func (g *commitGate) Begin(ctx context.Context, name, mime string) (Pending, error) {
	return beginWrapped(ctx, g.DirStore, name, mime, func(p Pending) Pending {
		if !g.first.CompareAndSwap(false, true) {
			return p
		}
		return &commitGatePending{Pending: p, g: g}
	})
}

type commitGatePending struct {
	Pending
	g *commitGate
}

func (p *commitGatePending) Commit(ctx context.Context) (string, error) {
	close(p.g.entered)
	if p.g.untilLeft {
		<-ctx.Done()
	} else {
		<-p.g.open
	}
	return p.Pending.Commit(ctx)
}

// TestStaleCommitAtOnce pins F19 and F20 for two fetchers of one registry
// whose commits meet: the first has checked that the record still claims
// the digest of its bytes, and is committing them, when the record takes
// a new digest and the second fetcher commits and saves the new bytes
// under the same storage name. The first's stale copy must not replace
// the second's, nor its clean-up delete it.
func TestStaleCommitAtOnce(t *testing.T) {
	oldBytes, newBytes := []byte("old take\n"), []byte("new take\n")
	s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, oldBytes)
	gate := &commitGate{DirStore: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	first, second := s.fetcher(gate), s.fetcher(s.store)
	id := s.register(oldBytes)
	firstDone := make(chan error, 1)
	go func() { _, err := first.Fetch(context.Background(), id, Request{}); firstDone <- err }()
	<-gate.entered
	s.register(newBytes)
	fetched := make(chan error, 1)
	go func() { _, err := second.Fetch(context.Background(), id, Request{}); fetched <- err }()
	waitOrGoOn(fetched)
	close(gate.open)
	if err := <-fetched; err != nil {
		t.Fatal(err)
	}
	failureOf(t, <-firstDone, CodeGone)
	s.holds(id, newBytes)
}

// TestWaitForCommitEndsWithCaller pins F12 for a fetch that waits for
// another fetcher's commit of the same record: its caller's deadline
// still holds, and the store keeps nothing of it.
func TestWaitForCommitEndsWithCaller(t *testing.T) {
	b := []byte("take\n")
	s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, b)
	gate := &commitGate{DirStore: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	first, second := s.fetcher(gate), s.fetcher(s.store)
	id := s.register(b)
	firstDone := make(chan error, 1)
	go func() { _, err := first.Fetch(context.Background(), id, Request{}); firstDone <- err }()
	<-gate.entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := second.Fetch(ctx, id, Request{})
	select {
	case <-firstDone:
		t.Fatal("the first fetch finished with its commit held")
	default:
	}
	failureOf(t, err, CodeTimeout)
	close(gate.open)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	s.holds(id, b)
	if names, _ := os.ReadDir(s.store.Dir()); len(names) != 1 {
		t.Errorf("the store holds %d files, want the one copy", len(names))
	}
}

// TestAbandonedCommitKeepsNamedCopy pins F12 and F20 for two fetchers of
// one registry into one DirStore. The second's download is under way when
// the first saves the record's copy; the second then commits the same
// bytes under the same storage name, and its only caller leaves during
// that commit. Cleaning up after the second must not delete the file the
// record names.
func TestAbandonedCommitKeepsNamedCopy(t *testing.T) {
	b := []byte("take\n")
	s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, b)
	gate := &commitGate{DirStore: s.store, untilLeft: true, entered: make(chan struct{})}
	first, second := s.fetcher(s.store), s.fetcher(gate)
	id := s.register(b)
	st := s.stallNext()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secondDone := make(chan error, 1)
	go func() { _, err := second.Fetch(ctx, id, Request{}); secondDone <- err }()
	<-st.at
	if _, err := first.Fetch(context.Background(), id, Request{}); err != nil {
		t.Fatal(err)
	}
	close(st.open)
	<-gate.entered
	cancel()
	failureOf(t, <-secondDone, context.Canceled)
	s.holds(id, b)
}

// TestHandedRemovalKeepsFetchDeadline pins F12 with F20's ordering: a
// removal put off until a fetch of the record has saved its copy must not
// hold that fetch's caller past its deadline. A never mark lands while a
// fetch commits, and the Remover that is to delete the withdrawn copy is
// slow: the fetch still answers its caller in time.
func TestHandedRemovalKeepsFetchDeadline(t *testing.T) {
	b := []byte("take\n")
	rm := &ctxRemover{entered: make(chan struct{}), open: make(chan struct{})}
	defer close(rm.open)
	s := newSamePath(t, func(d *DirStore) refs.Remover { rm.Remover = d; return rm }, b)
	gate := &commitGate{DirStore: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	slow, quick := s.fetcher(gate), s.fetcher(s.store)
	id := s.register(b)
	st := s.stallNext()
	slowDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := slow.Fetch(ctx, id, Request{})
		slowDone <- err
	}()
	<-st.at
	if _, err := quick.Fetch(context.Background(), id, Request{}); err != nil { // a copy to withdraw
		t.Fatal(err)
	}
	close(st.open)
	<-gate.entered // the slow fetch holds the record's copy lock
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	s.reg.Register(ctx, convert.Registration{Server: "s", Never: true, Testimony: convert.Testimony{
		URI: s.srv.URL + "/take.txt", Digest: digestOf(b), Present: convert.FieldURI | convert.FieldDigest}})
	cancel()
	close(gate.open)
	select {
	case err := <-slowDone:
		if err == nil {
			t.Error("the fetch of a reference marked never succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch has not answered its caller, whose deadline was 200 ms: it is running the slow removal")
	}
}

// TestWithdrawSparesOnlyTheNamedSharedCopy pins F20 and N3 for the check
// that lets a copy stay when cleaning up after a fetch: the record names
// its path, in the store the copy is in. A shared store and a host-only
// store whose paths repeat each other (two MemoryStores) tell apart
// where a path does not: a copy withdrawn from the host-only store, and
// one of a record marked never, go whatever the record names.
func TestWithdrawSparesOnlyTheNamedSharedCopy(t *testing.T) {
	tests := []struct {
		name     string
		never    bool // the record is marked never
		hostOnly bool // the copy withdrawn is in the host-only store
		named    string
		wantKept bool
	}{
		{"named-shared", false, false, "same", true},
		{"named-elsewhere", false, false, "other", false},
		{"host-only", false, true, "same", false},
		{"never", true, false, "same", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			shared, host := NewMemoryStore(), NewMemoryStore()
			reg, err := refs.New(refs.Config{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: "https://files.example"}, nil }),
				shared, Config{HostStore: host, FetchNever: true})
			if err != nil {
				t.Fatal(err)
			}
			e := reg.Register(ctx, convert.Registration{Server: "s", Never: tt.never, Testimony: convert.Testimony{
				URI: "https://files.example/take.txt", Present: convert.FieldURI}})
			path := e.ID + ".txt"
			named := map[string]string{"same": path, "other": e.ID + ".csv"}[tt.named]
			if err := reg.SaveMarked(e.ID, convert.Copy{Path: named, Bytes: 5, MimeType: "text/plain"}, e.Testimony); err != nil {
				t.Fatal(err)
			}
			store := Store(shared)
			if tt.hostOnly {
				store = host
			}
			p, _ := store.Begin(ctx, path, "text/plain")
			p.Write([]byte("take\n"))
			if _, err := p.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			rec, _ := reg.Lookup(e.ID)
			c := &copier{f: f, fl: &flight{t: target{rec: rec}}, store: store, hostOnly: tt.hostOnly}
			f.withdraw(ctx, c, path, "the test")
			kept := len(store.(*MemoryStore).Saves()) == 1
			if kept != tt.wantKept {
				t.Errorf("the withdrawn copy kept = %t, want %t", kept, tt.wantKept)
			}
		})
	}
}

// TestStaleCommitKeepsNewerCopy runs two fetchers of one registry, as a
// host with a fetcher per session does, into one DirStore. The first
// downloads the bytes of the reference's old digest slowly; the record
// takes a new digest, and the second fetcher saves the new bytes under
// the same storage name. The first must then not commit its stale copy
// over the new one (F19, F20): the record goes on naming a copy that
// exists and holds the bytes of its verified digest.
func TestStaleCommitKeepsNewerCopy(t *testing.T) {
	oldBytes, newBytes := []byte("old take\n"), []byte("new take\n")
	s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, oldBytes)
	first, second := s.fetcher(s.store), s.fetcher(s.store)
	id := s.register(oldBytes)
	st := s.stallNext()
	firstDone := make(chan error, 1)
	go func() { _, err := first.Fetch(context.Background(), id, Request{}); firstDone <- err }()
	<-st.at
	s.register(newBytes)
	if _, err := second.Fetch(context.Background(), id, Request{}); err != nil {
		t.Fatal(err)
	}
	close(st.open)
	failureOf(t, <-firstDone, CodeGone)
	s.holds(id, newBytes)
}
