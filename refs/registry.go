package refs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/copylock"
	"github.com/mcplrefs/refcore/internal/uriform"
)

// A Registry is the record store convert's views register in.
var _ convert.Registrar = (*Registry)(nil)

// DefaultCapacity is the record bound a zero [Config] gets.
const DefaultCapacity = 2000

// EvictReason says why a record left the registry. Overwriting a record's
// testimony is never an eviction.
type EvictReason int

const (
	// EvictCapacity: the registry was full and this record was the least
	// recently used.
	EvictCapacity EvictReason = iota + 1
	// EvictRemoved: the host removed it with [Registry.Remove].
	EvictRemoved
)

// String returns "capacity" or "removed".
func (r EvictReason) String() string {
	switch r {
	case EvictCapacity:
		return "capacity"
	case EvictRemoved:
		return "removed"
	}
	return "unknown"
}

// Remover removes a stored copy of a payload. A host that gives one has
// the copies a record stops naming deleted, not only forgotten: one a
// never mark withdraws, one that a server's new digest for the reference
// makes stale, and one that a newer copy saved at another path replaces.
// Copies of evicted records are left to the host (see Config.OnEvict). It
// is never called with the registry's lock held.
//
// A removal never deletes a copy that a fetch of this registry is storing
// at that moment under the same path: while a fetch of the record commits
// and saves its copy, the removal is put off until the fetch has finished.
// It then runs on a goroutine of its own, without making the call that
// asked for it wait, with a context that ends 30 seconds later; fetches
// of the record wait to store a copy until it returns. Remove must therefore
// not wait for a fetch of the same reference. Copies a host writes and
// saves itself, outside this module's fetcher, are not ordered this way.
type Remover interface {
	// Remove deletes the copy saved at path. Its error is logged, and so
	// is a panic; a copy already gone should not be an error.
	Remove(ctx context.Context, path string) error
}

// Config sets up a Registry. Its zero value is the documented default;
// a negative number is an error in [New], never "unbounded".
type Config struct {
	// Capacity bounds the number of records. Zero means DefaultCapacity.
	// One content naming more references than Capacity evicts its own
	// first ones, and every other record, on the way.
	// New reserves map room for Capacity records, or for 16,384 when
	// Capacity is larger (about 1.7 MB), so filling the registry does not
	// grow its maps while callers wait.
	Capacity int
	// OnEvict, if set, is called with a snapshot of each record that
	// leaves the registry and the reason. It runs after the registry's lock
	// is released, on the goroutine whose call caused the eviction. A
	// saved copy outlives its record: the registry deletes no file when a
	// record leaves, so a host that wants its store bounded removes
	// Record.Copy.Path here (a DirStore's Remove does).
	OnEvict func(Record, EvictReason)
	// Marks, if set, keeps never marks beyond this registry's memory (on
	// disk, in a shared database). Nil keeps them in memory only, for the
	// registry's life.
	Marks MarkStore
	// MarkBound bounds the marks the registry keeps in memory for each
	// server. Zero means DefaultMarkBound.
	MarkBound int
	// Remover, if set, deletes a saved copy when a never mark withdraws it,
	// a new digest makes it stale or a newer copy at another path replaces
	// it. Without one, the copy is forgotten and its path logged.
	Remover Remover
	// Logger receives operator lines (marks, withdrawn copies, mark store
	// failures). Nil discards them.
	Logger *slog.Logger
	// Rand is the source of id randomness. Nil means crypto/rand.
	Rand io.Reader
}

// Registry is a bounded, least-recently-used store of host-private
// reference records. It is safe for concurrent use by multiple goroutines.
// The zero Registry is not usable; make one with [New].
type Registry struct {
	mu       sync.Mutex
	capacity int
	order    lru
	byID     map[string]*record
	// byURI maps each record's canonical uri, and the exact spellings
	// seen of it, to the record, so a spelling the registry knows is found
	// without canonicalizing it again (BenchmarkRegister/hit pays for it).
	// One map serves both: a canonical uri is its own canonical form, so
	// a string names one record whichever role it plays, and a record
	// whose uri is already canonical costs one entry, not two
	// (BenchmarkHeapPerRecord).
	byURI map[string]*record
	// ones holds a one-element slice per server name, shared by the
	// records bound to that server alone (BenchmarkHeapPerRecord).
	ones     map[string][]string
	ids      *idMint
	onEvict  func(Record, EvictReason)
	local    *MemoryMarks        // the marks this registry made or learned
	store    MarkStore           // nil: memory only
	unstored map[string]struct{} // canonical uris whose mark the store failed to record
	remover  Remover
	log      *slog.Logger
}

