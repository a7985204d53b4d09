package convert

// Registration is what ingesting one reference asks of the record store.
type Registration struct {
	// Testimony is the block's testimony; its URI is required.
	Testimony Testimony
	// Server names the MCPL server whose content carried the block, or ""
	// for serverless content (a host module's result, a script's output, a
	// relay of someone else's JSON).
	Server string
	// Never is set when the content's claims call the uri never (N1). It
	// marks the record only when Server is not "": a serverless never
	// withholds within its own content and marks nothing (N4).
	Never bool
}

// Entry is the part of a host-private record that a view may read. It is
// a snapshot: later changes to the record do not reach it.
type Entry struct {
	// ID is the host-generated opaque reference id, such as "ref_k2…".
	ID string
	// Testimony is the record's testimony, chosen by whose word counts (R6).
	Testimony Testimony
	// Never is set once a server's never marked the record (N1).
	Never bool
	// Saved is set when a verified copy is stored; the fields below
	// describe it and come from the bytes, never from testimony (R5).
	Saved          bool
	SavedPath      string
	VerifiedBytes  int64
	VerifiedType   string
	DigestVerified bool
}

// Registrar is the record store a [Converter] registers references in.
// *refs.Registry satisfies it. Implementations must be safe for concurrent
// use.
type Registrar interface {
	// Register records one reference and returns its entry. Registering a
	// uri the store holds returns the same record, most recently used.
	Register(r Registration) Entry
	// Entry returns the current entry for id, if the store still holds it.
	Entry(id string) (Entry, bool)
	// EntryForURI returns the current entry for a uri, if any.
	EntryForURI(uri string) (Entry, bool)
	// MarkNever marks the record for uri never on server's word, creating
	// a marked record bound to server when none exists (N1). It is used for
	// a never that arrives on a block that makes no stub (an embedded
	// resource, an inline contradiction). server is never "".
	MarkNever(uri, server string) (Entry, bool)
}
