package refs

import (
	"container/list"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
)

// A Registry is the record store convert's views register in.
var _ convert.Registrar = (*Registry)(nil)

// DefaultCapacity is the record bound a zero [Config] gets.
const DefaultCapacity = 2000

// Errors returned by a Registry can be tested against these values using
// errors.Is.
var (
	// ErrUnknownReference is returned for an id the registry does not hold:
	// one it evicted, or one it never issued (RFC-005 §5, vector 20).
	ErrUnknownReference = errors.New("unknown reference")
	// ErrStale is returned by [Registry.Save] when the record it names was
	// evicted since the fetch began, or now claims a digest other than the
	// one the bytes were verified against (F20).
	ErrStale = errors.New("refs: record no longer held")
	// ErrMarked is returned by [Registry.Save] when the record carries a
	// never mark: no copy may be recorded for it (N1, F18).
	ErrMarked = errors.New("refs: record is marked never")
)

// UnknownError is the error [Registry.Resolve] returns for an id it does
// not hold. It unwraps to [ErrUnknownReference].
type UnknownError struct {
	// ID is the id that was looked up, as given.
	ID string
}

// Error reads "unknown reference: <id>". The id is quoted so that text a
// caller passed cannot reshape the message.
func (e *UnknownError) Error() string {
	id := e.ID
	if len(id) > 64 {
		id = id[:64]
	}
	return "unknown reference: " + strconvQuote(id)
}

// Unwrap returns [ErrUnknownReference].
func (e *UnknownError) Unwrap() error { return ErrUnknownReference }

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

// Remover removes a stored copy of a payload. A host that supplies one has
// the copy a never mark withdrew deleted, not only forgotten (N3).
type Remover interface {
	Remove(path string) error
}

// Config sets up a Registry. Its zero value is the documented default.
type Config struct {
	// Capacity bounds the number of records. Zero means DefaultCapacity;
	// a negative value panics in New, since no registry may be unbounded.
	Capacity int
	// OnEvict, if set, is called with a snapshot of each record that
	// leaves the registry and the reason. It runs after the registry's lock
	// is released, on the goroutine whose call caused the eviction.
	OnEvict func(Record, EvictReason)
	// Marks keeps never marks by uri so they outlive eviction (N7). Nil
	// means an in-memory store bound to the registry's life.
	Marks MarkStore
	// Remover, if set, deletes a saved copy when a mark withdraws it (N3).
	Remover Remover
	// Logger receives operator lines (marks, withdrawn copies). Nil
	// discards them.
	Logger *slog.Logger
	// Rand is the source of id randomness. Nil means crypto/rand.
	Rand io.Reader
}

// Registry is a bounded LRU of host-private reference records. It is safe
// for concurrent use by multiple goroutines.
type Registry struct {
	mu       sync.Mutex
	capacity int
	lru      *list.List // of *record, front = most recent
	byID     map[string]*record
	byKey    map[string]*record // canonical uri -> record
	byRaw    map[string]*record // exact spellings seen -> record (fast path)
	ids      *idMint
	onEvict  func(Record, EvictReason)
	marks    MarkStore
	remover  Remover
	log      *slog.Logger
}