// New returns an empty Registry configured by cfg. It fails on a negative
// Capacity or MarkBound, and when the id randomness cannot be read.
func New(cfg Config) (*Registry, error) {
	if cfg.Capacity < 0 {
		return nil, fmt.Errorf("%w: negative Capacity %d", ErrBadConfig, cfg.Capacity)
	}
	if cfg.MarkBound < 0 {
		return nil, fmt.Errorf("%w: negative MarkBound %d", ErrBadConfig, cfg.MarkBound)
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	ids, err := newIDMint(cfg.Rand)
	if err != nil {
		return nil, fmt.Errorf("refs: reading id randomness: %w", err)
	}
	// The maps start at the bound (up to 16,384 entries), so filling the
	// registry does not grow them under the lock step by step
	// (BenchmarkHostFlow: ingest about 5% faster).
	g := &Registry{
		capacity: cfg.Capacity,
		byID:     make(map[string]*record, min(cfg.Capacity, 1<<14)),
		byURI:    make(map[string]*record, min(cfg.Capacity, 1<<14)),
		ones:     make(map[string][]string),
		ids:      ids,
		onEvict:  cfg.OnEvict,
		local:    NewMemoryMarks(cfg.MarkBound),
		unstored: make(map[string]struct{}),
		store:    cfg.Marks,
		remover:  cfg.Remover,
		log:      cfg.Logger,
	}
	g.order.init()
	return g, nil
}

// Register records one reference and returns what a view needs of it
// (see [convert.Registrar]). Registering a uri the registry holds, in
// this or another spelling of it, returns the same record and makes it the
// most recently used. A server's word replaces serverless testimony, and a
// server's later word (a re-signed uri, a fresh expiry) replaces an
// earlier one; serverless content replaces testimony only while no server
// has bound the record. When r.Never is set and r.Server is not empty, the
// record is marked never; a uri marked before (even on a record since
// evicted, or in the mark store) comes back marked. With a mark store,
// every registration asks it, so a mark another host made after this
// registry took the record applies as well: the record's saved copy is no
// longer named, and the Remover, if any, deletes it.
func (g *Registry) Register(ctx context.Context, r convert.Registration) (e convert.Entry) {
	// A spelling the registry holds, without a never to record, takes a
	// short path of its own, free of the mark, store and eviction steps
	// (BenchmarkRegister/hit/2000: 65 ns before, 62 after). The entry is
	// built in place in the result (56 ns). With a mark store every
	// registration asks it, since another host may have marked the uri
	// since this registry took the record.
	if g.store == nil && (!r.Never || r.Server == "") {
		g.lock()
		if rec := g.byURI[r.Testimony.URI]; rec != nil {
			forgotten := g.updateLocked(rec, &r)
			g.order.touch(rec)
			rec.fill(&e)
			g.mu.Unlock()
			ownEntry(&e)
			g.afterForget(ctx, e.ID, forgotten)
			return e
		}
		g.mu.Unlock()
		return g.register(ctx, r, true)
	}
	return g.register(ctx, r, false)
}

// lock takes the registry's lock. A caller that finds it held tries again
// for a short while before it waits in the mutex's queue: every section
// the lock guards is short, and with more goroutines than processors
// sync.Mutex queues a caller at once, so each contended call paid for a
// park and a wake-up that cost far more than the wait. With eight sessions
// on two cores ingesting took about a fifth less time this way
// (BenchmarkHostFlow/fetchers=8, ingest-ns/op: as fast as two sessions);
// lockSpins tries, about two microseconds when the lock stays held, was
// the shortest spin that gave all of it. Two goroutines that do nothing
// but call the registry lose by it (a hit then takes about twice as long,
// the lock changing cores on every call); a host works between calls, and
// two sessions ingesting take as long as before.
func (g *Registry) lock() {
	if spinning {
		for range lockSpins {
			if g.mu.TryLock() {
				return
			}
		}
	}
	g.mu.Lock()
}

// lockSpins is how many times [Registry.lock] tries a held lock before
// it waits.
const lockSpins = 1000

// spinning is whether trying again can help: with one processor for Go
// the holder cannot release the lock while the caller spins. It is the
// processors Go runs on when the program starts (GOMAXPROCS, which a
// container's limit sets), not the machine's count; reading it at every
// lock would take a lock of the runtime's.
var spinning = runtime.GOMAXPROCS(0) > 1

// afterForget tells the operator that new testimony made the saved copy
// c of record id stale, and removes it with the host's Remover: no record
// names it any more, and an evicted record could not report it to
// OnEvict. It runs without the lock; c nil does nothing.
func (g *Registry) afterForget(ctx context.Context, id string, c *convert.Copy) {
	if c == nil {
		return
	}
	g.log.Info("refs: a new digest for a reference no longer matches its saved copy; the copy is forgotten",
		"ref", id, "path", c.Path)
	if g.remover != nil {
		g.removeUnnamed(ctx, id, c.Path, "a new digest made stale")
	}
}

// register is Register's full path. missed says the short path just
// found no record for the raw uri, so it is not looked up again before
// the canonical form is computed (one lock fewer per new reference:
// BenchmarkHostFlow/fetchers=8).
func (g *Registry) register(ctx context.Context, r convert.Registration, missed bool) convert.Entry {
	uri := r.Testimony.URI
	var (
		evicted   []Record
		forgotten *convert.Copy
		rec       *record
		key       string
		stored    bool // the store marks key, or could not be read
		reported  bool // the store marks key
		asked     bool // the store was asked about key
		created   bool // this registration made the record
	)
	// A server's never marks the record whatever the store holds, so the
	// store is not asked then: a mark StoreNeverMarks has just stored
	// would otherwise read as one made elsewhere.
	ask := g.store != nil && !(r.Never && r.Server != "")
	if !missed {
		g.lock()
		rec = g.byURI[uri]
		if rec != nil && ask {
			key = rec.key
			g.mu.Unlock()
			stored, reported = g.storeMarked(ctx, key)
			asked = true
			g.lock()
			rec = g.byURI[uri] // it may have left meanwhile
		}
		if rec == nil {
			g.mu.Unlock()
		}
	}
	if rec == nil {
		if !asked {
			key = uriform.Canonical(uri)
		}
		if !asked && ask {
			stored, reported = g.storeMarked(ctx, key)
		}
		// The record is made, and its id minted, before the lock is taken:
		// minting is the costliest step of an insert, and allocating
		// under the lock makes every other caller wait out any garbage
		// collection assist (BenchmarkHostFlow/fetchers=8). A new spelling
		// of a held uri, or a race with another registration of it, leaves
		// both unused; ids need not be consecutive.
		fresh := &record{id: g.ids.mint(), uri: uri, key: key, testimony: r.Testimony}
		g.lock()
		if rec = g.byURI[key]; rec == nil {
			rec = g.insertLocked(fresh, r.Server)
			evicted = g.trimLocked()
			created = true
		} else {
			g.aliasLocked(rec, uri)
			forgotten = g.updateLocked(rec, &r)
		}
	} else {
		forgotten = g.updateLocked(rec, &r)
	}
	// A mark this registry remembers, or one the store holds (another
	// process's, another host's), applies to the record whether it is new
	// or held. A store that could not be read counts as a mark for a
	// record this registration makes, which holds nothing yet; a record
	// held before, and its copy, are not withdrawn for it.
	var withdrawn *convert.Copy
	confirmed := reported || g.local.marked(rec.key)
	switch {
	case !rec.never && (confirmed || created && stored):
		withdrawn = g.withdrawLocked(rec)
		rec.unsure = !confirmed // an unreadable store is no server's word
	case rec.unsure && confirmed:
		rec.unsure = false
	}
	g.order.touch(rec)
	var ev *markEvent
	if r.Never && r.Server != "" {
		ev = g.markLocked(rec, r.Server)
	}
	var e convert.Entry
	rec.fill(&e)
	g.mu.Unlock()
	ownEntry(&e)
	g.afterForget(ctx, e.ID, forgotten)
	g.afterWithdraw(ctx, e.ID, withdrawn)
	g.afterMark(ctx, ev)
	g.notify(evicted, EvictCapacity)
	return e
}

// withdrawLocked marks rec never on a mark made elsewhere (the mark store,
// or this registry's memory of a record since evicted), so that no view,
// script or fetch names its saved copy again. It returns the copy, for
// [Registry.afterWithdraw].
func (g *Registry) withdrawLocked(rec *record) *convert.Copy {
	rec.never, rec.unsure = true, false
	c := rec.copy.take()
	rec.copy = nil
	return c
}

// afterWithdraw logs a copy a mark made elsewhere withdrew from record id,
// and removes it. It runs without the lock; c nil does nothing.
func (g *Registry) afterWithdraw(ctx context.Context, id string, c *convert.Copy) {
	if c == nil {
		return
	}
	g.log.Info("refs: a never mark made elsewhere reached a reference with a saved copy", "ref", id)
	g.removeUnnamed(ctx, id, c.Path, neverWithdrew)
}

// insertLocked adds rec, a new record bound to server ("" for none).
func (g *Registry) insertLocked(rec *record, server string) *record {
	if server != "" {
		rec.servers = g.one(server)
	}
	g.order.pushFront(rec)
	g.byID[rec.id] = rec
	g.byURI[rec.key] = rec
	g.byURI[rec.uri] = rec
	return rec
}

// one returns a slice holding server alone. Records bound to one server
// share it: its capacity is one, so adding a second server to a record
// copies it, and nothing changes a record's servers in place. A few dozen
// names are shared; past that each record gets its own.
func (g *Registry) one(server string) []string {
	if s, ok := g.ones[server]; ok {
		return s
	}
	s := []string{server}
	if len(g.ones) < 64 {
		g.ones[server] = s
	}
	return s
}

// aliasLocked remembers another spelling of a record's uri for the fast
// path, within a small bound per record (eight with the first).
func (g *Registry) aliasLocked(rec *record, raw string) {
	if len(rec.raws) >= 7 || g.byURI[raw] == rec {
		return
	}
	rec.raws = append(rec.raws, raw)
	g.byURI[raw] = rec
}

// updateLocked applies whose word counts to an existing record. It returns
// a saved copy the new testimony no longer describes, if any.
func (g *Registry) updateLocked(rec *record, r *convert.Registration) (forgotten *convert.Copy) {
	if r.Server == "" {
		if len(rec.servers) == 0 {
			return g.replaceTestimonyLocked(rec, r.Testimony)
		}
		return nil
	}
	if len(rec.servers) == 0 {
		g.respellLocked(rec, r.Testimony.URI)
	}
	forgotten = g.replaceTestimonyLocked(rec, r.Testimony)
	if !slices.Contains(rec.servers, r.Server) {
		rec.servers = append(rec.servers, r.Server)
	}
	return forgotten
}

// respellLocked makes raw, the spelling of the first server to name rec,
// the record's uri, the one it is fetched from: serverless content that
// named the uri first, in a spelling of its own (a trailing dot, user
// information), must not choose where a server's reference is fetched.
// Every spelling stays findable, by its own index entry or through the
// key, and each index entry is still rec.uri, rec.key or one of rec.raws,
// so eviction removes them all. raw shares rec's key.
func (g *Registry) respellLocked(rec *record, raw string) {
	if raw == rec.uri {
		return
	}
	old := rec.uri
	rec.uri = raw
	if i := slices.Index(rec.raws, raw); i >= 0 {
		rec.raws[i] = old // both stay indexed
		return
	}
	// raw is the key, or the record already holds as many spellings as
	// the fast path indexes: the old spelling is found by its key instead.
	g.byURI[raw] = rec
	if old != rec.key {
		g.forgetLocked(old, rec)
	}
}

// replaceTestimonyLocked installs new testimony. A saved copy verified
// against a different digest no longer describes the reference and is
// forgotten; the copy is returned so the caller can log it, and remove it
// with the host's Remover, after unlocking (see afterForget).
func (g *Registry) replaceTestimonyLocked(rec *record, t convert.Testimony) (forgotten *convert.Copy) {
	if rec.copy != nil && t.Has(convert.FieldDigest) && t.Digest != rec.copy.against {
		forgotten, rec.copy = rec.copy.take(), nil
	}
	rec.testimony = t
	return forgotten
}

// markEvent is a mark to finish after the lock is released: store it,
// log it, and remove the copy it withdrew.
type markEvent struct {
	key, by string
	first   bool   // no server had marked the record in this process
	store   bool   // the mark store has yet to record it
	rec     Record // after the mark
	dropped *convert.Copy
}

// markLocked marks rec never on server's word, in the record and in the
// registry's memory, and returns what remains to do after unlocking, or
// nil when nothing does (a repeated never costs no allocation).
func (g *Registry) markLocked(rec *record, server string) *markEvent {
	rec.unsure = false // a server's word
	g.local.mark(rec.key, server)
	first := rec.neverBy == ""
	_, unstored := g.unstored[rec.key]
	if !first && !unstored {
		return nil
	}
	ev := &markEvent{key: rec.key, by: server, first: first, store: g.store != nil && (first || unstored)}
	if first {
		rec.neverBy = server
		if !rec.never {
			rec.never = true
			// No view, script or fetch names the copy again.
			ev.dropped, rec.copy = rec.copy.take(), nil
		}
	}
	ev.rec = rec.snapshot()
	return ev
}

// maxUnstored bounds the marks kept for another try at the store.
const maxUnstored = 10_000

// afterMark stores a mark, logs a first mark, and removes a withdrawn
// copy. It runs without the lock.
func (g *Registry) afterMark(ctx context.Context, ev *markEvent) {
	if ev == nil {
		return
	}
	if ev.store {
		err := g.store.Mark(ctx, storeKey(ev.key), ev.by)
		g.lock()
		if err != nil && len(g.unstored) < maxUnstored {
			// The mark holds in memory; the next never for this uri tries
			// the store again.
			g.unstored[strings.Clone(ev.key)] = struct{}{} // it may outlive the record
		} else if err == nil {
			delete(g.unstored, ev.key)
		}
		g.mu.Unlock()
		if err != nil {
			g.log.Error("refs: the mark store could not record a never mark; it holds in memory for this process",
				"ref", ev.rec.ID, "server", ev.by, "err", redactKey(err, ev.key))
		}
	}
	if !ev.first {
		return
	}
	g.log.Info("refs: a server marked a reference never",
		"ref", ev.rec.ID, "server", ev.by, "bound", strings.Join(ev.rec.Servers, ","))
	if ev.dropped == nil {
		return
	}
	g.removeUnnamed(ctx, ev.rec.ID, ev.dropped.Path, neverWithdrew)
}

// neverWithdrew is removeUnnamed's what for a copy a never mark withdrew.
const neverWithdrew = "a never mark withdrew"

// removeUnnamed removes the copy at path, which record id named until
// what happened (a never mark withdrew it, a new digest made it stale, a
// newer copy at another path replaced it), with the host's Remover;
// without one it logs where the copy stays.
//
// It runs in turn with the fetches that store and save a copy of the
// record: while one is doing so, the removal is put off until it has
// finished, so the check below sees the copy it saved, perhaps at this
// very path, and the Remover does not delete it
// (TestRemovalKeepsCopyCommittedMeanwhile). Neither the caller nor the
// fetch waits for a removal put off (TestHandedRemovalKeepsFetchDeadline,
// TestRemovalRunsNoOtherCallersWork): it runs on a goroutine of its own,
// with ctx's values but, since the caller may be gone by then, a deadline
// of removeMax instead of ctx's.
func (g *Registry) removeUnnamed(ctx context.Context, id, path, what string) {
	copylock.Do(g, id, func(later bool) {
		if later {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), removeMax)
			defer cancel()
		}
		g.removeNow(ctx, id, path, what)
	})
}

