package fetch

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/mcplrefs/refcore/convert"
)

// Defaults a zero [Config] gets.
const (
	// DefaultMaxBytes is a call's max bytes when neither the call nor the
	// Config sets one. A call may lower it or raise it up to the ceiling.
	DefaultMaxBytes int64 = 64 << 20
	// DefaultCeiling is the host ceiling: no call goes past it.
	DefaultCeiling int64 = 256 << 20
	// DefaultBudget is each server's budget of decoded bytes per budget
	// window.
	DefaultBudget int64 = 1 << 30
	// DefaultBudgetWindow is how long a budget lasts before it renews.
	DefaultBudgetWindow = 24 * time.Hour
	// DefaultTimeout is a call's deadline.
	DefaultTimeout = 60 * time.Second
	// DefaultEagerCeiling is the largest claimed size [Fetcher.EagerPlan]
	// picks.
	DefaultEagerCeiling int64 = 1 << 20
	// DefaultEagerCap is how many references one eager plan picks at most.
	DefaultEagerCap = 8
	// DefaultChunkSize is the streaming buffer size, the fastest in
	// BenchmarkFetchChunk (against 32 KiB: 1,426 against 1,298 MB/s).
	DefaultChunkSize = 128 << 10
	// MaxChunkSize is the largest ChunkSize [New] accepts.
	MaxChunkSize = 16 << 20
)

// Config sets up a [Fetcher]. Its zero value is the safe default for every
// field: references a server marked never are not fetched for the model,
// and every size and time is bounded. A zero number means the default; a
// negative one is an error in [New], never "unlimited".
type Config struct {
	// MaxBytes is a call's max bytes of decoded content when the call sets
	// none. Zero means DefaultMaxBytes; a value above the ceiling means
	// the ceiling.
	MaxBytes int64
	// Ceiling is the host ceiling on one reference's decoded bytes. It is
	// checked before the budget and the call's max bytes, and no call
	// raises it. Zero means DefaultCeiling.
	Ceiling int64
	// Budget is each server's budget of decoded bytes per BudgetWindow,
	// across all fetches of this Fetcher. Zero means DefaultBudget.
	Budget int64
	// BudgetWindow is how long a server's budget lasts; a window begins
	// with the first bytes fetched through the server, and when it ends,
	// the server's spent total starts again from zero. Zero means
	// DefaultBudgetWindow.
	BudgetWindow time.Duration
	// Timeout is a call's deadline when the call sets none. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// EagerCeiling is the largest claimed size [Fetcher.EagerPlan] picks.
	// Zero means DefaultEagerCeiling.
	EagerCeiling int64
	// EagerCap is how many references one eager plan picks at most. Zero
	// means DefaultEagerCap.
	EagerCap int
	// FetchNever makes the fetcher fetch and save references a server
	// marked never for every caller, as RFC-005's conformance vectors
	// expect of a host under test. Leave it off in a host that serves a
	// model: with it off, such a reference is fetched only by a request
	// that sets [Request.ForHost]. With it on, the model may be given the
	// path of a copy in HostStore.
	FetchNever bool
	// HostStore, if set, keeps copies of references a server marked never
	// apart from the store passed to [New], whose paths the stubs of other
	// copies show. A download of a reference known to be marked never when
	// it starts (in the registry, or in its mark store), such as one a
	// [Request.ForHost] fetches, goes to HostStore; a copy going to the
	// shared store is never recorded on a record marked never. Give
	// HostStore a place the model and its tools cannot read, give every
	// Fetcher of one registry the same HostStore, and set the registry's
	// Remover (refs.Config.Remover) to [Removers] of the shared store and
	// HostStore, so that a mark reaching a copy saved earlier in the shared
	// store removes it, and a copy that a new digest makes stale goes from
	// whichever store holds it.
	//
	// A mark that lands once a download into the shared store has begun
	// stops it, within about 20 ms even while the server sends nothing:
	// once it is seen no write begins, not even of bytes already read
	// (one under way finishes), the copy is discarded and every caller
	// fails, the host's with a remedy of trying again, which then saves
	// to HostStore. A mark
	// made by another host is asked for when the download starts and
	// again before the commit; one learned only then has let the shared
	// store receive bytes it discards. A mark landing as the copy is
	// committed is met by removing the copy. While the mark store cannot
	// be read, a download goes to HostStore, and unless a mark is known by
	// the time it is saved, the copy is removed and the fetch fails with a
	// remedy of trying later: a record not marked never may not name a
	// copy there. A mark store that stops answering while a download goes
	// to the shared store fails that download too, the host's included,
	// with the same remedy. Under FetchNever every caller counts as the
	// host's, so the model may be given a path in HostStore.
	//
	// Nil means such copies go to the shared store like any other. With
	// HostStore set, [New] requires both stores to be [refs.Remover]s. It
	// refuses the shared store itself and, for [DirStore]s (or types that
	// embed one), a host directory opened beneath the shared one, or two
	// directories one of which holds the other once links are resolved.
	// It does not catch a link inside the shared directory that leads to
	// the host's, a bind mount, or other store types naming one place:
	// keep links out of the shared directory.
	HostStore Store
	// Client is the HTTP client to fetch with. The Fetcher copies it and
	// never changes the caller's value; the copy never follows redirects,
	// has no cookie jar (so it neither sends nor keeps cookies, at any
	// origin), and a nil Transport is replaced by the default one. Nil
	// means a client with no proxy from the environment, no redirects, no
	// cookies, bounded dial and TLS handshake times, response headers
	// bounded to 64 KiB, up to 16 idle connections kept per server (so
	// concurrent fetches from one server reuse their connections) and no
	// transparent decompression.
	Client *http.Client
	// Logger receives the operator's lines: every refusal and failure with
	// its detail, and every fetched copy. Nil discards them.
	Logger *slog.Logger
	// Now is the clock that judges expiry and budget windows. Nil means
	// time.Now. Deadlines always use the real clock. A host that sets it
	// sets the converter's clock (convert.Policy.Now) to the same.
	Now func() time.Time
	// ChunkSize is the streaming buffer size in bytes. A download holds
	// about 1 MiB of such buffers (two, when a chunk is larger), whatever
	// the payload's size. Zero means DefaultChunkSize; past MaxChunkSize
	// it is an error.
	ChunkSize int
}

