package refs_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/logtest"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// failingStore is a MarkStore that holds nothing: Mark fails with markErr
// and Marked with markedErr when they are set. It records every call.
type failingStore struct {
	markErr, markedErr error

	mu     sync.Mutex
	marks  []mark
	asked  []string
	stored map[string]bool
}

func (s *failingStore) Mark(_ context.Context, key, server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks = append(s.marks, mark{key, server})
	if s.markErr != nil {
		return s.markErr
	}
	if s.stored == nil {
		s.stored = map[string]bool{}
	}
	s.stored[key] = true
	return nil
}

func (s *failingStore) Marked(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, key)
	if s.markedErr != nil {
		return false, s.markedErr
	}
	return s.stored[key], nil
}

func (s *failingStore) markCalls() []mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mark(nil), s.marks...)
}

func (s *failingStore) markedCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// errorLines returns the lines logged at level ERROR.
func errorLines(lines []map[string]any) []map[string]any {
	return withAttr(lines, "level", "ERROR")
}

// TestMarkStoreMarkFailsClosed: a mark the store could not record still
// holds in the registry's memory for the process's life, across eviction
// (N1, N7), and the failure is logged without the uri (O1).
func TestMarkStoreMarkFailsClosed(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		mark         func(g *refs.Registry)
	}{
		{
			name:   "mark-never",
			reason: "MarkNever's mark holds although the store refused it",
			mark:   func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
		},
		{
			name:   "register-never",
			reason: "a never registration's mark holds although the store refused it",
			mark:   func(g *refs.Registry) { g.Register(ctx, never("vst", plain(secretURI))) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			store := &failingStore{markErr: errors.New("mark store unreachable")}
			g := newReg(t, refs.Config{Capacity: 1, Marks: store, Logger: logs.Logger()})
			tt.mark(g)
			old, ok := g.ByURI(secretURI)
			if !ok || !old.Never {
				t.Fatalf("N1: the marked record = %+v, %t; want it held and marked (%s)", old, ok, tt.reason)
			}
			want := []mark{{storeKeyOf(secretURI), "vst"}}
			if diff := cmp.Diff(want, store.markCalls()); diff != "" {
				t.Errorf("N7: the store was not asked to keep the mark by the canonical uri's key (-want +got):\n%s", diff)
			}
			for _, m := range store.markCalls() {
				if strings.Contains(m.Key, "secret") || strings.Contains(m.Key, "files.example") {
					t.Errorf("the mark store saw the uri itself: %q", m.Key)
				}
			}
			if !g.Marked(ctx, secretURI) || !g.MarkedHere(secretURI) {
				t.Errorf("N1: a mark the store failed to record reads unmarked (%s)", tt.reason)
			}

			// Evict the marked record: only the registry's memory has the mark.
			g.Register(ctx, from("vst", plain(uriN(1))))
			if _, held := g.Lookup(old.ID); held {
				t.Fatalf("setup: the marked record was not evicted")
			}
			if !g.Marked(ctx, secretURI) || !g.MarkedHere(secretURI) {
				t.Errorf("N7: after eviction a mark the store failed to record reads unmarked (%s)", tt.reason)
			}
			e := g.Register(ctx, from("mail", plain("HTTPS://files.example:443/take.wav?token=secret")))
			if e.ID == old.ID {
				t.Errorf("R1: the new record reused the evicted id %q", e.ID)
			}
			if !e.Never {
				t.Errorf("N7: the uri's new record came back unmarked although the registry made the mark (%s)", tt.reason)
			}
			if err := g.Save(e.ID, convert.Copy{Path: "store/x.wav"}, plain(secretURI)); !errors.Is(err, refs.ErrMarked) {
				t.Errorf("N1/F18: Save on the new record = %v, want ErrMarked", err)
			}

			if lines := withAttr(errorLines(logs.Lines(t)), "ref", old.ID); len(lines) == 0 {
				t.Errorf("O1: no error line names the record whose mark the store refused:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), "secret") || strings.Contains(logs.String(), "take.wav") {
				t.Errorf("O1: a log line carries the uri:\n%s", logs.String())
			}
		})
	}
}

