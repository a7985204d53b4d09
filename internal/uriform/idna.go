package uriform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// unicodeHostForm keys a host name that holds non-ASCII characters (given
// with its ASCII letters lower-cased) by the name Go's HTTP client looks
// it up by. The client's Transport maps such a name with its IDNA lookup
// profile and dials the ASCII (punycode) result, or, where that mapping
// refuses the name, dials it as written. The key takes the very name the
// Transport dials, asked of a Transport that never connects
// ([lookupName]), so two spellings share a key exactly when the client
// dials them alike: any mapping of our own (case folding, normalization,
// joiner rules) disagreed with the client's somewhere. A name the
// mapping refuses is keyed as written, percent-encoded, with only its
// ASCII letters lower-cased.
//
// A name too long for any client to dial is not looked up: it is keyed
// to [undialableHost], one host shared by every such name. The lookup
// would encode the whole name whatever its length, at a cost of a
// label's length times its number of distinct characters (a fifth of a
// second for one label of 4,000 distinct CJK characters, paid on every
// key of the uri), and its answer would name nothing a resolver takes.
// Merging these names fails closed: a never on a uri with one of them
// withholds a uri with any other and the same rest, and neither can be
// fetched.
func unicodeHostForm(lower string) (string, bool) {
	// A name holding a colon (the parser took the last one for the port)
	// is dialed as written; a lookup would split it again. The client's
	// name loses its trailing dots, as an ASCII name's do (a full-width
	// stop maps to one); one left empty names no host.
	if strings.Contains(lower, ":") {
		return escapeHost(lower)
	}
	if !mayBeDialed(lower) {
		return undialableHost, true
	}
	if name, ok := lookupName(lower); ok && isASCII(name) && strings.TrimRight(name, ".") != "" {
		if key, ok := escapeHost(LowerASCII(strings.TrimRight(name, "."))); ok {
			return key, true
		}
	}
	return escapeHost(lower)
}

// undialableHost is the key's host for every Unicode host name too long
// for any client to dial. Its first label is longer than the 63 bytes a
// DNS label may hold, so no host that can be dialed shares it, and it is
// lower-case ASCII, so a key holding it is its own key and takes
// [Canonical]'s fast path. A server that writes it as a host names
// nothing that can be dialed either.
const undialableHost = "undialable-host-name-whose-ascii-form-would-be-longer-than-dns-allows.invalid"

// maxComposed is the most code points normalization to NFC composes into
// one: no character's canonical decomposition is longer.
const maxComposed = 4

// mayBeDialed reports whether a Unicode host name could be dialed: false
// when its ASCII form would surely have a label over 63 bytes or be over
// 253 bytes in all, which Go's resolver refuses. It reads the name once
// and does not map it.
//
// A lower bound on each label's length is enough. The lookup splits
// labels at "." and at the three full stops that map to one; it maps
// each code point to one or more, except those [mayVanish] lets through,
// and then composes at most maxComposed code points into one; the ASCII
// form holds at least one byte per code point that is left. Where the
// lookup refuses the name, the client dials it as written, which is
// longer still.
func mayBeDialed(name string) bool {
	// label counts the code points of the current label that survive the
	// mapping; total bounds the length of the labels before it, dots
	// included.
	label, total := 0, 0
	end := func() bool {
		n := (label + maxComposed - 1) / maxComposed
		if n > 63 {
			return false
		}
		if n > 0 {
			if total > 0 {
				total++ // the dot before it
			}
			total += n
		}
		label = 0
		return total <= 253
	}
	for _, r := range name {
		switch {
		case r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61':
			if !end() {
				return false
			}
		case !mayVanish(r):
			label++
			if label > 63*maxComposed {
				return false
			}
		}
	}
	return end()
}

// mayVanish reports whether the IDNA mapping may drop r from a name:
// the code points it ignores, and the two joiners, which transitional
// processing drops. A test checks every code point against the lookup
// the client makes.
func mayVanish(r rune) bool {
	switch {
	case r < 0xad:
		return false
	case r == 0xad, r == 0x34f, 0x180b <= r && r <= 0x180d, r == 0x180f,
		0x200b <= r && r <= 0x200d, r == 0x2060, r == 0x2064,
		0xfe00 <= r && r <= 0xfe0f, r == 0xfeff,
		0x1bca0 <= r && r <= 0x1bca3, 0xe0100 <= r && r <= 0xe01ef:
		return true
	}
	return false
}

// dialTo is the context key under which [lookupTransport] reports the
// address it was asked to dial.
type dialTo struct{}

// errNoDial is the dial error of [lookupTransport]; nothing sees it.
var errNoDial = errors.New("uriform: a name lookup does not connect")

// lookupTransport is an HTTP Transport that never connects: asked to
// dial, it stores the address in the *string its request's context
// carries and fails. No proxy is consulted, so the address is the
// request's own host.
var lookupTransport = &http.Transport{
	DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		if p, ok := ctx.Value(dialTo{}).(*string); ok {
			*p = addr
		}
		return nil, errNoDial
	},
	DisableKeepAlives: true,
}

// lookupName returns the host name an HTTP client dials for a request to
// http://host/, as net/http's Transport derives it (IDNA lookup, or the
// name as written where the lookup refuses it). ok is false when the
// Transport would dial nothing. It makes no connection and reads no
// name server.
func lookupName(host string) (name string, ok bool) {
	var addr string
	ctx := context.WithValue(context.Background(), dialTo{}, &addr)
	req := (&http.Request{
		Method: http.MethodGet,
		URL:    &url.URL{Scheme: "http", Host: host, Path: "/"},
		Header: make(http.Header),
	}).WithContext(ctx)
	if resp, err := lookupTransport.RoundTrip(req); err == nil {
		resp.Body.Close() // cannot happen: the Transport never connects
	}
	name, _, err := net.SplitHostPort(addr)
	return name, err == nil && name != ""
}
