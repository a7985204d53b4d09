package uriform

import (
	"bytes"
	"net/netip"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/label"
)

// Canonical returns the key form of a uri.
//
// Surrounding white space and invisible characters are removed first. An
// http or https URL with a host, and a ws, wss or ftp one, which name a
// host and a path the same way, is then rebuilt from its parts, each in
// one fixed spelling:
//
//   - the scheme in lower case; the host name with its ASCII letters in
//     lower case, a Unicode host name in the ASCII (punycode) form an HTTP
//     client looks it up by, trailing dots dropped (one too long for any
//     client to dial is replaced by one fixed name that stands for them
//     all, see the package documentation); a name that ends in a
//     number read as the IPv4 address WHATWG URL parsers read it as (one to
//     four parts, decimal, octal or hexadecimal) and written in dotted
//     decimal; an IPv6 address in its shortest form, its zone in its own
//     case;
//   - the port dropped when it is empty or the scheme's default, and
//     written without leading zeros otherwise;
//   - the path decoded, its "." and ".." segments applied, its empty
//     segments collapsed and white space at its end dropped, then escaped
//     again: letters, digits, "-._~", "!$&'()*+,;=", ":" and "@" raw,
//     every other byte as an escape with upper-case hex; an empty path
//     becomes "/";
//   - the query with escapes of letters, digits and "-._~" decoded, every
//     other escape in upper-case hex, every character that cannot stand
//     raw escaped, and white space at its end dropped; an empty query is
//     dropped;
//   - the fragment and any user information dropped (neither reaches the
//     request line, and the fetcher refuses a uri with user information).
//
// Any other text (another scheme, a URL without a host, or a string that
// does not parse) is keyed by its trimmed text with the scheme
// lower-cased.
//
// Canonical is deterministic, never panics, and is idempotent: the key of
// a key is the key itself. A uri already in key form is returned without
// allocating.
func Canonical(s string) string {
	key, _ := Key(s)
	return key
}

// Key is [Canonical] that also reports whether making the key parsed s as
// a URL, which allocates several times the length of s and some hundreds
// of bytes more, even where the key equals s. Without parsing, the key is
// s itself, a part or a copy of it: the text of another scheme with the
// scheme lower-cased, or an http or https URL in key form but for its
// fragment, or for the slash of an empty path ("https://example.com", a
// cut a text's reading often makes).
func Key(s string) (key string, parsed bool) {
	if plainCanonical(s) {
		return s, false
	}
	t := strings.TrimFunc(s, invisibleOrSpace)
	if !webScheme(t) {
		return otherForm(t), false
	}
	if t == s {
		// In key form but for its fragment, which holds no escape: one
		// that is malformed makes the URL fail to parse, and the key is
		// then the whole text.
		if i := strings.IndexByte(s, '#'); i > 0 && !strings.Contains(s[i:], "%") && plainCanonical(s[:i]) {
			return s[:i], false
		}
		if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[i+len("://"):], "/?#") {
			if k := s + "/"; plainCanonical(k) {
				return k, false
			}
		}
	}
	return slowCanonical(s), true
}

// webScheme reports whether t starts with one of webSchemes, in any
// letter case: only such a text can have a key other than its
// [otherForm], so no other is parsed.
func webScheme(t string) bool {
	i := SchemeEnd(t)
	return i > 0 && defaultPort(strings.ToLower(t[:i])) != ""
}

