package fetch

import (
	"log/slog"
	"net/http"
	"net/netip"
	"time"
)

// Defaults a zero [Config] gets.
const (
	// DefaultMaxBytes is a call's max bytes when neither the call nor the
	// Config sets one. A call may lower it or raise it up to the ceiling.
	DefaultMaxBytes int64 = 64 << 20
	// DefaultCeiling is the host ceiling: no call goes past it.
	DefaultCeiling int64 = 256 << 20
	// DefaultBudget is each server's budget of decoded bytes per process.
	DefaultBudget int64 = 1 << 30
	// DefaultTimeout is a call's deadline.
	DefaultTimeout = 60 * time.Second
	// DefaultEagerCeiling is the largest claimed size [Fetcher.EagerPlan]
	// picks.
	DefaultEagerCeiling int64 = 1 << 20
	// DefaultEagerCap is how many references one eager plan picks at most.
	DefaultEagerCap = 8
	// DefaultChunkSize is the streaming buffer size.
	DefaultChunkSize = 32 << 10
)

// Config sets up a [Fetcher]. Its zero value is the documented safe
// default for every field; a negative value means "unlimited" or "off" only
// where a field says so.
type Config struct {
	// MaxBytes is a call's max bytes of decoded content when the call sets
	// none. Zero means DefaultMaxBytes; a negative value, or one above the
	// ceiling, means the ceiling.
	MaxBytes int64
	// Ceiling is the host ceiling on one reference's decoded bytes. It is
	// checked before the budget and the call's max bytes, and no call
	// raises it. Zero means DefaultCeiling. A negative value panics in New:
	// there is no unlimited ceiling.
	Ceiling int64
	// Budget is each server's budget of decoded bytes across all fetches
	// of this Fetcher. It does not renew unless the host calls
	// [Fetcher.RenewBudget]. Zero means DefaultBudget; negative means no
	// budget.
	Budget int64
	// Timeout is a call's deadline when the call sets none. Zero means
	// DefaultTimeout; negative means the fetcher sets no deadline of its
	// own, and only the caller's context bounds a call.
	Timeout time.Duration
	// EagerCeiling is the largest claimed size [Fetcher.EagerPlan] picks.
	// Zero means DefaultEagerCeiling; negative turns eager fetching off.
	EagerCeiling int64
	// EagerCap is how many references one eager plan picks at most. Zero
	// means DefaultEagerCap; negative turns eager fetching off.
	EagerCap int
	// Client is the HTTP client to fetch with. The Fetcher copies it and
	// never changes the caller's value; the copy never follows redirects,
	// and a nil Transport is replaced by the default one below. Nil means a
	// client with no proxy from the environment, no redirects, bounded
	// dial and TLS handshake times, response headers bounded to 64 KiB and
	// no transparent decompression.
	Client *http.Client
	// Logger receives the operator lines (O1). Nil discards them.
	Logger *slog.Logger
	// Now is the clock that judges expiry. Nil means time.Now. Deadlines
	// always use the real clock.
	Now func() time.Time
	// Withhold, if set, makes the fetcher refuse never-marked references
	// (F18). *refs.Registry satisfies it. Nil is the conformance profile: a
	// never reference is fetched like any other.
	Withhold Withholder
	// ChunkSize is the streaming buffer size in bytes; memory per flight
	// stays bounded by it. Zero or less means DefaultChunkSize.
	ChunkSize int
}

// Withholder reports whether a server's never marks a uri, whatever
// record now holds it. *refs.Registry satisfies it. Implementations must be
// safe for concurrent use and cheap: the fetcher asks once per chunk.
type Withholder interface {
	Marked(uri string) bool
}

// Servers resolves an MCPL server's name to how the host reaches it.
// Implementations must be safe for concurrent use.
type Servers interface {
	// Server returns the connection details of the named server. For a
	// server the host no longer has it returns an error wrapping
	// [ErrUnknownServer]; for a server reached without a network address
	// (stdio) one wrapping [ErrNoNetworkAddress]. The error's text is
	// neither logged nor shown.
	Server(name string) (Server, error)
}