// Servers resolves an MCPL server's name to how the host reaches it.
// Implementations must be safe for concurrent use.
type Servers interface {
	// Server returns the connection details of the named server. For a
	// server the host no longer has it returns an error wrapping
	// [CodeUnknownServer]; for a server reached without a network address
	// (stdio) one wrapping [CodeNoNetworkAddress], unless the host allows
	// other origins for that server's references: then it returns a
	// Server with an empty Origin and those origins in
	// [Server.UnauthenticatedOrigins]. Another error is logged for the
	// operator and never shown to the model.
	Server(name string) (Server, error)
}

// ServersFunc adapts a function to [Servers].
type ServersFunc func(name string) (Server, error)

// Server calls f(name).
func (f ServersFunc) Server(name string) (Server, error) { return f(name) }

// Server is how the host reached one MCPL server, and where the host lets
// that server's references be fetched from.
type Server struct {
	// Origin is the URL the host dialed the MCPL connection at, such as
	// "https://h:8443/mcpl" or "ws://127.0.0.1:9/x". Only its scheme, host
	// and port count; ws compares as http and wss as https. An empty
	// Origin means the server has no network address.
	Origin string
	// Token is the connection's bearer credential, or "" for none. It is
	// sent only to Origin's origin (the same scheme, host and port) and
	// never logged or reported; no other origin gets it, not even one in
	// UnauthenticatedOrigins on the same host.
	Token string
	// Addrs optionally lists the addresses the MCPL connection resolved.
	// When set, the fetcher dials only these for a reference at Origin's
	// origin, so DNS rebinding cannot send an origin-bound request to
	// another machine. They do not apply to UnauthenticatedOrigins, whose
	// host names resolve as usual.
	Addrs []netip.Addr
	// UnauthenticatedOrigins lists other origins, such as a CDN, from which
	// the host lets this server's references be fetched with no
	// credential: no bearer token, no cookie, no user name or password
	// (what a host-supplied transport adds itself, such as a TLS client
	// certificate, is the host's to configure). It is the host's own
	// policy; never fill it from what a server declares about itself.
	//
	// Each entry is a serialized origin, such as "https://cdn.example" or
	// "http://10.0.0.7:8080": the scheme http or https, an ASCII host name
	// or IP address, an optional port, and nothing more (no user name, no
	// path, not even a trailing slash, no query and no fragment); ws and
	// wss are not accepted here. A reference matches an entry with the
	// same scheme, host (compared without regard to case) and port (the
	// scheme's default when none is written). An entry that does not read
	// this way makes every fetch of this server's references fail; the
	// operator's log gives the entry's position and fault, never the entry
	// itself. An entry equal to Origin's origin changes nothing: references
	// there are still fetched with Token.
	//
	// A fetch from one of these origins passes every other check
	// unchanged: redirects are refused, the ceilings and the digest apply,
	// and its bytes count against this server's budget. Empty means
	// references are fetched only from Origin's origin. It may be set for
	// a server with no Origin (stdio): then only references at these
	// origins are fetchable, all without credentials.
	UnauthenticatedOrigins []string
}