// removeMax bounds a removal that was put off: its Remover's context ends
// then. Until it returns, fetches of the record wait to store a copy.
const removeMax = 30 * time.Second

// removeNow is [Registry.removeUnnamed]'s work, with the record's copy
// lock held.
func (g *Registry) removeNow(ctx context.Context, id, path, what string) {
	if g.names(id, path) {
		// A store that names copies by their record put the record's
		// new copy at the old one's path: the file is the new copy.
		g.log.Info("refs: the path of a copy "+what+" now holds the reference's new copy, which stays",
			"ref", id, "path", path)
		return
	}
	if g.remover == nil {
		g.log.Warn("refs: a copy "+what+" is no longer named, but stays in storage",
			"ref", id, "path", path)
		return
	}
	if err := g.remove(ctx, path); err != nil {
		g.log.Error("refs: could not remove a copy "+what,
			"ref", id, "path", path, "err", err.Error())
		return
	}
	g.log.Info("refs: removed a copy "+what, "ref", id, "path", path)
}

// remove calls the host's Remover, which may run on a fetch's goroutine
// (see removeUnnamed): a panic in it is returned as an error, to be
// logged, rather than ending that goroutine or holding the copy lock.
func (g *Registry) remove(ctx context.Context, path string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the Remover panicked: %v", p)
		}
	}()
	return g.remover.Remove(ctx, path)
}

