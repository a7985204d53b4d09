package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"regexp"
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
	for _, secret := range []string{t.rec.URI, t.u.String(), t.u.RawQuery, t.u.Fragment, t.conn.Token} {
		if len(secret) >= 3 {
			s = strings.ReplaceAll(s, secret, "…")
		}
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

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>]*`)
