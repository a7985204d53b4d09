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
	// URI is the raw uri as first registered. Never show it, log it or put
	// it in an error.
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
	uri       string   // raw uri as first registered
	key       string   // canonical uri
	raws      []string // further spellings the fast path knows
	testimony convert.Testimony
	servers   []string // never changed in place: see Registry.one
	never     bool
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

func (r *record) snapshot() Record {
	rec := Record{
		ID:        r.id,
		URI:       r.uri,
		Testimony: r.testimony,
		Servers:   slices.Clone(r.servers),
		Never:     r.never,
		NeverBy:   r.neverBy,
	}
	if r.copy != nil {
		c := r.copy.Copy
		rec.Copy = &c
	}
	return rec
}

func (r *record) entry() convert.Entry {
	e := convert.Entry{ID: r.id, Testimony: r.testimony, Never: r.never}
	if r.copy != nil {
		c := r.copy.Copy
		e.Copy = &c
	}
	return e
}