// names reports whether the record id names a copy at path.
func (g *Registry) names(id, path string) bool {
	g.lock()
	defer g.mu.Unlock()
	r := g.byID[id]
	return r != nil && r.copy != nil && r.copy.Path == path
}

// storeMarked asks the mark store about key, failing closed: an error
// counts as a mark (marked), though the store reported none (reported is
// false). Without a store it reports false.
func (g *Registry) storeMarked(ctx context.Context, key string) (marked, reported bool) {
	if g.store == nil {
		return false, false
	}
	marked, err := g.store.Marked(ctx, storeKey(key))
	if err != nil {
		g.log.Error("refs: the mark store could not be read; the uri is treated as marked never", "err", redactKey(err, key))
		return true, false
	}
	if marked {
		// Learned: MarkedHere, which views ask without a context, knows
		// the mark from now on. A read that failed is not learned, so
		// the next question asks the store again.
		g.local.mark(key, learned)
	}
	return marked, marked
}

// learned is the name under which the registry's memory keeps the marks
// it learned from the mark store. No server is named "": a server's never
// always names its server.
const learned = ""

// storeKey is what a mark store sees of a canonical uri: "sha256:" and the
// digest's base64url form. A uri may carry a credential in its query; a
// store, its files and its logs never see one.
func storeKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// redactKey is a store error's text for the log, with the uri cut should
// the store have quoted it.
func redactKey(err error, key string) string {
	s := err.Error()
	if key != "" {
		s = strings.ReplaceAll(s, key, "<uri>")
	}
	return s
}