// New returns an empty Registry configured by cfg.
func New(cfg Config) *Registry {
	if cfg.Capacity < 0 {
		panic("refs: negative Capacity")
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = DefaultCapacity
	}
	if cfg.Marks == nil {
		cfg.Marks = NewMemoryMarks(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	return &Registry{
		capacity: cfg.Capacity,
		lru:      list.New(),
		byID:     make(map[string]*record),
		byKey:    make(map[string]*record),
		byRaw:    make(map[string]*record),
		ids:      newIDMint(cfg.Rand),
		onEvict:  cfg.OnEvict,
		marks:    cfg.Marks,
		remover:  cfg.Remover,
		log:      cfg.Logger,
	}
}

// record is the mutable state behind a Record snapshot. Guarded by
// Registry.mu.
type record struct {
	id        string
	uri       string // raw uri as first registered
	key       string // canonical uri
	raws      []string
	testimony convert.Testimony
	servers   []string
	never     bool
	neverBy   string
	saved     *Saved
	elem      *list.Element
}

// Register records one reference (see [convert.Registrar]) and returns
// what a view needs of it. Registering a uri the registry holds returns the
// same record and makes it the most recently used (R2, R3). Whose testimony
// the record keeps follows R6: a server's word replaces a serverless one
// and a server's later word (a re-signed uri, a fresh expiry) replaces an
// earlier one (E3); serverless content replaces testimony only while no
// server has bound the record. When r.Never is set and r.Server is not
// empty, the record is marked never (N1).
func (g *Registry) Register(r convert.Registration) convert.Entry {
	var evicted []Record
	var markedNow *markEvent
	var forgotten *Saved
	g.mu.Lock()
	rec := g.byRaw[r.Testimony.URI]
	if rec == nil {
		key := uriform.Canonical(r.Testimony.URI)
		rec = g.byKey[key]
		if rec == nil {
			rec = g.insertLocked(r, key)
			// A mark that outlived an evicted record applies to its
			// successor (N7).
			rec.never = g.marks.Marked(key)
			evicted = g.trimLocked()
		} else {
			g.aliasLocked(rec, r.Testimony.URI)
			forgotten = g.updateLocked(rec, r)
		}
	} else {
		forgotten = g.updateLocked(rec, r)
	}
	g.lru.MoveToFront(rec.elem)
	if r.Never && r.Server != "" && !rec.never {
		markedNow = g.markLocked(rec, r.Server)
	}
	e := rec.entry()
	g.mu.Unlock()
	if forgotten != nil {
		g.log.Info("refs: a new digest for a reference no longer matches its saved copy; the copy is forgotten",
			"ref", e.ID, "path", forgotten.Path)
	}
	g.afterMark(markedNow)
	g.notify(evicted, EvictCapacity)
	return e
}

func (g *Registry) insertLocked(r convert.Registration, key string) *record {
	rec := &record{
		id:        g.newIDLocked(),
		uri:       r.Testimony.URI,
		key:       key,
		raws:      []string{r.Testimony.URI},
		testimony: r.Testimony,
	}
	if r.Server != "" {
		rec.servers = []string{r.Server}
	}
	rec.elem = g.lru.PushFront(rec)
	g.byID[rec.id] = rec
	g.byKey[key] = rec
	g.byRaw[r.Testimony.URI] = rec
	return rec
}

// aliasLocked remembers another spelling of a record's uri for the fast
// path, within a small bound per record.
func (g *Registry) aliasLocked(rec *record, raw string) {
	if len(rec.raws) >= 8 {
		return
	}
	rec.raws = append(rec.raws, raw)
	g.byRaw[raw] = rec
}

// updateLocked applies whose word counts (R6, E3) to an existing record.
// It returns a saved copy the new testimony no longer describes, if any.
func (g *Registry) updateLocked(rec *record, r convert.Registration) (forgotten *Saved) {
	if r.Server == "" {
		if len(rec.servers) == 0 {
			return g.replaceTestimonyLocked(rec, r.Testimony)
		}
		return nil
	}
	forgotten = g.replaceTestimonyLocked(rec, r.Testimony)
	if !slices.Contains(rec.servers, r.Server) {
		rec.servers = append(rec.servers, r.Server)
	}
	return forgotten
}

// replaceTestimonyLocked installs new testimony. A saved copy verified
// against a different digest no longer describes the reference and is
// forgotten (the file itself is the host's); the copy is returned so the
// caller can log it after unlocking.
func (g *Registry) replaceTestimonyLocked(rec *record, t convert.Testimony) (forgotten *Saved) {
	if rec.saved != nil && t.Has(convert.FieldDigest) && t.Digest != rec.saved.Against.Digest {
		forgotten = rec.saved
		rec.saved = nil
	}
	rec.testimony = t
	return forgotten
}

type markEvent struct {
	rec     Record
	by      string
	dropped *Saved
}

// markLocked marks rec never on a server's word. It returns the event to
// report after unlocking, or nil when the record was marked already.
func (g *Registry) markLocked(rec *record, server string) *markEvent {
	g.marks.Mark(rec.key, server)
	if rec.never {
		return nil
	}
	rec.never, rec.neverBy = true, server
	ev := &markEvent{by: server, dropped: rec.saved}
	rec.saved = nil // N3: no view, script or fetch names the copy again
	ev.rec = rec.snapshot()
	return ev
}

// afterMark logs a first mark (N5) and removes a withdrawn copy (N3).
func (g *Registry) afterMark(ev *markEvent) {
	if ev == nil {
		return
	}
	g.log.Info("refs: a server marked a reference never",
		"ref", ev.rec.ID, "server", ev.by, "bound", strings.Join(ev.rec.Servers, ","))
	if ev.dropped == nil {
		return
	}
	if g.remover == nil {
		g.log.Warn("refs: a copy saved before the never mark is no longer named, but stays in storage",
			"ref", ev.rec.ID, "path", ev.dropped.Path)
		return
	}
	if err := g.remover.Remove(ev.dropped.Path); err != nil {
		g.log.Error("refs: could not remove a copy a never mark withdrew",
			"ref", ev.rec.ID, "path", ev.dropped.Path, "err", err.Error())
		return
	}
	g.log.Info("refs: removed a copy a never mark withdrew", "ref", ev.rec.ID, "path", ev.dropped.Path)
}

// MarkNever marks the record for uri never on server's word, creating a
// marked record bound to server when the registry holds none (N1), and
// returns its entry. It satisfies [convert.Registrar]. An empty server
// marks nothing (serverless content cannot, N4) and reports false.
func (g *Registry) MarkNever(uri, server string) (convert.Entry, bool) {
	if server == "" {
		return convert.Entry{}, false
	}
	t := convert.Testimony{URI: uri, Present: convert.FieldURI}
	g.mu.Lock()
	rec := g.lookupURILocked(uri)
	var evicted []Record
	if rec == nil {
		rec = g.insertLocked(convert.Registration{Testimony: t, Server: server}, uriform.Canonical(uri))
		evicted = g.trimLocked()
	} else if !slices.Contains(rec.servers, server) {
		rec.servers = append(rec.servers, server)
	}
	g.lru.MoveToFront(rec.elem)
	ev := g.markLocked(rec, server)
	e := rec.entry()
	g.mu.Unlock()
	g.afterMark(ev)
	g.notify(evicted, EvictCapacity)
	return e, true
}

// Marked reports whether a server's never marks uri, whether or not the
// registry still holds a record for it (F18 reads the current mark).
func (g *Registry) Marked(uri string) bool {
	// The fetcher asks once per chunk: a spelling the registry holds is
	// answered from its record's key, without canonicalizing again.
	g.mu.Lock()
	if rec := g.byRaw[uri]; rec != nil {
		marked := rec.never || g.marks.Marked(rec.key)
		g.mu.Unlock()
		return marked
	}
	g.mu.Unlock()
	key := uriform.Canonical(uri)
	g.mu.Lock()
	rec := g.byKey[key]
	marked := rec != nil && rec.never
	g.mu.Unlock()
	return marked || g.marks.Marked(key)
}

func (g *Registry) lookupURILocked(uri string) *record {
	if rec := g.byRaw[uri]; rec != nil {
		return rec
	}
	return g.byKey[uriform.Canonical(uri)]
}

// trimLocked evicts least recently used records past the bound.
func (g *Registry) trimLocked() []Record {
	var out []Record
	for g.lru.Len() > g.capacity {
		back := g.lru.Back()
		rec := back.Value.(*record)
		out = append(out, rec.snapshot())
		g.removeLocked(rec)
	}
	return out
}

func (g *Registry) removeLocked(rec *record) {
	g.lru.Remove(rec.elem)
	delete(g.byID, rec.id)
	if g.byKey[rec.key] == rec {
		delete(g.byKey, rec.key)
	}
	for _, raw := range rec.raws {
		if g.byRaw[raw] == rec {
			delete(g.byRaw, raw)
		}
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

// newIDLocked returns the next id. Ids are a keyed permutation of a
// counter (see idMint), so none repeats for the registry's life and none
// needs remembering.
func (g *Registry) newIDLocked() string { return g.ids.mint() }

// Lookup returns a snapshot of the record for id and makes it the most
// recently used. ok is false when the registry does not hold id.
func (g *Registry) Lookup(id string) (rec Record, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[id]
	if r == nil {
		return Record{}, false
	}
	g.lru.MoveToFront(r.elem)
	return r.snapshot(), true
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

// ByURI returns a snapshot of the record for uri, without reordering.
func (g *Registry) ByURI(uri string) (Record, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.lookupURILocked(uri)
	if r == nil {
		return Record{}, false
	}
	return r.snapshot(), true
}

// Entry returns the view entry for id and counts as showing it: the record
// becomes the most recently used (R3). It satisfies [convert.Registrar].
func (g *Registry) Entry(id string) (convert.Entry, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[id]
	if r == nil {
		return convert.Entry{}, false
	}
	g.lru.MoveToFront(r.elem)
	return r.entry(), true
}

// EntryForURI returns the view entry for uri, without reordering. It
// satisfies [convert.Registrar].
func (g *Registry) EntryForURI(uri string) (convert.Entry, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.lookupURILocked(uri)
	if r == nil {
		return convert.Entry{}, false
	}
	return r.entry(), true
}

// Save records a verified copy on the record id (F19). It fails with
// [ErrStale] when the registry no longer holds that record, and with
// [ErrMarked] when the record is marked never; in both cases nothing is
// recorded and the caller owns the copy (F20).
func (g *Registry) Save(id string, s Saved) error { return g.save(id, s, true) }

// SaveMarked records a verified copy on the record id like [Registry.Save],
// except that a never mark does not refuse it. It is for a fetcher that
// fetches never-marked references on purpose (one built without a withhold
// hook, such as the conformance profile): the copy then exists, and the
// record says where and what it is. Views still show a marked record's
// stub without the copy, and a withholding fetch still refuses it. A mark
// that lands after the save clears the copy as it would any other.
func (g *Registry) SaveMarked(id string, s Saved) error { return g.save(id, s, false) }

func (g *Registry) save(id string, s Saved, refuseMarked bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byID[id]
	if r == nil {
		return ErrStale
	}
	if refuseMarked && (r.never || g.marks.Marked(r.key)) {
		return ErrMarked
	}
	if t := r.testimony; t.Has(convert.FieldDigest) && s.Against.Digest != t.Digest {
		// A new digest arrived while the bytes were in flight: they were
		// verified against testimony the record no longer holds.
		return ErrStale
	}
	cp := s
	r.saved = &cp
	return nil
}

// Remove drops the record for id, reporting whether it was held. The
// eviction callback sees it with [EvictRemoved]. The id is never reissued.
func (g *Registry) Remove(id string) (present bool) {
	g.mu.Lock()
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
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lru.Len()
}

// Cap returns the record bound.
func (g *Registry) Cap() int { return g.capacity }
