package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
			if st.with != nil {
				b = st.with
			}
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
// arrives, and it is answered once open is closed, with the bytes the
// server had when it arrived, or with with if that was set before.
type stall struct {
	at, open chan struct{}
	with     []byte
}

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
// open is closed.
type commitGate struct {
	*DirStore
	entered chan struct{}
	open    chan struct{}
	first   atomic.Bool
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
	<-p.g.open
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

// TestHandedRemovalKeepsFetchDeadline pins F12 with F20's ordering: a
// removal put off until a fetch of the record has saved its copy must not
// hold that fetch's caller past its deadline. While a fetch commits, the
// host saves a copy of its own on the record and a never mark withdraws
// it; the Remover that is to delete that copy is slow, and the fetch
// still answers its caller in time.
func TestHandedRemovalKeepsFetchDeadline(t *testing.T) {
	b := []byte("take\n")
	rm := &ctxRemover{entered: make(chan struct{}), open: make(chan struct{})}
	defer close(rm.open)
	s := newSamePath(t, func(d *DirStore) refs.Remover { rm.Remover = d; return rm }, b)
	gate := &commitGate{DirStore: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	slow := s.fetcher(gate)
	id := s.register(b)
	slowDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := slow.Fetch(ctx, id, Request{})
		slowDone <- err
	}()
	<-gate.entered // the slow fetch holds the record's copy lock
	rec, _ := s.reg.Lookup(id)
	if err := s.reg.Save(id, convert.Copy{Path: filepath.Join(s.store.Dir(), "host.txt"), Bytes: 5}, rec.Testimony); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	s.reg.Register(ctx, convert.Registration{Server: "s", Never: true, Testimony: rec.Testimony})
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
	select {
	case <-rm.entered: // and is waiting, on a goroutine of its own
	case <-time.After(10 * time.Second):
		t.Error("the withdrawn copy's removal never began")
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

// TestCopySavedMeanwhileServed pins F19, F20 and N3 for two fetchers of
// one registry whose downloads of a record overlap: the second has yet to
// commit when the first saves the record's copy. The second must not
// commit its own copy, neither over the named file (which would then hold
// bytes the record's facts do not describe) nor beside it in another
// store (where nothing would name it); its caller gets the saved copy.
func TestCopySavedMeanwhileServed(t *testing.T) {
	good, other := []byte("verified take\n"), []byte("something else entirely\n")
	tests := []struct {
		name string
		// before is the record's testimony as the second download begins;
		// after is said once the first fetcher has saved.
		before, after   []byte // the bytes whose digest is claimed; nil claims none
		second          []byte // what the server sends the second
		secondOwnsStore bool   // the second fetcher has a DirStore of its own
	}{
		{name: "same-digest", before: good, after: good, second: good},
		{name: "no-digest-other-bytes", second: other},
		{name: "verified-then-no-digest", after: nil, second: other},
		{name: "other-store", before: good, after: good, second: good, secondOwnsStore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, good)
			secondStore := s.store
			if tt.secondOwnsStore {
				var err error
				if secondStore, err = NewDirStore(t.TempDir()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { secondStore.Close() })
			}
			first, second := s.fetcher(s.store), s.fetcher(secondStore)
			say := func(b []byte) string {
				r := convert.Registration{Server: "s", Testimony: convert.Testimony{URI: s.srv.URL + "/take.txt", Present: convert.FieldURI}}
				if b != nil {
					r.Testimony.Digest, r.Testimony.Present = digestOf(b), r.Testimony.Present|convert.FieldDigest
				}
				return s.reg.Register(context.Background(), r).ID
			}
			id := say(tt.before)
			st := s.stallNext()
			st.with = tt.second
			done := make(chan error, 1)
			var res Result
			go func() {
				var err error
				res, err = second.Fetch(context.Background(), id, Request{})
				done <- err
			}()
			<-st.at
			if tt.before == nil {
				say(good) // the first fetch verifies the good bytes
			}
			saved, err := first.Fetch(context.Background(), id, Request{})
			if err != nil {
				t.Fatal(err)
			}
			say(tt.after)
			close(st.open)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !res.FromCopy || res.Path != saved.Path {
				t.Errorf("the second fetch answered %+v, want the saved copy %s", res, saved.Path)
			}
			rec, _ := s.reg.Lookup(id)
			if rec.Copy == nil || rec.Copy.Path != saved.Path {
				t.Fatalf("the record names %+v, want the first fetcher's copy", rec.Copy)
			}
			got, err := os.ReadFile(rec.Copy.Path)
			if err != nil || int64(len(got)) != rec.Copy.Bytes || rec.Copy.DigestVerified && digestOf(got) != digestOf(good) {
				t.Errorf("the record's copy (%d bytes, verified %t) holds %q (%v)", rec.Copy.Bytes, rec.Copy.DigestVerified, got, err)
			}
			for _, dir := range []string{s.store.Dir(), secondStore.Dir()} {
				names, _ := os.ReadDir(dir)
				if want := map[bool]int{true: 1, false: 0}[dir == s.store.Dir()]; len(names) != want {
					t.Errorf("%s holds %d files, want %d", dir, len(names), want)
				}
			}
		})
	}
}

// TestWithdrawBounded pins F12 for the clean-up of a copy the fetcher
// committed and cannot keep: a store whose Remove hangs until its context
// ends holds the fetch, and the record's copy lock, only until
// withdrawMax; then another fetch of the record goes on.
func TestWithdrawBounded(t *testing.T) {
	defer func(d time.Duration) { withdrawMax = d }(withdrawMax)
	withdrawMax = 100 * time.Millisecond
	b := []byte("take\n")
	s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, b)
	gate := &commitGate{DirStore: s.store, entered: make(chan struct{}), open: make(chan struct{})}
	id := s.register(b)
	// A new digest lands while the copy is being committed: the save is
	// refused, and the copy is withdrawn through the hanging Remove.
	stuck, err := New(s.reg, s.servers, struct {
		Store
		refs.Remover
	}{gate, removerFunc(func(ctx context.Context, _ string) error { <-ctx.Done(); return ctx.Err() })}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := stuck.Fetch(context.Background(), id, Request{}); done <- err }()
	<-gate.entered
	s.register([]byte("new take\n"))
	close(gate.open)
	select {
	case err := <-done:
		failureOf(t, err, CodeGone)
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch is still waiting for the store's Remove")
	}
	if _, err := s.fetcher(s.store).Fetch(context.Background(), id, Request{}); err != nil {
		t.Fatal(err)
	}
	s.holds(id, []byte("new take\n"))
}