// ServersFunc adapts a function to [Servers].
type ServersFunc func(name string) (Server, error)

// Server calls f(name).
func (f ServersFunc) Server(name string) (Server, error) { return f(name) }

// Server is how the host reached one MCPL server.
type Server struct {
	// Origin is the URL the host dialed the MCPL connection at, such as
	// "https://h:8443/mcpl" or "ws://127.0.0.1:9/x". Only its scheme, host
	// and port count; ws compares as http and wss as https. An empty
	// Origin means the server has no network address.
	Origin string
	// Token is the connection's bearer credential, or "" for none. It is
	// sent only to Origin's origin (F3) and never logged or reported.
	Token string
	// Addrs optionally lists the addresses the MCPL connection resolved.
	// When set, the fetcher dials only these (F21), so DNS rebinding cannot
	// send an origin-bound request to another machine.
	Addrs []netip.Addr
}

// Request is one call's own limits.
type Request struct {
	// MaxBytes bounds the decoded bytes of this call. Zero means
	// Config.MaxBytes; a negative value, or one above the host ceiling,
	// means the host ceiling.
	MaxBytes int64
	// Timeout is this call's deadline. Zero or less means Config.Timeout.
	Timeout time.Duration
}

// Result describes a fetched copy. Every field comes from the bytes, not
// from testimony.
type Result struct {
	// Path is where the store put the copy (host-generated).
	Path string
	// Bytes is the decoded byte count.
	Bytes int64
	// MimeType is the observed media type (F9), such as "audio/wav".
	MimeType string
	// DigestVerified is set when a claimed digest matched the bytes.
	DigestVerified bool
	// FromCopy is set when the result is a copy saved earlier and nothing
	// was dialed (F16).
	FromCopy bool
}

// settings is a Config with every default applied.
type settings struct {
	maxBytes     int64
	ceiling      int64
	budget       int64 // < 0: none
	timeout      time.Duration
	eagerCeiling int64 // < 0: off
	eagerCap     int   // < 0: off
	chunk        int
	wireCeiling  int64
}

func resolve(cfg Config) settings {
	s := settings{
		maxBytes:     cfg.MaxBytes,
		ceiling:      cfg.Ceiling,
		budget:       cfg.Budget,
		timeout:      cfg.Timeout,
		eagerCeiling: cfg.EagerCeiling,
		eagerCap:     cfg.EagerCap,
		chunk:        cfg.ChunkSize,
	}
	if s.ceiling < 0 {
		panic("fetch: negative Ceiling; there is no unlimited ceiling")
	}
	if s.ceiling == 0 {
		s.ceiling = DefaultCeiling
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxBytes
	}
	if s.maxBytes < 0 || s.maxBytes > s.ceiling {
		s.maxBytes = s.ceiling
	}
	if s.budget == 0 {
		s.budget = DefaultBudget
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	if s.eagerCeiling == 0 {
		s.eagerCeiling = DefaultEagerCeiling
	}
	if s.eagerCap == 0 {
		s.eagerCap = DefaultEagerCap
	}
	if s.chunk <= 0 {
		s.chunk = DefaultChunkSize
	}
	// Encoded bytes may exceed decoded ones only by a coding's overhead; a
	// stream that sends far more (endless empty gzip members) is stopped.
	s.wireCeiling = s.ceiling + s.ceiling/64 + 64<<10
	return s
}

// callMax returns the max bytes a call with the given request gets.
func (s settings) callMax(req int64) int64 {
	switch {
	case req == 0:
		return s.maxBytes
	case req < 0 || req > s.ceiling:
		return s.ceiling
	}
	return req
}

// callTimeout returns the deadline a call gets; zero means none.
func (s settings) callTimeout(req time.Duration) time.Duration {
	if req > 0 {
		return req
	}
	if s.timeout < 0 {
		return 0
	}
	return s.timeout
}
