package uriform

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzCanonical checks the two promises of the key form on arbitrary text:
//
//   - it is idempotent, and an http(s) URL's rebuilt form rebuilds to
//     itself without the fallback having to step in;
//   - two uris that Go's HTTP client sends as the same request line to the
//     same origin share one key. Arbitrary pairs almost never match, so
//     each input is paired with respellings of itself: those the client
//     sends unchanged are checked against the client, and those the key
//     merges by rule (dot segments, an empty query, ...) are checked
//     whenever both spellings can be sent at all.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"https://a.example/p", "HTTP://X:80/%7e", "", "%zz", "http://[::1]:80/",
		// The examples.
		"https://h/secret#x", "https://h/secret?", "https://h:/secret", "https://h/x/../secret",
		"https://h//secret", "https://h/p? #",
		"https://h.example/a%2fb?x=%3d#f", "https://bücher.example/p", "https://[fe80::1%25Eth0]:0443/",
		"https://u:p@h/a", "https://h/caf%C3%A9?q=é", "https://h/a!b c", "http://h./..//a/%2E%2E/b?",
		// Hosts an outside review keyed apart from, or together with,
		// what the client looks up.
		"http://fa\u00df.test/", "http://\u03c3\u03bf\u03c6\u03bf\u03c2.test/", "http://\u0130_x.\u00fc/doc",
		"http://%FF.test/", "http://[fe80::1%25ETH0]:8080/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Canonical(s)
		if again := Canonical(c); again != c {
			t.Fatalf("not idempotent: %+q -> %+q -> %+q", s, c, again)
		}
		trimmed := strings.TrimFunc(s, invisibleOrSpace)
		if w, ok := webForm(trimmed); ok {
			if again, ok := webForm(w); !ok || again != w || strings.TrimFunc(w, invisibleOrSpace) != w {
				t.Errorf("the rebuilt form of %+q is %+q, which rebuilds to %+q (%t)", s, w, again, ok)
			}
		}
		req, ok := sentAs(s)
		if !ok {
			return
		}
		for _, v := range respell(s) {
			vreq, ok := sentAs(v.uri)
			if !ok {
				continue
			}
			if !v.byRule && vreq != req {
				continue
			}
			if kv := Canonical(v.uri); kv != c {
				t.Errorf("%s: %+q and %+q (sent as %q and %q) have keys %+q and %+q",
					v.how, s, v.uri, req, vreq, c, kv)
			}
		}
	})
}

// sentAs describes the request Go's HTTP client makes for a uri: origin
// (scheme, host with its ASCII letters lower-cased, port with the default
// filled in) and request line. It reports false when the client would make none, for uris with
// user information, which the key keeps apart on purpose (the fetcher
// refuses them before any request), and for uris whose host name is empty
// or made only of dots, white space and invisible characters, which the
// key leaves as text (no such name can be looked up).
func sentAs(uri string) (string, bool) {
	req, err := http.NewRequest(http.MethodGet, uri, nil)
	if err != nil || req.URL.User != nil || strings.TrimFunc(req.URL.Hostname(), dotOrBlank) == "" {
		return "", false
	}
	scheme := req.URL.Scheme
	port := strings.TrimLeft(req.URL.Port(), "0")
	if port == "" && req.URL.Port() != "" {
		port = "0"
	}
	switch {
	case scheme == "http" && port == "":
		port = "80"
	case scheme == "https" && port == "":
		port = "443"
	case scheme != "http" && scheme != "https":
		return "", false
	}
	// The name is compared as a resolver compares it: ASCII letters in
	// any case, every other byte as it is, and an IPv6 zone (an interface
	// name) in its case.
	host := LowerASCII(req.URL.Hostname())
	if addr, zone, ok := strings.Cut(req.URL.Hostname(), "%"); ok && strings.HasPrefix(req.URL.Host, "[") {
		host = LowerASCII(addr) + "%" + zone
	}
	return scheme + "://" + host + " port " + port + " " + req.URL.RequestURI(), true
}

type respelling struct {
	how    string
	uri    string
	byRule bool // merged by the key's rules, not by the client
}