// MarkNever marks the record for uri never on server's word, creating a
// marked record bound to server when the registry holds none, and returns
// its entry. It satisfies [convert.Registrar]. An empty server marks
// nothing (serverless content cannot) and reports false.
func (g *Registry) MarkNever(ctx context.Context, uri, server string) (convert.Entry, bool) {
	if server == "" {
		return convert.Entry{}, false
	}
	key := uriform.Canonical(uri)
	var evicted []Record
	g.lock()
	rec := g.byURI[key]
	if rec == nil {
		// As in register: the record and its id are made without the lock.
		g.mu.Unlock()
		t := convert.Testimony{URI: uri, Present: convert.FieldURI}
		fresh := &record{id: g.ids.mint(), uri: uri, key: key, testimony: t}
		g.lock()
		if rec = g.byURI[key]; rec == nil {
			rec = g.insertLocked(fresh, server)
			evicted = g.trimLocked()
		}
	}
	if len(rec.servers) == 0 {
		g.respellLocked(rec, uri)
	}
	if !slices.Contains(rec.servers, server) {
		rec.servers = append(rec.servers, server)
	}
	g.order.touch(rec)
	ev := g.markLocked(rec, server)
	var e convert.Entry
	rec.fill(&e)
	g.mu.Unlock()
	ownEntry(&e)
	g.afterMark(ctx, ev)
	g.notify(evicted, EvictCapacity)
	return e, true
}

