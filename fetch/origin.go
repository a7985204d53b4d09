package fetch

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/label"
)

// origin is a scheme, host and port. Userinfo, path and query
// never take part. ws and wss are read as http and https, since an MCPL
// connection dialed over WebSocket serves its references over HTTP on the
// same host and port.
type origin struct {
	scheme string // "http" or "https"
	host   string // lower-cased hostname, no brackets
	port   string // explicit or the scheme's default
}

// originCache holds the origins of the Server.Origin strings a Fetcher
// has seen, parsed: Refusal checks every stub a view shows against its
// server's origin, and parsing the same string each time was a third of
// its cost (BenchmarkRefusal: 640 ns to 420). The strings come from the host's own
// server table, not from servers; past maxOrigins distinct strings the
// rest are parsed each time.
type originCache struct {
	m sync.Map // string -> parsedOrigin
	n atomic.Int32
}

type parsedOrigin struct {
	o  origin
	ok bool
}

const maxOrigins = 256

// parse returns the origin of s, an absolute http(s) URL, and whether it
// names one.
func (c *originCache) parse(s string) (origin, bool) {
	if v, ok := c.m.Load(s); ok {
		p := v.(parsedOrigin)
		return p.o, p.ok
	}
	var p parsedOrigin
	if u, err := url.Parse(s); err == nil {
		p.o, p.ok = originOf(u)
	}
	if c.n.Load() < maxOrigins {
		if _, loaded := c.m.LoadOrStore(s, p); !loaded {
			c.n.Add(1)
		}
	}
	return p.o, p.ok
}

// httpScheme maps a dialable scheme to the HTTP scheme it compares as.
func httpScheme(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "http", "ws":
		return "http", true
	case "https", "wss":
		return "https", true
	}
	return "", false
}

// originOf returns u's origin. ok is false when u names no http, https,
// ws or wss origin with a host.
func originOf(u *url.URL) (origin, bool) {
	scheme, ok := httpScheme(u.Scheme)
	if !ok || u.Host == "" || u.Opaque != "" {
		return origin{}, false
	}
	// Only ASCII letters are lower-cased. Unicode case mapping would turn
	// U+0130 and U+212A into an ASCII "i" and "k", so a host the HTTP
	// client looks up by another (IDNA) name would compare equal to the
	// server's; any other byte compares as it is. An IPv6 zone keeps its
	// case: interface names are case-sensitive.
	host := u.Hostname()
	if addr, zone, ok := strings.Cut(host, "%"); ok && strings.HasPrefix(u.Host, "[") {
		host = uriform.LowerASCII(addr) + "%" + zone
	} else {
		host = uriform.LowerASCII(host)
	}
	if host == "" {
		return origin{}, false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return origin{scheme: scheme, host: host, port: port}, true
}

// display writes the origin as scheme://host:port, cleaned and bounded.
func (o origin) display() string {
	return label.Display(o.scheme+"://"+net.JoinHostPort(o.host, o.port), 200)
}

// parseOtherOrigin reads one entry of [Server.UnauthenticatedOrigins]: the
// serialized origin "scheme://host" or "scheme://host:port" with scheme
// http or https, an ASCII host name or a bracketed IPv6 address, and
// nothing else (no user name or password, path, query or fragment, and no
// trailing slash). why says, for the operator's log, what is wrong with an
// entry it refuses; it never repeats the entry, which may hold a secret by
// mistake.
func parseOtherOrigin(s string) (o origin, why string) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return origin{}, "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return origin{}, "does not use the http or https scheme"
	case u.Opaque != "" || u.Host == "":
		return origin{}, "names no host"
	case u.User != nil:
		return origin{}, "carries a user name or password"
	case u.Path != "" || u.RawPath != "":
		return origin{}, "has a path (a trailing slash counts)"
	case u.ForceQuery || u.RawQuery != "":
		return origin{}, "has a query"
	case strings.Contains(s, "#"):
		return origin{}, "has a fragment"
	case strings.HasSuffix(u.Host, ":"):
		return origin{}, "has an empty port"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return origin{}, "has a port outside 1 to 65535 or with a leading zero"
		}
	}
	o, ok := originOf(u)
	switch {
	case !ok:
		return origin{}, "names no host"
	case !strings.EqualFold(s, u.Scheme+"://"+u.Host):
		// What url.Parse read is not what was written: an escape, such
		// as the %25 of an IPv6 zone.
		return origin{}, "is not written as scheme://host or scheme://host:port"
	case !plainHost(o.host):
		return origin{}, "has a host that is neither an ASCII host name nor an IP address"
	}
	return o, ""
}

// plainHost reports whether h, a host as originOf gives it, is an IP
// address without a zone or a host name of ASCII letters, digits,
// hyphens, underscores and dots.
func plainHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	if strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, c := range []byte(h) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// simpleOrigin returns the origin of raw without building a url.URL, for
// the common spelling of a reference: "http://" or "https://", a host name
// of lower-case letters, digits, dots and hyphens, an optional port of
// digits, and then a path without '%', any query, and a fragment without
// '%', with no control byte anywhere. For every such string url.Parse
// succeeds, finds no user information and an http or https scheme, and
// [originOf] gives the same origin (FuzzSimpleOrigin checks this against
// them). ok is false for anything else, which the caller parses in full.
// [Fetcher.Refusal] uses it to skip the parse for a reference at its
// server's own origin, asked for every stub a view shows
// (BenchmarkRefusal).
func simpleOrigin(raw string) (o origin, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(raw, "http://"):
		o.scheme, rest = "http", raw[len("http://"):]
	case strings.HasPrefix(raw, "https://"):
		o.scheme, rest = "https", raw[len("https://"):]
	default:
		return origin{}, false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, port, hasPort := strings.Cut(rest[:end], ":")
	if host == "" || (hasPort && port == "") {
		return origin{}, false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return origin{}, false
		}
	}
	for i := 0; i < len(port); i++ {
		if c := port[i]; c < '0' || c > '9' {
			return origin{}, false
		}
	}
	// The path runs to the query or fragment; the fragment from the first
	// '#'. url.Parse unescapes both, so a '%' there could be an error.
	tail := rest[end:]
	inQuery := false
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; {
		case c < 0x20 || c == 0x7f:
			return origin{}, false
		case c == '?':
			inQuery = true
		case c == '#':
			if strings.IndexByte(tail[i:], '%') >= 0 || strings.IndexFunc(tail[i:], isCTL) >= 0 {
				return origin{}, false
			}
			i = len(tail)
		case c == '%' && !inQuery:
			return origin{}, false
		}
	}
	if !hasPort {
		port = "80"
		if o.scheme == "https" {
			port = "443"
		}
	}
	o.host, o.port = host, port
	return o, true
}

// isCTL reports an ASCII control character, which url.Parse refuses
// anywhere in a URL.
func isCTL(r rune) bool { return r < 0x20 || r == 0x7f }
