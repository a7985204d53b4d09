package uriform

import (
	"net/url"
	"strings"
	"unicode"

	"github.com/mcplrefs/refcore/label"
)

// Canonical returns the key form of a uri: surrounding whitespace and
// invisible characters removed, scheme and host lower-cased, the scheme's
// default port dropped, and percent-encoded unreserved characters decoded
// (with every other escape's hex digits upper-cased). A string that does
// not parse as a URL is keyed by its trimmed text alone.
//
// Canonical is idempotent: where a rewritten form would itself rewrite to
// something else (an edge of URL parsing), the trimmed text is the key.
func Canonical(s string) string {
	if plainCanonical(s) {
		return s
	}
	return slowCanonical(s)
}

// slowCanonical is Canonical without the fast path.
func slowCanonical(s string) string {
	s = strings.TrimFunc(s, invisibleOrSpace)
	c := rewrite(s)
	if c != s && rewrite(c) != c {
		return s
	}
	return c
}

// plainCanonical reports, without parsing, whether s is an http or https
// URL already in canonical form: a lower-case scheme and host, no default
// port, no escapes, and only characters that parse and print unchanged.
// Most uris a host sees take this path, which allocates nothing.
func plainCanonical(s string) bool {
	var rest string
	switch {
	case strings.HasPrefix(s, "https://"):
		rest = s[len("https://"):]
		if hostEnds(rest, ":443") {
			return false
		}
	case strings.HasPrefix(s, "http://"):
		rest = s[len("http://"):]
		if hostEnds(rest, ":80") {
			return false
		}
	default:
		return false
	}
	hostDone := false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !hostDone {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '-', c == ':' && i > 0:
				continue
			case c == '/' && i > 0:
				hostDone = true
				continue
			}
			return false
		}
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~/?=&", c) >= 0:
		default:
			return false
		}
	}
	return hostDone
}

// hostEnds reports whether the authority at the start of rest ends with
// the port suffix.
func hostEnds(rest, port string) bool {
	host, _, _ := strings.Cut(rest, "/")
	return strings.HasSuffix(host, port)
}

// rewrite does one pass of the canonical rewriting on trimmed text.
func rewrite(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || !plainASCII(u.Host) {
		return s
	}
	rest := s
	if u.Scheme != "" {
		rest = s[len(u.Scheme)+1:]
	}
	hasAuthority := strings.HasPrefix(rest, "//")
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Host != "" {
		host := strings.ToLower(u.Host)
		switch {
		case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
			host = strings.TrimSuffix(host, ":80")
		case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
			host = strings.TrimSuffix(host, ":443")
		}
		u.Host = host
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteByte(':')
	}
	if hasAuthority {
		b.WriteString("//")
		if u.User != nil {
			b.WriteString(normalizeEscapes(u.User.String()))
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
	}
	b.WriteString(normalizeEscapes(u.EscapedPath()))
	if u.ForceQuery || u.RawQuery != "" {
		b.WriteByte('?')
		b.WriteString(normalizeEscapes(u.RawQuery))
	}
	if u.Fragment != "" {
		b.WriteByte('#')
		b.WriteString(normalizeEscapes(u.EscapedFragment()))
	}
	return b.String()
}

// normalizeEscapes decodes %XX escapes of unreserved characters (RFC 3986
// §2.3) and upper-cases the hex of every other escape.
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(s[i+1]))
				b.WriteByte(upper(s[i+2]))
			}
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// invisibleOrSpace is what surrounds a uri without being part of it:
// white space and every character the display sanitizer removes (controls,
// format characters and default-ignorable characters), one definition
// shared with label.
func invisibleOrSpace(r rune) bool { return unicode.IsSpace(r) || label.Removed(r) }

// plainASCII reports whether a host is printable ASCII without escapes;
// any other host is keyed by the uri's text, so canonical forms stay stable.
func plainASCII(host string) bool {
	for i := 0; i < len(host); i++ {
		if c := host[i]; c < 0x21 || c > 0x7e || c == '%' {
			return false
		}
	}
	return true
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}
