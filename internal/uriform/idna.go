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
func unicodeHostForm(lower string) (string, bool) {
	// A name holding a colon (the parser took the last one for the port)
	// is dialed as written; a lookup would split it again. The client's
	// name loses its trailing dots, as an ASCII name's do (a full-width
	// stop maps to one); one left empty names no host.
	if strings.Contains(lower, ":") {
		return escapeHost(lower)
	}
	if name, ok := lookupName(lower); ok && isASCII(name) && strings.TrimRight(name, ".") != "" {
		if key, ok := escapeHost(LowerASCII(strings.TrimRight(name, "."))); ok {
			return key, true
		}
	}
	return escapeHost(lower)
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