// StoreNeverMarks has the mark store record, in one step, that server's
// content marks each of uris never, when the store is a [BatchMarkStore]
// and there are two uris or more; otherwise it does nothing. It does not
// mark the registry's records: the caller marks each uri next, with
// [Registry.MarkNever] or a [Registry.Register] whose Never is set, and
// those calls then find their marks stored instead of waiting for the
// store one uri at a time. [convert.Converter] calls it with the uris of a
// content's never references before it registers them. A uri whose held
// record a server marked before, with that mark stored, is left out: a
// mark of it stores nothing more. An empty server stores nothing. A store
// error is logged; each mark that follows tries the store again.
func (g *Registry) StoreNeverMarks(ctx context.Context, uris []string, server string) {
	bs, ok := g.store.(BatchMarkStore)
	if !ok || server == "" || len(uris) < 2 {
		return
	}
	canon := make([]string, len(uris))
	for i, u := range uris {
		canon[i] = uriform.Canonical(u)
	}
	keys := make([]string, 0, len(uris))
	seen := make(map[string]struct{}, len(uris))
	g.lock()
	for _, k := range canon {
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		// As markLocked: a record some server marked before, whose mark
		// the store holds, has nothing more stored for this one.
		if rec := g.byURI[k]; rec != nil && rec.neverBy != "" {
			if _, unstored := g.unstored[k]; !unstored {
				continue
			}
		}
		keys = append(keys, k)
	}
	g.mu.Unlock()
	if len(keys) < 2 {
		return // the marks that follow store one or none, as fast
	}
	for i, k := range keys {
		keys[i] = storeKey(k)
	}
	if err := bs.MarkAll(ctx, keys, server); err != nil {
		g.log.Error("refs: the mark store could not record a content's never marks together; each is tried again alone",
			"server", server, "marks", len(keys), "err", err.Error())
	}
}

