package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxResponseHeaderBytes bounds a response's headers under the default
// transport.
const maxResponseHeaderBytes = 64 << 10

func newDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
}

// defaultTransport is the transport a nil Config.Client (or a client with
// a nil Transport) gets: no proxy from the environment, bounded dial and
// handshake times, bounded response headers, up to 16 idle connections
// kept per server, and no transparent decompression (the fetcher decodes
// gzip itself, counting decoded bytes).
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:             nil,
		DialContext:       newDialer().DialContext,
		ForceAttemptHTTP2: true,
		MaxIdleConns:      64,
		// The standard transport keeps two idle connections per host, so
		// a host fetching eight references from one server at once dialed
		// six of them again for its next eight (BenchmarkHostFlow/
		// fetchers=8; TestConcurrentFetchesReuseConnections).
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		DisableCompression:     true,
	}
}

// refuseRedirects makes a client hand back a redirect response instead of
// following it.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// baseClient copies the host's client (never changing it) or builds the
// default one. own reports whether the transport is the package's.
func baseClient(c *http.Client) (client *http.Client, own bool) {
	if c == nil {
		return &http.Client{Transport: defaultTransport(), CheckRedirect: refuseRedirects}, true
	}
	cp := *c
	cp.CheckRedirect = refuseRedirects
	if cp.Transport == nil {
		cp.Transport = defaultTransport()
		own = true
	}
	return &cp, own
}

// errNotResolved is the dial error for an address the MCPL connection did
// not resolve.
var errNotResolved = errors.New("fetch: the address is not one the server's connection resolved")

// pinned keeps one client per set of allowed addresses.
type pinned struct {
	mu      sync.Mutex
	base    *http.Client
	own     bool
	clients map[string]*http.Client
}

const pinnedBound = 32

// clientFor returns a client that dials only addrs, or the base client when
// addrs is empty. ok is false when the base client's transport cannot be
// pinned (it is not an *http.Transport).
func (p *pinned) clientFor(addrs []netip.Addr) (*http.Client, bool) {
	if len(addrs) == 0 {
		return p.base, true
	}
	allowed := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		allowed = append(allowed, a.Unmap())
	}
	slices.SortFunc(allowed, func(a, b netip.Addr) int { return a.Compare(b) })
	allowed = slices.Compact(allowed)
	keys := make([]string, len(allowed))
	for i, a := range allowed {
		keys[i] = a.String()
	}
	key := strings.Join(keys, ",")

	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[key]; c != nil {
		return c, true
	}
	t, ok := p.base.Transport.(*http.Transport)
	if !ok {
		return nil, false
	}
	t = t.Clone()
	// A proxy would receive the connection instead of the server, which
	// defeats the pin.
	t.Proxy = nil
	isAllowed := func(a netip.Addr) bool {
		_, found := slices.BinarySearchFunc(allowed, a.Unmap(), func(x, y netip.Addr) int { return x.Compare(y) })
		return found
	}
	if p.own || t.DialContext == nil {
		d := newDialer()
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !isAllowed(ap.Addr()) {
				return errNotResolved
			}
			return nil
		}
		t.DialContext = d.DialContext
	} else {
		t.DialContext = checkAfterDial(t.DialContext, isAllowed)
	}
	// net/http still calls the deprecated DialTLS when DialTLSContext
	// is unset, so a host's DialTLS is checked the same way. (The
	// deprecated Dial needs nothing: DialContext, set above, comes first.)
	//lint:ignore SA1019 a host transport may still set the deprecated field
	if dialTLS := t.DialTLS; t.DialTLSContext == nil && dialTLS != nil {
		t.DialTLSContext = func(_ context.Context, network, addr string) (net.Conn, error) {
			return dialTLS(network, addr)
		}
		t.DialTLS = nil //lint:ignore SA1019 cleared, as its checked form replaces it
	}
	if t.DialTLSContext != nil {
		t.DialTLSContext = checkAfterDial(t.DialTLSContext, isAllowed)
	}
	c := *p.base
	c.Transport = t
	if p.clients == nil {
		p.clients = make(map[string]*http.Client)
	}
	if len(p.clients) >= pinnedBound {
		for k, old := range p.clients {
			old.CloseIdleConnections()
			delete(p.clients, k)
			break
		}
	}
	p.clients[key] = &c
	return &c, true
}

// closeIdle closes the idle connections of the base client when its
// transport is the package's, and of every pinned client.
func (p *pinned) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.own {
		p.base.CloseIdleConnections()
	}
	for _, c := range p.clients {
		c.CloseIdleConnections()
	}
}

// checkAfterDial wraps a host's own dial function: it cannot see the
// address before the connection, so it closes any connection whose peer is
// not allowed, before a byte is written.
func checkAfterDial(dial func(ctx context.Context, network, addr string) (net.Conn, error), allowed func(netip.Addr) bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		ap, perr := netip.ParseAddrPort(conn.RemoteAddr().String())
		if perr != nil || !allowed(ap.Addr()) {
			conn.Close()
			return nil, errNotResolved
		}
		return conn, nil
	}
}
