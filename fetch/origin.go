package fetch

import (
	"net"
	"net/url"
	"strings"

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
	host := strings.ToLower(u.Hostname())
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
