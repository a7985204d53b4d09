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
		s = strings.ReplaceAll(s, secret, "…")
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
// echo a piece of them, the address's path and each of the query's
// parameters and values, as written and decoded, from partMin bytes on.
func secretsOf(t target) []string {
	secrets := []string{t.rec.URI, t.u.String(), t.u.RawQuery, t.u.Fragment, t.conn.Token}
	parts := []string{t.u.EscapedPath(), t.u.Path}
	for pair := range strings.FieldsFuncSeq(t.u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		parts = append(parts, pair)
		if _, v, ok := strings.Cut(pair, "="); ok {
			parts = append(parts, v)
			if u, err := url.QueryUnescape(v); err == nil {
				parts = append(parts, u)
			}
		}
	}
	out := secrets[:0]
	for _, s := range secrets {
		if len(s) >= 3 {
			out = append(out, s)
		}
	}
	for _, s := range parts {
		if len(s) >= partMin {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// partMin is the shortest piece of an address that [secretsOf] lists:
// shorter ones ("/", "n=1") are words a cause's text holds for itself.
const partMin = 6

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>]*`)