// Marked reports whether a server's never marks uri, whether or not the
// registry still holds a record for it: in the registry's memory, or in
// the mark store (a store error counts as a mark). The store is asked when
// memory knows no mark, and also when the record is withheld only because
// the store could not be read when it was made. A mark the store reports
// is remembered, so MarkedHere knows it from then on, and a record the
// registry holds for uri takes it at once: its saved copy is no longer
// named (the Remover, if any, deletes it), or its never is no longer
// unconfirmed. A store error is neither remembered nor applied to the
// record.
func (g *Registry) Marked(ctx context.Context, uri string) bool {
	marked, key, unsure := g.markedHere(uri)
	if marked && !unsure {
		return true
	}
	// No mark is known, or the record is withheld only because the store
	// could not be read when it was made: the store is asked (again).
	stored, reported := g.storeMarked(ctx, key)
	if reported {
		// A record held for the uri takes the mark now, not at its next
		// registration: its copy is withdrawn, or its never confirmed.
		g.lock()
		var id string
		var c *convert.Copy
		if rec := g.byURI[key]; rec != nil {
			if !rec.never {
				id, c = rec.id, g.withdrawLocked(rec)
			}
			rec.unsure = false
		}
		g.mu.Unlock()
		g.afterWithdraw(ctx, id, c)
	}
	return marked || stored
}

// MarkedHere is [Registry.Marked] without asking the mark store: the marks
// this registry made, those it learned from the store, and the records it
// withholds because the store could not be read when they were made. It
// is cheap enough to ask for every chunk of a download.
func (g *Registry) MarkedHere(uri string) bool {
	marked, _, _ := g.markedHere(uri)
	return marked
}

// MarkKnown is [Registry.MarkedHere] less the records withheld only
// because the mark store could not be read when they were made: it
// reports whether a server is known to have marked uri, by this registry
// or through the store. A host words its answers by it; what is withheld
// is MarkedHere's to say.
func (g *Registry) MarkKnown(uri string) bool {
	marked, _, unsure := g.markedHere(uri)
	return marked && !unsure
}

// markedHere reports whether uri is marked here, its key, and whether
// that rests only on a record withheld for a store that could not be read.
func (g *Registry) markedHere(uri string) (marked bool, key string, unsure bool) {
	g.lock()
	rec := g.byURI[uri]
	if rec == nil {
		g.mu.Unlock()
		key = uriform.Canonical(uri)
		g.lock()
		rec = g.byURI[key]
	} else {
		key = rec.key
	}
	never, recUnsure := rec != nil && rec.never, rec != nil && rec.unsure
	g.mu.Unlock()
	if g.local.marked(key) {
		return true, key, false
	}
	return never, key, never && recUnsure
}

// trimLocked evicts least recently used records past the bound, and
// returns snapshots of them when someone listens.
func (g *Registry) trimLocked() []Record {
	var out []Record
	for g.order.n > g.capacity {
		rec := g.order.oldest()
		if g.onEvict != nil {
			out = append(out, rec.snapshot())
		}
		g.removeLocked(rec)
	}
	return out
}

func (g *Registry) removeLocked(rec *record) {
	g.order.remove(rec)
	delete(g.byID, rec.id)
	g.forgetLocked(rec.key, rec)
	g.forgetLocked(rec.uri, rec)
	for _, raw := range rec.raws {
		g.forgetLocked(raw, rec)
	}
}

// forgetLocked deletes the entry for s when it names rec.
func (g *Registry) forgetLocked(s string, rec *record) {
	if g.byURI[s] == rec {
		delete(g.byURI, s)
	}
}

func (g *Registry) notify(evicted []Record, why EvictReason) {
	if g.onEvict == nil {
		return
	}
	for _, r := range evicted {
		g.onEvict(r, why)
	}
}

// Lookup returns a snapshot of the record for id and makes it the most
// recently used. ok is false when the registry does not hold id.
func (g *Registry) Lookup(id string) (rec Record, ok bool) {
	return g.snapshotOf(id, "")
}

// snapshotOf returns a snapshot of the record [Registry.lockFind] finds.
func (g *Registry) snapshotOf(id, uri string) (rec Record, ok bool) {
	if r := g.lockFind(id, uri); r != nil {
		r.share(&rec)
		ok = true
	}
	g.mu.Unlock()
	own(&rec)
	return rec, ok
}

// entryOf returns the entry of the record [Registry.lockFind] finds.
func (g *Registry) entryOf(id, uri string) (e convert.Entry, ok bool) {
	if r := g.lockFind(id, uri); r != nil {
		r.fill(&e)
		ok = true
	}
	g.mu.Unlock()
	ownEntry(&e)
	return e, ok
}

// lockFind takes the registry's lock and returns the record for uri, in
// any spelling of it, or when uri is empty the record for id, which
// becomes the most recently used; nil when the registry holds none. The
// lock is held when it returns. A uri that is not itself a key the
// registry holds is keyed with the lock let go, as markedHere does: a
// key can cost as much as the uri is long, and other calls need not wait
// for it.
func (g *Registry) lockFind(id, uri string) *record {
	g.lock()
	if uri == "" {
		r := g.byID[id]
		if r != nil {
			g.order.touch(r)
		}
		return r
	}
	if rec := g.byURI[uri]; rec != nil {
		return rec
	}
	g.mu.Unlock()
	key := uriform.Canonical(uri)
	g.lock()
	return g.byURI[key]
}

