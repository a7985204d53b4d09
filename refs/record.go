package refs

import (
	"slices"
	"strconv"

	"github.com/mcplrefs/refcore/convert"
)

// Record is a read-only snapshot of one host-private reference record
// (behaviors R5). It is never shown to a model: it holds the raw uri.
type Record struct {
	// ID is the opaque reference id a model may name.
	ID string
	// URI is the raw uri as first registered. It may be a bearer
	// credential: never show it, log it or put it in an error.
	URI string
	// Testimony is the testimony chosen by whose word counts (R6).
	Testimony convert.Testimony
	// Servers lists the servers whose content delivered this uri, first
	// binding first. Empty when only serverless content named it.
	Servers []string
	// Never is set once a server's never marked the record (N1).
	Never bool
	// NeverBy names the server whose content made the mark.
	NeverBy string
	// Saved describes the verified copy, or is nil when none is held.
	Saved *Saved
}

// Saved holds the facts a successful fetch verified (F19). They come from
// the bytes, never from testimony.
type Saved struct {
	// Path is where the host's store put the copy (host-generated).
	Path string
	// Bytes is the decoded byte count.
	Bytes int64
	// MimeType is the observed media type (F9).
	MimeType string
	// DigestVerified is set when a claimed digest matched the bytes.
	DigestVerified bool
	// Against is the testimony the bytes were verified against.
	Against convert.Testimony
}

// Server returns the first server bound to the record, or "" when none.
func (r Record) Server() string {
	if len(r.Servers) == 0 {
		return ""
	}
	return r.Servers[0]
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
	if r.saved != nil {
		s := *r.saved
		rec.Saved = &s
	}
	return rec
}

func (r *record) entry() convert.Entry {
	e := convert.Entry{ID: r.id, Testimony: r.testimony, Never: r.never}
	if r.saved != nil {
		e.Saved = true
		e.SavedPath = r.saved.Path
		e.VerifiedBytes = r.saved.Bytes
		e.VerifiedType = r.saved.MimeType
		e.DigestVerified = r.saved.DigestVerified
	}
	return e
}

func strconvQuote(s string) string { return strconv.Quote(s) }