// defaultPort returns the default port of scheme, one of the schemes
// whose uris are keyed as http's are (http, https, and ws, wss and ftp,
// whose uris name a host and a path the same way), or "" for any other.
func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// plainCanonical reports, without parsing or allocating, whether s is an
// http or https URL already in key form: a lower-case host of letters,
// digits, dots and hyphens with no trailing dot, a port only when it is
// not the default and has no leading zero, a path with no empty or dot
// segments, a non-empty query or none, no fragment, and only characters
// that the rewrite keeps as they are (escapes only of reserved bytes, in
// upper-case hex, and none at the end of the path or query, where it
// might be white space). Most uris a host sees take this path.
func plainCanonical(s string) bool {
	var rest, defaultPort string
	switch {
	case strings.HasPrefix(s, "https://"):
		rest, defaultPort = s[len("https://"):], "443"
	case strings.HasPrefix(s, "http://"):
		rest, defaultPort = s[len("http://"):], "80"
	default:
		return false
	}
	i := 0
	for i < len(rest) && plainHost[rest[i]] {
		i++
	}
	if i == 0 || rest[i-1] == '.' {
		return false
	}
	if host := rest[:i]; endsInNumber(host) {
		// Only an address in dotted-decimal form (four parts, no leading
		// zeros, as ParseAddr takes it) is in key form.
		if a, err := netip.ParseAddr(host); err != nil || !a.Is4() {
			return false
		}
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if port := rest[i+1 : j]; port == "" || port[0] == '0' || port == defaultPort {
			return false
		}
		i = j
	}
	if i == len(rest) || rest[i] != '/' {
		return false
	}
	// The path: each segment closed by "/" must be neither empty nor a dot
	// segment; the last one may be empty (a trailing slash).
	start := i + 1
	for i = start; i <= len(rest); i++ {
		if i < len(rest) && rest[i] != '/' && rest[i] != '?' {
			if plainPath[rest[i]] {
				continue
			}
			if !plainEscape(rest, i, pathDecoded) {
				return false
			}
			i += 2
			continue
		}
		seg := rest[start:i]
		if seg == "." || seg == ".." || (seg == "" && i < len(rest) && rest[i] == '/') {
			return false
		}
		if i == len(rest) || rest[i] == '?' {
			// An escape at the end might be white space to trim.
			if i >= 3 && rest[i-3] == '%' {
				return false
			}
			if i == len(rest) {
				return true
			}
			break
		}
		start = i + 1
	}
	// The query: present, so not empty.
	if i+1 == len(rest) {
		return false
	}
	for i++; i < len(rest); i++ {
		if c := rest[i]; plainPath[c] || c == '/' || c == '?' {
			continue
		}
		if !plainEscape(rest, i, unreservedKeep) {
			return false
		}
		i += 2
	}
	return len(rest) < 3 || rest[len(rest)-3] != '%'
}

// plainEscape reports whether rest[i] starts an escape the rewrite keeps
// as is: upper-case hex, of a byte the rewrite escapes too (in a path,
// one that may not stand raw in a segment; in a query, one that is not
// unreserved).
func plainEscape(rest string, i int, decoded *[256]bool) bool {
	return rest[i] == '%' && i+2 < len(rest) && isUpperHex(rest[i+1]) && isUpperHex(rest[i+2]) &&
		!decoded[unhex(rest[i+1])<<4|unhex(rest[i+2])]
}

// slowCanonical is Canonical without the fast path.
//
// Its idempotence does not rest on webForm alone: a rebuilt form is only
// returned when it rebuilds to itself, and otherwise the trimmed text is
// the key. Both answers are fixed points, because the same trimmed text
// always takes the same branch.
func slowCanonical(s string) string {
	t := strings.TrimFunc(s, invisibleOrSpace)
	if !webScheme(t) {
		return otherForm(t)
	}
	c, ok := webForm(t)
	if !ok {
		return otherForm(t)
	}
	if c == t || stable(c) {
		return c
	}
	return t
}

// stable reports whether a rebuilt form is its own key.
func stable(c string) bool {
	if strings.TrimFunc(c, invisibleOrSpace) != c {
		return false
	}
	again, ok := webForm(c)
	return ok && again == c
}

