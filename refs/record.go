package refs

import (
	"slices"

	"github.com/mcplrefs/refcore/convert"
)

// Record is a read-only snapshot of one host-private reference record. It
// is never shown to a model: it holds the raw uri, which may be a bearer
// credential in itself.
type Record struct {
	// ID is the opaque reference id a model may name.
	ID string
	// URI is the raw uri the record is fetched from: the spelling of the
	// first server whose content named it, or, while no server has, the
	// spelling first registered. Never show it, log it or put it in an
	// error.
	URI string
	// Testimony is the testimony the record keeps: the latest word of a
	// server bound to it, or of serverless content while no server is.
	Testimony convert.Testimony
	// Servers lists the servers whose content delivered this uri, first
	// binding first. Empty when only serverless content named it.
	Servers []string
	// Never is set once a server's never marked the record.
	Never bool
	// NeverBy names the server whose content marked the record in this
	// process, or "" when the mark came from elsewhere: from the mark
	// store, from this registry's memory of a record since evicted, or
	// from a store that could not be read (which counts as a mark).
	NeverBy string
	// NeverUnconfirmed is set while Never rests only on a mark store that
	// could not be read when the record was made. A mark from a server,
	// here or reported by the store later, clears it; the record stays
	// withheld either way.
	NeverUnconfirmed bool
	// Copy describes the verified copy the host holds, or is nil.
	Copy *convert.Copy
}

// Server returns the first server bound to the record, or "" when none.
func (r Record) Server() string {
	if len(r.Servers) == 0 {
		return ""
	}
	return r.Servers[0]
}

// record is the mutable state behind a Record snapshot. Guarded by
// Registry.mu. Its layout keeps it at 256 bytes, and a million records
// within BenchmarkHeapPerRecord's bound: a copy's digest lives with the
// copy, the first spelling is uri itself, and a record bound to one
// server shares the registry's slice naming it.
type record struct {
	prev, next *record // recency order (lru)

	id        string
	uri       string   // raw uri fetched from: the first server's spelling
	key       string   // canonical uri
	raws      []string // further spellings the fast path knows
	testimony convert.Testimony
	servers   []string // never changed in place: see Registry.one
	never     bool
	unsure    bool // never rests only on an unreadable mark store
	neverBy   string
	copy      *savedCopy
}

// savedCopy is a verified copy and the digest it was verified against (""
// for none).
type savedCopy struct {
	convert.Copy
	against string
}

// take returns the copy's description, or nil for no copy.
func (s *savedCopy) take() *convert.Copy {
	if s == nil {
		return nil
	}
	return &s.Copy
}

// snapshot returns a Record of the record's state with copies of its own.
func (r *record) snapshot() Record {
	var rec Record
	r.share(&rec)
	own(&rec)
	return rec
}

// share sets *out to the record's state without allocating: out.Servers
// and out.Copy still point at the record's own servers slice and saved
// copy. Neither is ever changed in place once the lock is released (a
// server is added by append to a full slice or to spare capacity past the
// shared length; a new copy is a new savedCopy), so the caller makes its
// copies with [own] after unlocking. An allocation under the registry's
// lock can make the holder run a garbage-collection assist while every
// other caller waits (BenchmarkHostFlow/fetchers=8).
func (r *record) share(out *Record) {
	*out = Record{
		ID:        r.id,
		URI:       r.uri,
		Testimony: r.testimony,
		Servers:   r.servers,
		Never:     r.never,
		NeverBy:   r.neverBy,

		NeverUnconfirmed: r.unsure,
	}
	if r.copy != nil {
		out.Copy = &r.copy.Copy
	}
}

// own gives rec copies of its own of what [record.share] left shared.
func own(rec *Record) {
	rec.Servers = slices.Clone(rec.Servers)
	if rec.Copy != nil {
		c := *rec.Copy
		rec.Copy = &c
	}
}

// fill sets *e to the record's entry, field by field, so that a caller
// returning e pays one copy of the testimony, not two. Like
// [record.share], it leaves e.Copy pointing at the record's saved copy,
// for [ownEntry] after unlocking.
func (r *record) fill(e *convert.Entry) {
	e.ID, e.Testimony, e.Never = r.id, r.testimony, r.never
	e.NeverBy, e.NeverUnconfirmed = r.neverBy, r.unsure
	if r.copy != nil {
		e.Copy = &r.copy.Copy
	}
}

// ownEntry gives e a copy of its own of the saved copy [record.fill] left
// shared.
func ownEntry(e *convert.Entry) {
	if e.Copy != nil {
		c := *e.Copy
		e.Copy = &c
	}
}
