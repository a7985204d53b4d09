package convert

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcplrefs/refcore/label"
)

// Default display bounds. Each is host policy; a zero field in [Policy]
// means the default here.
const (
	// DefaultViewMax bounds one whole view (a wake text, a history text,
	// or a push view's JSON text), counted in UTF-16 code units as
	// JavaScript counts string length.
	DefaultViewMax = 16000
	// DefaultStubMax bounds one stub or notice, in runes.
	DefaultStubMax = 480
	// DefaultProvenanceMax bounds each server-supplied input to the
	// provenance line (a server, tool, event or channel name), in runes.
	DefaultProvenanceMax = 64
	// DefaultFetchHint is what a live, unfetched stub offers next.
	DefaultFetchHint = "fetch it by this id"
)

// Policy is a host's choice of bounds and hooks for the views. Its zero
// value is the documented safe default: no uri shown, default bounds.
type Policy struct {
	// NameMax bounds a name label in runes; zero means label.NameMax.
	NameMax int
	// TypeMax bounds a media-type label in runes; zero means label.TypeMax.
	TypeMax int
	// StubMax bounds one stub or notice in runes; zero means
	// DefaultStubMax. It may not be below MinStubMax. Where ViewMax is too
	// small to show a stub of StubMax runes whole beside the notice of
	// blocks left out, the converter lowers StubMax to the longest stub
	// that fits, which is never below MinStubMax; [Converter.Policy]
	// reports the bound in force.
	StubMax int
	// ViewMax bounds one whole view (a wake or history text, the JSON
	// text of a push view or of a script's view), in UTF-16 code units;
	// zero means DefaultViewMax. It may not be below MinViewMax, the
	// smallest bound at which every view still shows a whole stub and
	// the count of blocks it left out.
	ViewMax int
	// FetchHint is what a live, unfetched stub offers, such as
	// "fetch it with fetch_reference"; empty means DefaultFetchHint.
	FetchHint string
	// ShowURI, if set, is asked whether a reference's uri may be shown in
	// its stub. It is consulted only for a ref or absent disposition on a
	// record no server marked never; under never the uri is withheld
	// whatever it says, and so is a uri that writes out one the views
	// withhold (a never uri with a parameter added, say, or one
	// percent-encoded in its query), and, in a content naming more uris
	// than the views search texts for, a uri that carries another uri.
	// The default shows no uri.
	//
	// ShowURI, Refusal and Inline are asked about an entry as one block
	// shows it: the record's id, never mark and saved copy, with that
	// block's own testimony in place of the record's.
	ShowURI func(Entry) bool
	// Refusal, if set, says why the host's fetcher would refuse an entry
	// without dialing (fetch.Fetcher.Refusal's clause), or "" when it
	// would try. A stub then gives that reason instead of a fetch hint.
	// It is asked only when the block's own expiry has not passed.
	Refusal func(Entry) string
	// Inline, if set, may show a verified payload in a push view in place
	// of a reference's stub. It is asked only about an entry
	// with a saved copy whose disposition is ref or absent and that no
	// server marked never; it returns the block to show and true, or false
	// to keep the stub. The block counts toward the view bound like any
	// other. Text views (history, wake) always show the stub.
	Inline func(Entry) (ModelBlock, bool)
	// Now is the clock for expiry; nil means time.Now. A host that sets
	// it sets the fetcher's clock (fetch.Config.Now) to the same, or a stub
	// may offer a fetch the fetcher refuses as expired.
	Now func() time.Time
}

// ErrBadConfig is matched (errors.Is) by every error [New] returns: a nil
// Registrar or a [Policy] it refuses. The error's text names the field.
var ErrBadConfig = errors.New("convert: bad config")

// check refuses a negative bound (zero means the default, and no bound is
// ever "none") and a stub or view bound below its minimum.
func (p Policy) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"NameMax", p.NameMax}, {"TypeMax", p.TypeMax}, {"StubMax", p.StubMax}, {"ViewMax", p.ViewMax}} {
		if f.v < 0 {
			return fmt.Errorf("%w: Policy.%s is negative", ErrBadConfig, f.name)
		}
	}
	if p.StubMax != 0 && p.StubMax < MinStubMax {
		return fmt.Errorf("%w: Policy.StubMax %d is below MinStubMax (%d), too small for the host's own notices", ErrBadConfig, p.StubMax, MinStubMax)
	}
	if p.ViewMax != 0 && p.ViewMax < MinViewMax {
		return fmt.Errorf("%w: Policy.ViewMax %d is below MinViewMax (%d), too small for a whole stub and the count of blocks left out", ErrBadConfig, p.ViewMax, MinViewMax)
	}
	return nil
}

func (p Policy) withDefaults() Policy {
	if p.NameMax == 0 {
		p.NameMax = label.NameMax
	}
	if p.TypeMax == 0 {
		p.TypeMax = label.TypeMax
	}
	if p.StubMax == 0 {
		p.StubMax = DefaultStubMax
	}
	if p.ViewMax == 0 {
		p.ViewMax = DefaultViewMax
	}
	if room := stubRoom(p.ViewMax); p.StubMax > room {
		p.StubMax = room // a view always shows one stub whole
	}
	if p.FetchHint == "" {
		p.FetchHint = DefaultFetchHint
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}