// webForm rebuilds a URL of one of the schemes webScheme takes, with a
// host, in its key form. It reports false for anything else.
func webForm(t string) (string, bool) {
	u, err := url.Parse(t)
	if err != nil || u.Opaque != "" || defaultPort(u.Scheme) == "" {
		return "", false
	}
	host, ok := hostForm(u)
	if !ok {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(t) + 8)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	// A user name or password is left out: it never reaches the request
	// line, the fetcher refuses a uri that carries one, and a never on the
	// resource must hold for it too.
	b.WriteString(host)
	colon := !strings.HasPrefix(host, "[") && strings.Contains(host, ":")
	if port := portForm(u.Scheme, u.Port(), colon); port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	writePath(&b, u.Path)
	if u.RawQuery != "" {
		var q strings.Builder
		q.Grow(len(u.RawQuery))
		writeRaw(&q, u.RawQuery, queryKeep)
		if query := trimBlankEscapes(q.String()); query != "" {
			b.WriteByte('?')
			b.WriteString(query)
		}
	}
	return b.String(), true
}

// trimBlankEscapes drops escaped white space and invisible characters
// from the end of an escaped path or query.
//
// Trimming the uri's text is not enough on its own: the white space after
// "https://h/p " is sent (as "/p%20"), and so is the one in
// "https://h/p #x". Both spellings must share the key of "https://h/p",
// which the trimmed text gets, so the key drops such a tail wherever it
// stands, raw or escaped.
func trimBlankEscapes(s string) string {
	for {
		var buf [utf8.UTFMax]byte
		n, end := 0, len(s)
		for n < len(buf) && end >= 3 && s[end-3] == '%' && isHex(s[end-2]) && isHex(s[end-1]) {
			end -= 3
			n++
			buf[len(buf)-n] = unhex(s[end+1])<<4 | unhex(s[end+2])
		}
		if n == 0 {
			return s
		}
		r, size := utf8.DecodeLastRune(buf[len(buf)-n:])
		if (r == utf8.RuneError && size <= 1) || !invisibleOrSpace(r) {
			return s
		}
		s = s[:len(s)-3*size]
	}
}

// hostForm returns the key spelling of u's host, without its port.
//
// Dots, white space and invisible characters at the end of a host name are
// dropped: the trimming drops the last two from "https://h\u200b", and
// the same characters before a "#" or ":" are part of the host, so those
// spellings must share the trimmed one's key. A name left empty names no
// host.
func hostForm(u *url.URL) (string, bool) {
	if strings.HasPrefix(u.Host, "[") {
		return ipv6Form(u.Hostname())
	}
	name := strings.TrimRightFunc(u.Hostname(), dotOrBlank)
	if name == "" {
		return "", false
	}
	// Only ASCII letters are lower-cased here: Unicode lower-casing would
	// turn U+0130 into a plain "i", merging two names an HTTP client looks
	// up as different hosts. unicodeHostForm takes the name the client
	// looks up.
	lower := LowerASCII(name)
	var host string
	var ok bool
	if isASCII(lower) {
		host, ok = escapeHost(lower)
	} else {
		host, ok = unicodeHostForm(lower)
	}
	if ok && endsInNumber(host) {
		// An address, in one of its many spellings (the name a Unicode
		// one maps to included). A name the browsers' parsers refuse as
		// one is keyed as any other name, as an HTTP client may still
		// look it up.
		if addr, isAddr := ipv4Form(host); isAddr {
			return addr, true
		}
	}
	return host, ok
}

// endsInNumber reports whether the last label of the ASCII host name
// host is a number, decimal or hexadecimal: WHATWG URL parsers then read
// the host as an IPv4 address or refuse it.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		return strings.IndexFunc(last, func(r rune) bool { return !isHex(byte(r)) || r >= 0x80 }) < 0
	}
	return strings.IndexFunc(last, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// ipv4Form writes the lower-case host name host, which ends in a number,
// as the dotted-decimal address WHATWG URL parsers (and inet_aton) read
// it as: one to four parts, each decimal, octal (a leading 0) or
// hexadecimal (0x), the last filling the bytes the others leave. It
// reports false for a host they refuse as an address.
func ipv4Form(host string) (string, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return "", false
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok || i < len(parts)-1 && n > 255 {
			return "", false
		}
		nums[i] = n
	}
	last := len(parts) - 1
	if nums[last] >= 1<<(8*(5-len(parts))) {
		return "", false
	}
	addr := nums[last]
	for i := range last {
		addr += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)}).String(), true
}

