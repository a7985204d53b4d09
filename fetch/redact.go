package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/mcplrefs/refcore/internal/ascii"
)

// cause is why a request or a response body failed: words fit for the
// model (a fixed phrase naming the kind of failure) and the detail for the
// operator's log (the error's own text, with every uri reduced to its
// scheme and host and the reference's address, query and the token cut).
type cause struct {
	words  string
	detail string
}

// causeOf classifies err. The words never carry the error's own text,
// which can name addresses and ports.
func causeOf(err error, t target) cause {
	return cause{words: causeWords(err), detail: redacted(err, t)}
}

func causeWords(err error) string {
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		certErr *tls.CertificateVerificationError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, errNotResolved):
		return "the server's address was not one its connection resolved"
	case errors.As(err, &dnsErr):
		return "the server's host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was reset"
	case errors.As(err, &certErr), errors.As(err, &unkAuth), errors.As(err, &hostErr):
		return "the server's certificate was not accepted"
	case errors.As(err, &recErr):
		return "the secure connection could not be set up"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection closed early"
	case isTimeout(err):
		return "the connection timed out"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "the connection could not be made"
	}
	return "the connection failed"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redacted is err's text for the operator's log, with secrets cut.
func redacted(err error, t target) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	for _, secret := range secretsOf(t) {
		s = cutFold(s, secret)
	}
	s = urlPattern.ReplaceAllStringFunc(s, func(m string) string {
		if u, err := url.Parse(m); err == nil && u.Scheme != "" {
			return strings.ToLower(u.Scheme) + "://" + u.Host
		}
		return "…"
	})
	s = oneLine(s, 240)
	if s == "" {
		return "no reason was given"
	}
	return s
}

// secretsOf lists what a log detail must not carry of t, longest first so
// that a part is cut only where its whole was not: the reference's
// address, its query and fragment, the token, and, since a server may
// echo a piece of them, the address's path, each of its segments and each
// of the query's parameters and values, as written and decoded, when the
// piece looks like a secret rather than a word (see secretLike).
func secretsOf(t target) []string {
	var out []string
	for _, s := range []string{t.rec.URI, t.u.String(), t.u.RawQuery, t.u.Fragment, t.conn.Token} {
		if len(s) >= 3 {
			out = append(out, s)
		}
	}
	part := func(p string) {
		if secretLike(p) {
			out = append(out, p)
		}
		if u, err := url.PathUnescape(p); err == nil && u != p && secretLike(u) {
			out = append(out, u)
		}
	}
	part(t.u.EscapedPath())
	for seg := range strings.SplitSeq(t.u.EscapedPath(), "/") {
		part(seg)
	}
	for pair := range strings.FieldsFuncSeq(t.u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		part(pair)
		if _, v, ok := strings.Cut(pair, "="); ok {
			part(v)
			if u, err := url.QueryUnescape(v); err == nil {
				part(u)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// secretLike reports whether a piece of an address is worth cutting from
// a log detail: at least 12 bytes, or at least 6 with something other
// than ASCII letters in it ("capability-77", "/files/x") or with an
// upper-case letter after a lower-case one ("hgTqWkPzRx"), as random
// tokens have. Shorter pieces and plain words ("unexpected", "Refused")
// are what a cause's own text says, which cutting them would lose.
func secretLike(p string) bool {
	if len(p) >= 12 {
		return true
	}
	if len(p) < 6 {
		return false
	}
	lower := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			if lower {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// cutFold replaces each occurrence of secret in s with "…", matching
// ASCII letters in either case: a server may echo a value upper-cased, or
// its percent escapes in lower case. ascii.Lower keeps every byte's
// offset, so a match in the lower-cased text is cut from s itself.
func cutFold(s, secret string) string {
	if secret == "" {
		return s
	}
	low, want := ascii.Lower(s), ascii.Lower(secret)
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(low[i:], want)
		if j < 0 {
			break
		}
		b.WriteString(s[last : i+j])
		b.WriteString("…")
		i += j + len(want)
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>]*`)