// Request is one call's own settings.
type Request struct {
	// MaxBytes bounds the decoded bytes of this call. Zero means
	// Config.MaxBytes; a value above the host ceiling means the ceiling; a
	// negative value is refused with [CodeInvalidRequest].
	MaxBytes int64
	// Timeout is this call's deadline. Zero means Config.Timeout; a
	// negative value is refused with [CodeInvalidRequest].
	Timeout time.Duration
	// ForHost says the host itself will use the bytes (to play audio to
	// its user, say), never the model or its tools. Such a request fetches
	// a reference a server marked never; the copy is recorded, but no
	// view names it and no request for the model is served from it. The
	// copy of such a reference goes to Config.HostStore when one is set
	// (a copy of any other reference goes to the shared store, and views
	// and the model may be given it); a fetch whose reference is marked
	// while its copy goes to the shared store then fails, with a remedy of
	// trying again. Without HostStore the copy goes to the fetcher's Store
	// under the record's id, as every copy does, and the model sees both
	// the id and, in the stubs of other saved copies, the store's
	// directory: a host whose model can read files should set HostStore.
	ForHost bool
	// Progress, if set, is called as bytes arrive with the decoded bytes
	// so far and the reference's claimed size (-1 when it claims none).
	// It runs on the download's goroutine and must return quickly: while
	// it runs the download stands still, and the call that passed it may
	// not return, even past its deadline, until it does. A panic in
	// Progress is logged, each time, and the fetch goes on.
	Progress func(got, claimed int64)
}

// Result describes a fetched copy: the facts the bytes verified, and
// whether they were served from a copy saved earlier without dialing.
type Result struct {
	convert.Copy
	// FromCopy is set when the result is a copy saved earlier: nothing was
	// dialed, or another fetcher of the registry saved the copy while this
	// one downloaded, and the bytes this one read were discarded.
	FromCopy bool
}

// settings is a Config with every default applied.
type settings struct {
	maxBytes     int64
	ceiling      int64
	budget       int64
	window       time.Duration
	timeout      time.Duration
	eagerCeiling int64
	eagerCap     int
	chunk        int
	wireCeiling  int64
}

// ErrBadConfig is matched (errors.Is) by every error [New] returns: a nil
// argument or a [Config] it refuses. The error's text names the field.
var ErrBadConfig = errors.New("fetch: bad config")

func resolve(cfg Config) (settings, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBytes", cfg.MaxBytes}, {"Ceiling", cfg.Ceiling}, {"Budget", cfg.Budget},
		{"BudgetWindow", int64(cfg.BudgetWindow)}, {"Timeout", int64(cfg.Timeout)},
		{"EagerCeiling", cfg.EagerCeiling}, {"EagerCap", int64(cfg.EagerCap)}, {"ChunkSize", int64(cfg.ChunkSize)},
	} {
		if f.v < 0 {
			return settings{}, fmt.Errorf("%w: %s is negative", ErrBadConfig, f.name)
		}
	}
	if cfg.ChunkSize > MaxChunkSize {
		return settings{}, fmt.Errorf("%w: ChunkSize %d is past MaxChunkSize (%d)", ErrBadConfig, cfg.ChunkSize, MaxChunkSize)
	}
	s := settings{
		maxBytes:     orDefault(cfg.MaxBytes, DefaultMaxBytes),
		ceiling:      orDefault(cfg.Ceiling, DefaultCeiling),
		budget:       orDefault(cfg.Budget, DefaultBudget),
		window:       orDefault(cfg.BudgetWindow, DefaultBudgetWindow),
		timeout:      orDefault(cfg.Timeout, DefaultTimeout),
		eagerCeiling: orDefault(cfg.EagerCeiling, DefaultEagerCeiling),
		eagerCap:     orDefault(cfg.EagerCap, DefaultEagerCap),
		chunk:        orDefault(cfg.ChunkSize, DefaultChunkSize),
	}
	s.maxBytes = min(s.maxBytes, s.ceiling)
	// Encoded bytes beyond what any limit lets a download decode are
	// refused too (see flight.readCap); a Ceiling near math.MaxInt64
	// means no limit (wireAllowance saturates).
	s.wireCeiling = wireAllowance(s.ceiling)
	return s, nil
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// callMax returns the max bytes a call gets, or a failure for a negative
// one.
func (s settings) callMax(req int64) (int64, *Failure) {
	switch {
	case req < 0:
		return 0, failNegativeMax(req)
	case req == 0:
		return s.maxBytes, nil
	}
	return min(req, s.ceiling), nil
}

// callTimeout returns the deadline a call gets, or a failure for a
// negative one.
func (s settings) callTimeout(req time.Duration) (time.Duration, *Failure) {
	switch {
	case req < 0:
		return 0, fail(CodeInvalidRequest, "", "the call asked for a negative timeout")
	case req == 0:
		return s.timeout, nil
	}
	return req, nil
}
