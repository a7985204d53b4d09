package refs

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// Errors a [Registry] returns. Test for them with errors.Is.
var (
	// ErrUnknownReference: the registry does not hold the id, because it
	// evicted or removed the record or never issued the id. The error
	// [Registry.Resolve] returns is an [*UnknownError] that unwraps to it.
	ErrUnknownReference = errors.New("refs: unknown reference")
	// ErrGone: [Registry.Save] found the record let go since the fetch
	// began, or claiming a digest other than the one the bytes were
	// verified against. Nothing was recorded; the copy is the caller's.
	ErrGone = errors.New("refs: record no longer held as fetched")
	// ErrMarked: [Registry.Save] found the record marked never. Nothing
	// was recorded; the copy is the caller's.
	ErrMarked = errors.New("refs: record is marked never")
	// ErrBadConfig: [New] was given a [Config] it cannot honour, such as
	// a negative capacity.
	ErrBadConfig = errors.New("refs: bad config")
)

// UnknownError is the error [Registry.Resolve] returns for an id it does
// not hold. It unwraps to [ErrUnknownReference].
type UnknownError struct {
	// ID is the id that was looked up, as given.
	ID string
}

// Error reads "unknown reference: <id>": the id's first 64 bytes (whole
// characters only), quoted as a Go string, so text a caller passed cannot
// reshape the message; the quoted form may be longer, as escapes take
// several bytes. It is safe to show to a model: it holds nothing but the id the
// model gave.
func (e *UnknownError) Error() string {
	id := e.ID
	if len(id) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(id[cut]) {
			cut--
		}
		id = id[:cut]
	}
	return "unknown reference: " + strconv.Quote(id)
}

// Unwrap returns [ErrUnknownReference].
func (e *UnknownError) Unwrap() error { return ErrUnknownReference }