// TestMarkStoreMarkedFailsClosed: when the store cannot say whether a uri
// is marked, the uri counts as marked (N7): a new record for it is a never
// record, Marked reports true, and no copy may be saved for it.
func TestMarkStoreMarkedFailsClosed(t *testing.T) {
	ctx := t.Context()
	var logs logtest.Buffer
	store := &failingStore{markedErr: errors.New("mark store timed out")}
	g := newReg(t, refs.Config{Marks: store, Logger: logs.Logger()})

	e := g.Register(ctx, from("vst", plain(secretURI)))
	if !e.Never {
		t.Errorf("N7: Register of a new uri while the store fails gave an unmarked entry")
	}
	if asked := store.markedCalls(); !slices.Contains(asked, storeKeyOf(secretURI)) {
		t.Errorf("N7: the store was not asked about the canonical uri's key; asked %q", asked)
	}
	rec := mustLookup(t, g, e.ID, "N7")
	if !rec.Never || rec.NeverBy != "" {
		t.Errorf("N7: record Never, NeverBy = %t, %q; want true, \"\" (no server of this process marked it)", rec.Never, rec.NeverBy)
	}
	if !g.Marked(ctx, secretURI) {
		t.Errorf("N7: Marked(uri) = false while the store fails")
	}
	if !g.Marked(ctx, uriN(7)) {
		t.Errorf("N7: Marked of a uri the registry never saw = false while the store fails")
	}
	if err := g.Save(e.ID, convert.Copy{Path: "store/x.wav"}, plain(secretURI)); !errors.Is(err, refs.ErrMarked) {
		t.Errorf("N7/F18: Save on a record the failing store marked = %v, want ErrMarked", err)
	}
	if s := g.Register(ctx, from("", plain(uriN(8)))); !s.Never {
		t.Errorf("N7: a serverless registration of a new uri while the store fails gave an unmarked entry")
	}

	if len(errorLines(logs.Lines(t))) == 0 {
		t.Errorf("O1: the store's failure was not logged as an error:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "secret") || strings.Contains(logs.String(), "take.wav") {
		t.Errorf("O1: a log line carries the uri:\n%s", logs.String())
	}
}

// ctxKey marks the caller's context so a store can check it got it.
type ctxKey struct{}

// reentrantStore is a MarkStore (and Remover) that calls back into its
// registry from every method: with the registry's lock held that would
// deadlock. It also checks that it gets the caller's context.
type reentrantStore struct {
	g   func() *refs.Registry
	mem *refs.MemoryMarks

	mu                    sync.Mutex
	marks, askeds, remove int
	badCtx                []string
}

func (s *reentrantStore) callBack(ctx context.Context, method, key string) {
	g := s.g()
	_ = g.Len()
	_ = g.Cap()
	g.ByURI(key)
	g.EntryForURI(key)
	g.MarkedHere(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Value(ctxKey{}) != "caller" {
		s.badCtx = append(s.badCtx, method)
	}
}

func (s *reentrantStore) Mark(ctx context.Context, key, server string) error {
	s.callBack(ctx, "Mark", key)
	s.mu.Lock()
	s.marks++
	s.mu.Unlock()
	return s.mem.Mark(ctx, key, server)
}

func (s *reentrantStore) Marked(ctx context.Context, key string) (bool, error) {
	s.callBack(ctx, "Marked", key)
	s.mu.Lock()
	s.askeds++
	s.mu.Unlock()
	return s.mem.Marked(ctx, key)
}

func (s *reentrantStore) Remove(ctx context.Context, path string) error {
	s.callBack(ctx, "Remove", path)
	s.mu.Lock()
	s.remove++
	s.mu.Unlock()
	return nil
}

// TestMarkStoreCalledWithoutLock: the registry never calls its mark store
// or remover with its lock held, so they may call back into it (R7, N7),
// and they get the caller's context.
func TestMarkStoreCalledWithoutLock(t *testing.T) {
	ctx := context.WithValue(t.Context(), ctxKey{}, "caller")
	var g *refs.Registry
	var gmu sync.Mutex
	store := &reentrantStore{mem: refs.NewMemoryMarks(0)}
	store.g = func() *refs.Registry {
		gmu.Lock()
		defer gmu.Unlock()
		return g
	}
	reg := newReg(t, refs.Config{Capacity: 2, Marks: store, Remover: store})
	gmu.Lock()
	g = reg
	gmu.Unlock()

	var id string
	withinDeadline(t, "Register of a new uri (asks the store)", func() {
		id = reg.Register(ctx, from("vst", plain(secretURI))).ID
	})
	if err := reg.Save(id, convert.Copy{Path: "store/take.wav", Bytes: 3}, plain(secretURI)); err != nil {
		t.Fatalf("setup: Save = %v", err)
	}
	withinDeadline(t, "Register of a never (stores the mark, removes the copy)", func() {
		reg.Register(ctx, never("vst", plain(secretURI)))
	})
	withinDeadline(t, "MarkNever of a new uri (stores the mark)", func() {
		reg.MarkNever(ctx, uriN(1), "vst")
	})
	withinDeadline(t, "Marked of a uri memory does not hold (asks the store)", func() {
		reg.Marked(ctx, uriN(2))
	})
	withinDeadline(t, "Register of new uris, evicting (asks the store)", func() {
		reg.Register(ctx, from("vst", plain(uriN(3))))
		reg.Register(ctx, from("vst", plain(uriN(4))))
	})

	store.mu.Lock()
	defer store.mu.Unlock()
	if store.marks < 2 || store.askeds < 2 || store.remove != 1 {
		t.Errorf("setup: store calls Mark %d, Marked %d, Remove %d; want at least 2, 2 and exactly 1", store.marks, store.askeds, store.remove)
	}
	if len(store.badCtx) > 0 {
		t.Errorf("the store and remover did not get the caller's context in %q", store.badCtx)
	}
}

// gateStore is a MarkStore whose Marked waits until released, so that two
// registrations of one new uri are both inside the store at once.
type gateStore struct {
	arrived chan struct{}
	release chan struct{}
}

func (s *gateStore) Mark(context.Context, string, string) error { return nil }

func (s *gateStore) Marked(context.Context, string) (bool, error) {
	s.arrived <- struct{}{}
	<-s.release
	return false, nil
}

// TestRegisterRacesAcrossStoreCall: two registrations of one new uri, in
// two spellings, that both ask the store before either inserts still make
// one record (R2, N8, R7).
func TestRegisterRacesAcrossStoreCall(t *testing.T) {
	ctx := t.Context()
	// arrived has room for both, so a store called under the lock
	// cannot block its second caller forever once released.
	store := &gateStore{arrived: make(chan struct{}, 2), release: make(chan struct{})}
	g := newReg(t, refs.Config{Marks: store})
	spellings := []string{secretURI, "HTTPS://FILES.example:443/take.wav?token=secret"}
	ids := make([]string, len(spellings))
	var wg sync.WaitGroup
	for i, u := range spellings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = g.Register(ctx, from("vst", plain(u))).ID
		}()
	}
	for range spellings {
		select {
		case <-store.arrived:
		case <-time.After(5 * time.Second):
			close(store.release)
			wg.Wait()
			t.Fatalf("R7: two registrations were not inside the mark store at once: the store is called under the registry's lock")
		}
	}
	close(store.release)
	wg.Wait()
	if ids[0] != ids[1] || g.Len() != 1 {
		t.Errorf("R2/N8: racing registrations of one uri gave ids %q and %q, Len %d; want one record", ids[0], ids[1], g.Len())
	}
}