// ipv4Number reads one part of an IPv4 address as WHATWG URL parsers do.
func ipv4Number(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	case p == "":
		return 0, false
	}
	// Leading zeros add nothing (WHATWG parsers take any number of them).
	if p = strings.TrimLeft(p, "0"); len(p) > 12 {
		return 0, false // past any address, and past overflow
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		d := uint64(16)
		switch c := p[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		}
		if d >= uint64(base) {
			return 0, false
		}
		n = n*uint64(base) + d
	}
	return n, true
}

func dotOrBlank(r rune) bool { return r == '.' || invisibleOrSpace(r) }

// escapeHost writes a decoded host name as a URL holds it: "%" and bytes
// at or above 0x80 escaped, everything else raw. It reports false for a
// byte no host name may hold.
func escapeHost(name string) (string, bool) {
	if !strings.Contains(name, "%") && isASCII(name) {
		for i := 0; i < len(name); i++ {
			if !hostKeep[name[i]] {
				return "", false
			}
		}
		return name, true
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '%' || c >= 0x80:
			writeEscape(&b, c)
		case hostKeep[c]:
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// ipv6Form writes a bracketed IPv6 literal in its shortest form. A zone is
// kept, lower-cased, with its ASCII bytes other than unreserved ones
// escaped; bytes at or above 0x80 stay raw, since Go's parser refuses
// their escapes in a zone.
func ipv6Form(name string) (string, bool) {
	addr, err := netip.ParseAddr(name)
	if err != nil || !addr.Is6() {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(addr.WithZone("").String())
	if zone := addr.Zone(); zone != "" {
		b.WriteString("%25")
		writeEscaped(&b, zone, zoneKeep) // interface names are case-sensitive
	}
	b.WriteByte(']')
	return b.String(), true
}

// portForm returns the port to write: none for an empty or default port,
// otherwise the digits without leading zeros. A host name that holds a
// colon (the parser allows one when a port follows) always gets its port,
// the default filled in, or the key would not parse back.
func portForm(scheme, port string, always bool) string {
	def := defaultPort(scheme)
	p := strings.TrimLeft(port, "0")
	if p == "" && port != "" {
		p = "0"
	}
	switch {
	case p == "" || p == def:
		if always {
			return def
		}
		return ""
	}
	return p
}

// writePath writes a decoded path in key form: white space and invisible
// characters at its end dropped, "." and ".." segments applied, empty
// segments collapsed, and each segment escaped in one fixed way; an empty
// path is written as "/".
//
// The key works on the decoded path, so an escaped "/" counts as a
// separator and an escaped sub-delimiter as the character itself. Go's
// client leaves no choice: it sends the path as written when every
// character may stand there raw, and otherwise re-escapes the decoded
// path whole, so "/a%2Fb!" goes out as written while "/a%2Fb! " goes out
// as "/a/b%21%20". A key that kept those escapes apart would give two
// spellings of one request two keys.
func writePath(b *strings.Builder, path string) {
	path = strings.TrimRightFunc(path, invisibleOrSpace)
	// out holds "/" and a segment for each kept segment, so a "/" in it
	// always starts a segment. The path ends in "/" when its last segment
	// is empty or a dot segment.
	out := make([]byte, 0, len(path)+1)
	trailing := false
	for i := 0; i < len(path); {
		if path[i] == '/' {
			i++
		}
		end := len(path)
		if j := strings.IndexByte(path[i:], '/'); j >= 0 {
			end = i + j
		}
		switch seg := path[i:end]; seg {
		case "", ".":
			trailing = true
		case "..":
			out = out[:max(bytes.LastIndexByte(out, '/'), 0)]
			trailing = true
		default:
			out = append(out, '/')
			for k := 0; k < len(seg); k++ {
				if c := seg[k]; segmentKeep[c] {
					out = append(out, c)
				} else {
					out = append(out, '%', upperHex[c>>4], upperHex[c&15])
				}
			}
			trailing = false
		}
		i = end
	}
	if len(out) == 0 || trailing {
		out = append(out, '/')
	}
	b.Write(out)
}

// writeRaw writes text that may hold escapes: an escape of an unreserved
// character is decoded, any other escape gets upper-case hex, a "%" that
// starts no escape is escaped itself, and a byte outside keep is escaped.
func writeRaw(b *strings.Builder, s string, keep *[256]bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreservedKeep[v] {
				b.WriteByte(v)
			} else {
				writeEscape(b, v)
			}
			i += 2
			continue
		}
		if keep[c] {
			b.WriteByte(c)
		} else {
			writeEscape(b, c)
		}
	}
}

// writeEscaped writes decoded text, escaping each byte outside keep.
func writeEscaped(b *strings.Builder, s string, keep *[256]bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; keep[c] {
			b.WriteByte(c)
		} else {
			writeEscape(b, c)
		}
	}
}