// Resolve is Lookup with an explanation: for an id the registry does not
// hold it returns an [*UnknownError], which unwraps to
// [ErrUnknownReference].
func (g *Registry) Resolve(id string) (Record, error) {
	if rec, ok := g.Lookup(id); ok {
		return rec, nil
	}
	return Record{}, &UnknownError{ID: id}
}

// ByURI returns a snapshot of the record for uri, in any spelling of it,
// without reordering.
func (g *Registry) ByURI(uri string) (Record, bool) {
	if uri == "" {
		return Record{}, false
	}
	return g.snapshotOf("", uri)
}

// Entry returns the view entry for id and counts as showing it: the record
// becomes the most recently used. It satisfies [convert.Registrar].
func (g *Registry) Entry(id string) (convert.Entry, bool) {
	return g.entryOf(id, "")
}

// EntryForURI returns the view entry for uri, without reordering. It
// satisfies [convert.Registrar].
func (g *Registry) EntryForURI(uri string) (convert.Entry, bool) {
	if uri == "" {
		return convert.Entry{}, false
	}
	return g.entryOf("", uri)
}

// Save records a verified copy on the record id; against is the testimony
// the bytes were verified against. It fails with [ErrGone] when the
// registry no longer holds that record or the record now claims another
// digest, and with [ErrMarked] when the record is marked never; then
// nothing is recorded and the copy is the caller's.
func (g *Registry) Save(id string, c convert.Copy, against convert.Testimony) error {
	return g.save(id, c, against, true)
}

// SaveMarked is [Registry.Save] for a copy fetched of a never-marked
// record on purpose (by a fetcher asked to fetch such references, or for
// the host's own use): a mark does not refuse it. Views still show a
// marked record's stub without the copy, and a fetch for the model still
// refuses the record. When the registry knows a never mark for the uri
// that the record does not carry yet (one just read from the mark
// store), SaveMarked marks the record first, withdrawing an earlier copy
// as a mark does, so the copy it saves stays named.
func (g *Registry) SaveMarked(id string, c convert.Copy, against convert.Testimony) error {
	return g.save(id, c, against, false)
}

func (g *Registry) save(id string, c convert.Copy, against convert.Testimony, refuseMarked bool) error {
	var withdrawn, replaced *convert.Copy
	err := func() error {
		g.lock()
		defer g.mu.Unlock()
		r := g.byID[id]
		if r == nil {
			return ErrGone
		}
		marked := r.never || g.local.marked(r.key)
		if refuseMarked && marked {
			return ErrMarked
		}
		if t := r.testimony; t.Has(convert.FieldDigest) && against.Digest != t.Digest {
			// A new digest arrived while the bytes were in flight: they
			// were verified against testimony the record no longer holds.
			return ErrGone
		}
		if marked && !r.never {
			// A mark just learned from the mark store, which the
			// goroutine that learned it has yet to apply: it is applied
			// now, so that applying it later finds the record marked and
			// does not withdraw the copy saved here.
			withdrawn = g.withdrawLocked(r)
		}
		if r.copy != nil && r.copy.Path != c.Path {
			// Another copy, such as one a second fetcher of this registry
			// saved under another extension: nothing names it from now on
			// (TestSaveReplacingCopyRemovesTheOld).
			replaced = r.copy.take()
		}
		r.copy = &savedCopy{Copy: c}
		if against.Has(convert.FieldDigest) {
			r.copy.against = against.Digest
		}
		return nil
	}()
	g.afterWithdraw(context.Background(), id, withdrawn)
	if replaced != nil {
		g.removeUnnamed(context.Background(), id, replaced.Path, "a newer one replaced")
	}
	return err
}

// Remove drops the record for id, reporting whether it was held. The
// eviction callback sees it with [EvictRemoved]. The id is never reissued,
// and a never mark on its uri stays.
func (g *Registry) Remove(id string) (present bool) {
	g.lock()
	r := g.byID[id]
	var snap Record
	if r != nil {
		snap = r.snapshot()
		g.removeLocked(r)
	}
	g.mu.Unlock()
	if r != nil {
		g.notify([]Record{snap}, EvictRemoved)
	}
	return r != nil
}

// Len returns the number of records held.
func (g *Registry) Len() int {
	g.lock()
	defer g.mu.Unlock()
	return g.order.n
}

// Cap returns the record bound.
func (g *Registry) Cap() int { return g.capacity }