// storeKeyOf is the key a mark store sees for uri, as MarkStore's doc
// defines it: "sha256:" and the base64url SHA-256 of the canonical form.
func storeKeyOf(uri string) string {
	sum := sha256.Sum256([]byte(uriform.Canonical(uri)))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func (s *failingStore) set(markErr, markedErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markErr, s.markedErr = markErr, markedErr
}

// TestMarkStoreRecovers pins N7 across a store outage: a mark the store
// failed to record is tried again with the next never for the uri, and a
// server's real never on a record a failed read had marked is still sent
// to the store, once it answers, and logged.
func TestMarkStoreRecovers(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{markErr: errors.New("down")}
	g := newReg(t, refs.Config{Marks: store})
	g.Register(ctx, never("vst", plain(secretURI)))
	store.set(nil, nil)
	g.Register(ctx, never("vst", plain(secretURI)))
	if ok, _ := store.Marked(ctx, storeKeyOf(secretURI)); !ok {
		t.Errorf("N7: a mark the store failed to record was not tried again with the next never")
	}

	const other = "https://files.example/other.wav"
	store.set(nil, errors.New("timed out"))
	if e := g.Register(ctx, from("vst", plain(other))); !e.Never {
		t.Fatal("N7: a failed store read did not withhold the new record")
	}
	store.set(nil, nil)
	g.Register(ctx, never("mail", plain(other)))
	if ok, _ := store.Marked(ctx, storeKeyOf(other)); !ok {
		t.Errorf("N7: a server's never on a record a failed read had marked never reached the store")
	}
	if rec, _ := g.ByURI(other); rec.NeverBy != "mail" {
		t.Errorf("N5: the record names %q as its marker, want the server whose never arrived", rec.NeverBy)
	}
}

// TestHeldRecordLearnsStoreMark pins N7 for a fleet: a mark another host
// put in the shared store reaches a record this registry already holds,
// the next time a new spelling of its uri arrives.
func TestHeldRecordLearnsStoreMark(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{}
	g := newReg(t, refs.Config{Marks: store})
	e := g.Register(ctx, from("vst", plain(secretURI)))
	if e.Never {
		t.Fatal("a fresh uri came back marked")
	}
	if err := store.Mark(ctx, storeKeyOf(secretURI), "elsewhere"); err != nil {
		t.Fatal(err)
	}
	again := g.Register(ctx, from("vst", plain("HTTPS://FILES.EXAMPLE/take.wav?token=secret")))
	if again.ID != e.ID || !again.Never {
		t.Errorf("N7: the held record did not take the store's mark: %+v", again)
	}
	if err := g.Save(e.ID, convert.Copy{Path: "p"}, plain(secretURI)); !errors.Is(err, refs.ErrMarked) {
		t.Errorf("N1: Save on a record the store marked = %v, want ErrMarked", err)
	}
}

// TestMarkedLearnsStoreMarks pins N7 for readers without a context: once
// Marked has found a mark in the store (made by another process), the
// registry's memory holds it, so MarkedHere reports it too. A store that
// could not be read teaches nothing: the next question asks it again.
func TestMarkedLearnsStoreMarks(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{stored: map[string]bool{storeKeyOf(secretURI): true}}
	g := newReg(t, refs.Config{Marks: store})
	if g.MarkedHere(secretURI) {
		t.Fatal("setup: MarkedHere knew a store's mark before anyone asked the store")
	}
	if !g.Marked(ctx, secretURI) {
		t.Fatal("N7: Marked missed the store's mark")
	}
	if !g.MarkedHere(secretURI) {
		t.Errorf("N7: MarkedHere forgot the mark Marked just found in the store")
	}
	if g.MarkedHere(uriN(3)) {
		t.Errorf("MarkedHere reports a uri no one marked")
	}

	// A store that reports every uri marked teaches the registry no more
	// than its bound: the oldest learned mark goes first.
	all := &failingStore{stored: map[string]bool{}}
	for i := range 10 {
		all.stored[storeKeyOf(uriN(i))] = true
	}
	g = newReg(t, refs.Config{Marks: all, MarkBound: 4})
	for i := range 10 {
		g.Marked(ctx, uriN(i))
	}
	if g.MarkedHere(uriN(0)) || !g.MarkedHere(uriN(9)) {
		t.Errorf("learned marks: MarkedHere(oldest, newest) = %t, %t; want false, true (bound 4)", g.MarkedHere(uriN(0)), g.MarkedHere(uriN(9)))
	}
	if !g.Marked(ctx, uriN(0)) {
		t.Errorf("N7: a learned mark the bound dropped is not found in the store again")
	}

	failing := &failingStore{markedErr: errors.New("mark store timed out")}
	g = newReg(t, refs.Config{Marks: failing})
	if !g.Marked(ctx, secretURI) {
		t.Fatal("N7: Marked = false while the store fails")
	}
	if g.MarkedHere(secretURI) {
		t.Errorf("a failed store read was learned as a mark")
	}
}

// TestStoreMarkWithdrawsHeldCopy pins N7 and N3 for a mark another host put
// in a shared store while this registry holds the record with a saved
// copy. The mark counts as soon as the registry learns it, through
// Register (in the spelling it holds, or another) or through Marked (the
// fetcher's question): the record is marked, its copy is no longer named
// and the Remover deletes it. A store that cannot be read during Marked
// withholds the answer, not the record: the next question asks again.
func TestStoreMarkWithdrawsHeldCopy(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		learn func(g *refs.Registry)
	}{
		{"register the same spelling", func(g *refs.Registry) { g.Register(ctx, from("vst", plain(secretURI))) }},
		{"register another spelling", func(g *refs.Registry) {
			g.Register(ctx, from("vst", plain("HTTPS://FILES.EXAMPLE/take.wav?token=secret")))
		}},
		{"serverless register", func(g *refs.Registry) { g.Register(ctx, from("", plain(secretURI))) }},
		{"Marked", func(g *refs.Registry) {
			if !g.Marked(ctx, secretURI) {
				t.Error("N7: Marked missed the store's mark")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logtest.Buffer
			store := &failingStore{}
			rm := &fakeRemover{}
			g := newReg(t, refs.Config{Marks: store, Remover: rm, Logger: logs.Logger()})
			e := g.Register(ctx, from("vst", plain(secretURI)))
			if err := g.Save(e.ID, convert.Copy{Path: "store/" + e.ID + ".wav", Bytes: 3}, plain(secretURI)); err != nil {
				t.Fatal(err)
			}
			if err := store.Mark(ctx, storeKeyOf(secretURI), "elsewhere"); err != nil {
				t.Fatal(err)
			}
			tc.learn(g)
			got, ok := g.Entry(e.ID)
			if !ok || !got.Never || got.Copy != nil {
				t.Errorf("N7/N3: entry after the store's mark was learned: %+v, %t; want marked, no copy", got, ok)
			}
			rec := mustLookup(t, g, e.ID, "N7")
			if !rec.Never || rec.NeverBy != "" || rec.Copy != nil {
				t.Errorf("N7: record Never, NeverBy, Copy = %t, %q, %v; want true, \"\", nil", rec.Never, rec.NeverBy, rec.Copy)
			}
			if removed := rm.removed(); !slices.Equal(removed, []string{"store/" + e.ID + ".wav"}) {
				t.Errorf("N3: the Remover was asked to remove %q, want the withdrawn copy once", removed)
			}
			if strings.Contains(logs.String(), "digest") {
				t.Errorf("O1: a mark's withdrawal is logged as a digest change:\n%s", logs.String())
			}
		})
	}

	// A failed read during Marked refuses this once, and marks nothing.
	failing := &failingStore{}
	g := newReg(t, refs.Config{Marks: failing})
	e := g.Register(ctx, from("vst", plain(secretURI)))
	failing.markedErr = errors.New("mark store timed out")
	if !g.Marked(ctx, secretURI) {
		t.Error("N7: Marked = false while the store fails")
	}
	failing.markedErr = nil
	if got, _ := g.Entry(e.ID); got.Never {
		t.Error("a store that failed once during Marked left the held record marked for good")
	}
}

// TestFleetMarkWithheldInViews is the same from a host's side: a converter
// whose policy shows uris and inlines saved payloads must show neither
// once the shared store marks the uri (S2, N3).
func TestFleetMarkWithheldInViews(t *testing.T) {
	ctx := t.Context()
	shared := refs.NewMemoryMarks(0)
	hostA := newReg(t, refs.Config{Marks: shared})
	hostB := newReg(t, refs.Config{Marks: shared})
	e := hostA.Register(ctx, from("studio", plain(secretURI)))
	if err := hostA.Save(e.ID, convert.Copy{Path: "store/" + e.ID + ".wav", Bytes: 3, MimeType: "audio/wav"}, plain(secretURI)); err != nil {
		t.Fatal(err)
	}
	hostB.Register(ctx, convert.Registration{Testimony: plain(secretURI), Server: "studio", Never: true})

	conv, err := convert.New(hostA, convert.Policy{
		ShowURI: func(convert.Entry) bool { return true },
		Inline: func(convert.Entry) (convert.ModelBlock, bool) {
			return convert.ModelBlock{Type: "audio", Data: "UEFZTE9BRA==", MimeType: "audio/wav"}, true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ct := conv.Ingest(ctx, []json.RawMessage{json.RawMessage(`{"type":"resource","uri":"` + secretURI + `","name":"take.wav"}`)},
		convert.Source{Server: "studio", Lane: convert.LanePush, Event: "render"})
	for _, v := range []string{ct.History(), convert.PushJSON(ct.Push())} {
		if strings.Contains(v, "token=secret") || strings.Contains(v, "store/") || strings.Contains(v, "UEFZTE9BRA==") {
			t.Errorf("S2/N3: a view shows the marked uri, its saved copy or its payload:\n%s", v)
		}
	}
}

// TestStoreOutageKeepsHeldCopy pins N7's failure rule for a record the
// registry already holds: a store that cannot be read while the record is
// registered again, in its own spelling or another, is not a mark. The
// record keeps its state and its copy, and nothing is removed; only a
// record that registration creates is withheld for it.
func TestStoreOutageKeepsHeldCopy(t *testing.T) {
	ctx := t.Context()
	for _, again := range []string{secretURI, "HTTPS://FILES.EXAMPLE/take.wav?token=secret"} {
		store := &failingStore{}
		rm := &fakeRemover{}
		g := newReg(t, refs.Config{Marks: store, Remover: rm})
		e := g.Register(ctx, from("vst", plain(secretURI)))
		if err := g.Save(e.ID, convert.Copy{Path: "store/" + e.ID + ".wav", Bytes: 3}, plain(secretURI)); err != nil {
			t.Fatal(err)
		}
		store.mu.Lock()
		store.markedErr = errors.New("mark store timed out")
		store.mu.Unlock()
		g.Register(ctx, from("vst", plain(again)))
		if fresh := g.Register(ctx, from("vst", plain(uriN(5)))); !fresh.Never {
			t.Errorf("N7: a record created while the store fails is not withheld")
		}
		if removed := rm.removed(); len(removed) != 0 {
			t.Errorf("N7: an outage of the store made the Remover delete %q (registered again as %q)", removed, again)
		}
		if got, _ := g.Entry(e.ID); got.Never || got.Copy == nil {
			t.Errorf("N7: an outage marked the held record for good (registered again as %q): %+v", again, got)
		}
	}
}

// TestUnconfirmedNeverOnStoreOutage pins N7's failure rule together with
// what the record says of it: a record made while the mark store cannot be
// read is withheld, but no server is known to have marked it, so it says
// NeverUnconfirmed and names no marking server. A server's own never, or
// the store reporting a mark once it can be read, confirms it.
func TestUnconfirmedNeverOnStoreOutage(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{markedErr: errors.New("mark store down")}
	g := newReg(t, refs.Config{Marks: store})
	e := g.Register(ctx, from("srv", plain(uriN(1))))
	if !e.Never || !e.NeverUnconfirmed || e.NeverBy != "" {
		t.Fatalf("N7: entry during an outage = never %t, unconfirmed %t, by %q; want withheld, unconfirmed, by no one", e.Never, e.NeverUnconfirmed, e.NeverBy)
	}
	if rec := mustLookup(t, g, e.ID, "N7"); !rec.Never || !rec.NeverUnconfirmed {
		t.Errorf("N7: Record during an outage = never %t, unconfirmed %t", rec.Never, rec.NeverUnconfirmed)
	}
	if e, _ := g.MarkNever(ctx, uriN(1), "srv"); !e.Never || e.NeverUnconfirmed || e.NeverBy != "srv" {
		t.Errorf("N7: after the server's never: never %t, unconfirmed %t, by %q; want confirmed, by srv", e.Never, e.NeverUnconfirmed, e.NeverBy)
	}

	// The store recovers and reports a mark another host made.
	e = g.Register(ctx, from("srv", plain(uriN(2))))
	if !e.NeverUnconfirmed {
		t.Fatal("setup: the second record is not unconfirmed")
	}
	store.mu.Lock()
	store.markedErr = nil
	store.stored = map[string]bool{storeKeyOf(uriN(2)): true}
	store.mu.Unlock()
	if e = g.Register(ctx, from("srv", plain(uriN(2)))); !e.Never || e.NeverUnconfirmed {
		t.Errorf("N7: after the store reported the mark: never %t, unconfirmed %t; want confirmed", e.Never, e.NeverUnconfirmed)
	}
}

// TestMarkedConfirmsUnconfirmedNever pins N7 for Marked: a record withheld
// only because the mark store could not be read when it was made is asked
// about again, and once the store reports a mark another host made, the
// record says so (no longer NeverUnconfirmed), as a new registration of
// the uri would make it say. While the store reports nothing it stays
// withheld and unconfirmed.
func TestMarkedConfirmsUnconfirmedNever(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{markedErr: errors.New("mark store down")}
	g := newReg(t, refs.Config{Marks: store})
	e := g.Register(ctx, from("srv", plain(uriN(1))))
	if !e.NeverUnconfirmed {
		t.Fatal("setup: the record is not unconfirmed")
	}
	store.mu.Lock()
	store.markedErr = nil
	store.mu.Unlock()
	if !g.Marked(ctx, uriN(1)) {
		t.Error("N7: Marked of a record withheld for unreadable marks = false")
	}
	if rec := mustLookup(t, g, e.ID, "N7"); !rec.Never || !rec.NeverUnconfirmed {
		t.Errorf("N7: with no mark in the store: never %t, unconfirmed %t; want withheld, unconfirmed", rec.Never, rec.NeverUnconfirmed)
	}

	store.mu.Lock()
	store.stored = map[string]bool{storeKeyOf(uriN(1)): true}
	store.mu.Unlock()
	if !g.Marked(ctx, uriN(1)) {
		t.Error("N7: Marked with the store reporting the mark = false")
	}
	if rec := mustLookup(t, g, e.ID, "N7"); !rec.Never || rec.NeverUnconfirmed {
		t.Errorf("N7: after Marked learned the mark: never %t, unconfirmed %t; want confirmed", rec.Never, rec.NeverUnconfirmed)
	}
}

// TestMarkKnown pins N7's distinction for wording: MarkKnown reports a
// server's mark this registry made or learned, and not a record withheld
// only because the mark store could not be read when it was made, which
// MarkedHere still counts (it decides what is withheld).
func TestMarkKnown(t *testing.T) {
	ctx := t.Context()
	store := &failingStore{markedErr: errors.New("mark store down")}
	g := newReg(t, refs.Config{Marks: store, Capacity: 1})
	g.Register(ctx, from("srv", plain(uriN(1))))
	if !g.MarkedHere(uriN(1)) || g.MarkKnown(uriN(1)) {
		t.Errorf("N7: a record withheld for unreadable marks: MarkedHere %t, MarkKnown %t; want true, false", g.MarkedHere(uriN(1)), g.MarkKnown(uriN(1)))
	}
	g.MarkNever(ctx, uriN(1), "srv")
	if !g.MarkKnown(uriN(1)) {
		t.Error("N7: MarkKnown after the server's never = false")
	}
	// Evicted, the mark is still known; another uri's is not.
	g.Register(ctx, from("srv", plain(uriN(2))))
	if !g.MarkKnown(uriN(1)) || g.MarkKnown(uriN(3)) {
		t.Errorf("N7: MarkKnown of an evicted marked uri %t, of an unknown uri %t; want true, false", g.MarkKnown(uriN(1)), g.MarkKnown(uriN(3)))
	}
}