func writeEscape(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

const upperHex = "0123456789ABCDEF"

// otherForm keys text that is not a URL webForm rebuilds: its
// scheme, if it has one, is lower-cased and nothing else changes.
func otherForm(t string) string {
	i := SchemeEnd(t)
	if i <= 0 {
		return t
	}
	for j := 0; j < i; j++ {
		if c := t[j]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(t[:i]) + t[i:]
		}
	}
	return t
}

// SchemeEnd returns the index of the ":" that ends t's scheme (a letter,
// then letters, digits, "+", "-" or "."), or -1.
func SchemeEnd(t string) int {
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

// invisibleOrSpace is what surrounds a uri without being part of it:
// white space and every character the display sanitizer removes (controls,
// format characters and default-ignorable characters), one definition
// shared with label.
func invisibleOrSpace(r rune) bool { return unicode.IsSpace(r) || label.Removed(r) }

// Trim returns s without the white space and invisible characters around
// it, which [Key] leaves out of a key.
func Trim(s string) string { return strings.TrimFunc(s, invisibleOrSpace) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
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

// Byte classes. unreservedKeep is RFC 3986's unreserved set. segmentKeep
// is what a path segment holds raw: the unreserved set, the
// sub-delimiters, ":" and "@". queryKeep is what a query holds raw: the
// same and "/" and "?"; "%" is handled apart. hostKeep is what a host name may hold raw
// after lower-casing (Go's parser also lets "<", ">", a double quote, "]"
// and a colon followed by a port through). zoneKeep is what an IPv6 zone
// holds raw.
var (
	unreservedKeep = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
	subDelims      = "!$&'()*+,;="
	segmentKeep    = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~" + subDelims + ":@")
	queryKeep      = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~" + subDelims + ":@/?")
	hostKeep       = byteSet("abcdefghijklmnopqrstuvwxyz0123456789-._~" + subDelims + "<>\"]:")
	zoneKeep       = highBytes(byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))

	// What the fast path accepts without looking further.
	plainHost = byteSet("abcdefghijklmnopqrstuvwxyz0123456789-.")
	plainPath = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~=&")
	// The bytes whose escape in a path the rewrite decodes.
	pathDecoded = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~" + subDelims + ":@/")
)

func byteSet(chars string) *[256]bool {
	var set [256]bool
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return &set
}

// highBytes adds the bytes at or above 0x80 to a set.
func highBytes(set *[256]bool) *[256]bool {
	for c := 0x80; c < 0x100; c++ {
		set[c] = true
	}
	return set
}

// LowerASCII returns s with the ASCII letters A-Z lower-cased and every
// other byte as it is, so offsets in the result are offsets in s. Unlike
// strings.ToLower it never turns a non-ASCII character into an ASCII one
// (U+0130 into "i", U+212A into "k"), which would make two host names that
// an HTTP client looks up differently compare equal. It allocates only
// when s holds an upper-case ASCII letter.
func LowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