// respell returns spellings of uri that name the same resource.
func respell(uri string) []respelling {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil
	}
	// Split the raw text: scheme "://" authority path ["?" query] ["#" fragment].
	schemeEnd := strings.Index(uri, "://")
	if schemeEnd < 0 {
		return nil
	}
	scheme, rest := uri[:schemeEnd], uri[schemeEnd+3:]
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]
	pathEnd := strings.IndexAny(tail, "?#")
	if pathEnd < 0 {
		pathEnd = len(tail)
	}
	path, after := tail[:pathEnd], tail[pathEnd:]
	userinfo, hostport := "", auth
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo, hostport = auth[:at+1], auth[at+1:]
	}
	hasPort := u.Port() != "" || strings.HasSuffix(hostport, ":")
	bare := strings.TrimSuffix(hostport, ":"+u.Port())
	bare = strings.TrimSuffix(bare, ":")
	defaultPort := map[string]string{"http": "80", "https": "443"}[u.Scheme]

	join := func(scheme, auth, path, after string) string { return scheme + "://" + auth + path + after }
	var out []respelling
	add := func(how string, byRule bool, v string) {
		if v != uri {
			out = append(out, respelling{how, v, byRule})
		}
	}
	add("upper-case scheme", false, join(strings.ToUpper(scheme), auth, path, after))
	add("upper-case host", false, join(scheme, userinfo+strings.ToUpper(hostport), path, after))
	add("fragment", false, uri+"#frag")
	if !hasPort {
		add("empty port", false, join(scheme, auth+":", path, after))
		add("default port", byRuleOnly, join(scheme, auth+":"+defaultPort, path, after))
		add("padded default port", byRuleOnly, join(scheme, auth+":0"+defaultPort, path, after))
	} else if u.Port() == defaultPort && (strings.HasPrefix(hostport, "[") || !strings.Contains(u.Hostname(), ":")) {
		// (Without the port, a host name holding a colon would read as
		// another name.)
		add("no port", byRuleOnly, join(scheme, userinfo+bare, path, after))
	}
	add("escaped non-ASCII host", false, join(scheme, userinfo+escapeHigh(hostport), path, after))
	add("raw non-ASCII path", false, join(scheme, auth, unescapeHigh(path), after))
	add("path escaped whole", false, join(scheme, auth, (&url.URL{Path: u.Path}).EscapedPath(), after))
	add("path with sub-delimiters escaped", byRuleOnly, join(scheme, auth, escapeSubDelims(path), after))
	if !u.ForceQuery && u.RawQuery == "" {
		add("empty query", byRuleOnly, join(scheme, auth, path, "?"+after))
	}
	if path == "" || path[0] == '/' {
		add("dot segment", byRuleOnly, join(scheme, auth, "/."+path, after))
		add("dot-dot segment", byRuleOnly, join(scheme, auth, "/x/.."+path, after))
		add("escaped dot-dot segment", byRuleOnly, join(scheme, auth, "/x/%2E%2e"+path, after))
		if path != "" {
			add("empty segment", byRuleOnly, join(scheme, auth, "/"+path, after))
		}
	}
	add("escaped unreserved", byRuleOnly, join(scheme, auth, escapeFirstLetter(path), after))
	add("flipped hex case", byRuleOnly, join(scheme, auth, flipHex(path), flipHex(after)))
	add("surroundings", byRuleOnly, " \u200b"+uri+"\ufeff\n")
	if u.Port() == "" && !strings.HasSuffix(hostport, ":") && !strings.HasPrefix(hostport, "[") {
		add("trailing dot", byRuleOnly, join(scheme, userinfo+hostport+".", path, after))
	}
	return out
}

const byRuleOnly = true

// escapeHigh percent-encodes the bytes of s at or above 0x80.
func escapeHigh(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			writeEscape(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeHigh decodes the escapes in s of bytes at or above 0x80.
func unescapeHigh(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) && unhex(s[i+1]) >= 8 {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeFirstLetter percent-encodes the first ASCII letter of s that is
// not part of an escape.
func escapeFirstLetter(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			i += 2
			continue
		}
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			var b strings.Builder
			b.WriteString(s[:i])
			writeEscape(&b, c)
			b.WriteString(s[i+1:])
			return b.String()
		}
	}
	return s
}

// flipHex swaps the case of the hex letters in every escape of s.
func flipHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			for _, j := range []int{i + 1, i + 2} {
				switch c := b[j]; {
				case 'a' <= c && c <= 'f':
					b[j] = c - 'a' + 'A'
				case 'A' <= c && c <= 'F':
					b[j] = c - 'A' + 'a'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// escapeSubDelims percent-encodes the sub-delimiters in s.
func escapeSubDelims(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(subDelims, c) >= 0 {
			writeEscape(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