// TestSavedCopyServedOnlyWhileNamed pins F19, F20 and N2 for a download
// that finds a copy another fetcher saved meanwhile: while it discards its
// own copy, the record takes a new digest or a never mark, and stops
// naming the saved copy (whose file is then removed). The fetch must not
// answer with that copy.
func TestSavedCopyServedOnlyWhileNamed(t *testing.T) {
	good, newer := []byte("verified take\n"), []byte("newer take\n")
	tests := []struct {
		name    string
		forHost bool
		change  func(s *samePath, uri string)
		want    error
	}{
		{"new-digest-model", false, func(s *samePath, _ string) { s.register(newer) }, CodeGone},
		{"new-digest-host", true, func(s *samePath, _ string) { s.register(newer) }, CodeGone},
		{"never-host", true, func(s *samePath, uri string) { s.reg.MarkNever(context.Background(), uri, "s") }, CodeWithheld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSamePath(t, func(d *DirStore) refs.Remover { return d }, good)
			// The second fetcher's store is slow to discard a copy.
			gate := &abortGateStore{MemoryStore: NewMemoryStore(), aborting: make(chan struct{}), release: make(chan struct{})}
			first, second := s.fetcher(s.store), s.fetcher(gate)
			id := s.register(good)
			st := s.stallNext()
			done := make(chan error, 1)
			go func() {
				_, err := second.Fetch(context.Background(), id, Request{ForHost: tt.forHost})
				done <- err
			}()
			<-st.at
			if _, err := first.Fetch(context.Background(), id, Request{}); err != nil {
				t.Fatal(err)
			}
			close(st.open)
			<-gate.aborting // the second found the saved copy and discards its own
			tt.change(s, s.srv.URL+"/take.txt")
			close(gate.release)
			failureOf(t, <-done, tt.want)
		})
	}
}
