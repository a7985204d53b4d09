package convert

import (
	"context"
	"strings"

	"github.com/mcplrefs/refcore/label"
)

// Registration is what ingesting one reference asks of the record store.
type Registration struct {
	// Testimony is the block's testimony; its URI is required.
	Testimony Testimony
	// Server names the MCPL server whose content carried the block, or ""
	// for serverless content (a host module's result, a script's output, a
	// relay of someone else's JSON).
	Server string
	// Never is set when the content's claims call the uri never. It marks
	// the record only when Server is not "": a never in serverless content
	// withholds within that content and marks nothing.
	Never bool
}

// Copy is what a successful fetch verified about a stored payload. Every
// field comes from the bytes the host received, never from what the server
// claimed. The record, its view entry and the fetch result all carry this
// one type.
type Copy struct {
	// Path is where the host's store put the copy. The store chose it; no
	// server-sent text is part of it.
	Path string
	// Bytes is the decoded byte count.
	Bytes int64
	// MimeType is the media type observed from the bytes and the response,
	// such as "audio/wav".
	MimeType string
	// DigestVerified is set when the reference claimed a digest and the
	// bytes matched it.
	DigestVerified bool
}

// Summary words the copy as every model-facing text does, in a stub and
// in a fetch tool's answer: "saved at <path> (<size> verified, <type>,
// digest matched)". The path is cleaned and bounded.
func (c Copy) Summary() string {
	var b strings.Builder
	b.WriteString("saved at ")
	b.WriteString(label.Display(c.Path, 2*label.NameMax))
	b.WriteString(" (")
	b.WriteString(formatSize(c.Bytes))
	b.WriteString(" verified")
	if mt := label.MediaType(c.MimeType); mt != "" {
		b.WriteString(", ")
		b.WriteString(mt)
	}
	if c.DigestVerified {
		b.WriteString(", digest matched")
	}
	b.WriteString(")")
	return b.String()
}

// Entry is the part of a host-private record that a view may read. It is
// a snapshot: later changes to the record do not reach it.
type Entry struct {
	// ID is the host-generated opaque reference id, such as "ref_k2…".
	ID string
	// Testimony is the record's testimony: the latest word of a server
	// bound to the record, or of serverless content while no server is.
	// It is what counts for fetching. A view shows each block with its
	// own testimony instead, so the entries a [Policy] hook is asked about
	// carry the block's.
	Testimony Testimony
	// Never is set once a server's never marked the record.
	Never bool
	// NeverBy names the server whose content marked the record never in
	// this registry, or is "" when the mark came from elsewhere (a mark
	// store, a record since evicted) or there is none. Views use it only
	// to word a stub: "its server" when it is the content's own server,
	// "a server" otherwise. It is never shown.
	NeverBy string
	// NeverUnconfirmed is set while Never rests only on a mark store that
	// could not be read when the record was made: no server is known to
	// have marked it. The record stays withheld all the same.
	NeverUnconfirmed bool
	// Copy describes the verified copy the host holds, or is nil. A view
	// never shows the copy of a record marked never.
	Copy *Copy
}

// Registrar is the record store a [Converter] registers references in.
// *refs.Registry satisfies it. Implementations must be safe for concurrent
// use. A Registrar that also implements [MarkReader] is asked about a uri's
// never marks beyond the records it holds; one that does not is judged by
// its records alone.
type Registrar interface {
	// Register records one reference and returns its entry. Registering a
	// uri the store holds returns the same record, most recently used.
	Register(ctx context.Context, r Registration) Entry
	// Entry returns the current entry for id, if the store still holds it,
	// and counts as showing it.
	Entry(id string) (Entry, bool)
	// EntryForURI returns the current entry for a uri, if any.
	EntryForURI(uri string) (Entry, bool)
	// MarkNever marks the record for uri never on server's word, creating
	// a marked record bound to server when none exists. It is used for a
	// never that arrives on a block that shows no stub (an embedded
	// resource, inline data beside reference fields). server is never "".
	MarkNever(ctx context.Context, uri, server string) (Entry, bool)
}

// NeverStorer is implemented by a [Registrar] whose durable mark store
// can record many never marks in one step (*refs.Registry does). Before a
// [Converter] registers a content's blocks, it passes StoreNeverMarks the
// uri of every block that the content marks never on its server's word,
// when there are two or more; registering the blocks then finds those
// marks stored instead of waiting for the store once per block.
type NeverStorer interface {
	// StoreNeverMarks has the durable store record that server marked
	// each of uris never. It need not mark the registrar's records: the
	// Converter registers or marks each uri right after. server is never
	// "".
	StoreNeverMarks(ctx context.Context, uris []string, server string)
}

// MarkReader is implemented by a [Registrar] that remembers a server's
// never mark for a uri after its record is gone (*refs.Registry does). A
// [Converter] asks it about the blocks that register no record of their
// own: embedded resources and uris written into text. Without it those
// blocks are withheld only while the store still holds a marked record.
// Of the uris a content's texts name, a Converter asks Marked about at
// most the first 256 distinct ones, at ingestion; its views ask
// MarkedHere about every one.
type MarkReader interface {
	// Marked reports whether a server's never marks uri, asking any
	// durable mark store the registrar keeps, and remembers a mark the
	// store reports, so that MarkedHere knows it too.
	Marked(ctx context.Context, uri string) bool
	// MarkedHere is Marked without the durable store: cheap enough for
	// every view a host renders.
	MarkedHere(uri string) bool
}
