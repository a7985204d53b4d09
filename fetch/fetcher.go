package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/nilness"
	"github.com/mcplrefs/refcore/refs"
)

// Fetcher fetches the payloads of references on the host's behalf. It is
// safe for concurrent use by multiple goroutines; concurrent fetches of one
// record share one download. The zero Fetcher is not usable; make one with
// [New].
type Fetcher struct {
	reg        *refs.Registry
	servers    Servers
	store      Store
	hostStore  Store // nil: copies of never references go to store
	set        settings
	log        *slog.Logger
	now        func() time.Time
	fetchNever bool
	clients    pinned

	mu      sync.Mutex
	flights map[string]*flight // by record id

	bmu     sync.Mutex
	budgets map[string]*budget // by server name
	sweepAt int                // how many budgets make budgetLocked sweep

	origins originCache // Server.Origin strings, parsed
}

// New returns a Fetcher that fetches the references reg holds, reaches
// their servers through servers and stores copies in store. Each of the
// three is required: a nil one is an error, as is a negative number in
// cfg. New starts no goroutine; each download runs on a goroutine of its
// own while its callers wait.
func New(reg *refs.Registry, servers Servers, store Store, cfg Config) (*Fetcher, error) {
	switch {
	case reg == nil:
		return nil, fmt.Errorf("%w: New needs a registry", ErrBadConfig)
	case nilness.Is(servers):
		return nil, fmt.Errorf("%w: New needs a Servers", ErrBadConfig)
	case nilness.Is(store):
		return nil, fmt.Errorf("%w: New needs a Store (fetch.NewDirStore, or a store of the host's own)", ErrBadConfig)
	case cfg.HostStore != nil && nilness.Is(cfg.HostStore):
		return nil, fmt.Errorf("%w: Config.HostStore is a nil %T", ErrBadConfig, cfg.HostStore)
	case cfg.HostStore != nil && overlap(store, cfg.HostStore):
		return nil, fmt.Errorf("%w: Config.HostStore is the shared store, or a directory store whose directory holds or is held by the shared one's, so it keeps nothing apart", ErrBadConfig)
	case cfg.HostStore != nil && !(isRemover(store) && isRemover(cfg.HostStore)):
		return nil, fmt.Errorf("%w: with Config.HostStore, both stores must be refs.Removers, to remove the copies no record may name", ErrBadConfig)
	}
	set, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	f := &Fetcher{
		reg:        reg,
		servers:    servers,
		store:      store,
		hostStore:  cfg.HostStore,
		set:        set,
		log:        cfg.Logger,
		now:        cfg.Now,
		fetchNever: cfg.FetchNever,
		flights:    make(map[string]*flight),
		budgets:    make(map[string]*budget),
		sweepAt:    sweepMin,
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.now == nil {
		f.now = time.Now
	}
	f.clients.base, f.clients.own = baseClient(cfg.Client)
	// The copy carries no cookies: the only credential the fetcher sends
	// is the server's token, to the server's own origin. Pinned clients
	// copy the base, so they carry none either.
	f.clients.base.Jar = nil
	return f, nil
}

// overlap reports whether host keeps nothing apart from shared: it is the
// same pointer, or both keep copies in a directory (a [DirStore], or a
// type that embeds one) and the host's lies in the shared one (as opened,
// since its copies are then written beneath the shared directory wherever
// its links lead), or one holds the other once links are resolved. Other
// stores are taken to differ: comparing them could panic, and where they
// keep copies is theirs to know.
func overlap(shared, host Store) bool {
	ts := reflect.TypeOf(shared)
	if ts != nil && ts.Kind() == reflect.Pointer && ts == reflect.TypeOf(host) && shared == host {
		return true
	}
	sd, hd := storeDir(shared), storeDir(host)
	if sd == "" || hd == "" {
		return false
	}
	if within(hd, sd) {
		return true
	}
	rs, rh := realDir(sd), realDir(hd)
	return within(rs, rh) || within(rh, rs)
}

// storeDir is the absolute directory of a store that names one with a
// Dir method, or "" when it names none (or panics doing so).
func storeDir(s Store) (dir string) {
	d, ok := s.(interface{ Dir() string })
	if !ok {
		return ""
	}
	defer func() {
		if recover() != nil {
			dir = ""
		}
	}()
	if dir = d.Dir(); dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return abs
}

// realDir is dir with its symbolic links resolved, or dir itself when
// they cannot be.
func realDir(dir string) string {
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		return p
	}
	return dir
}

// within reports whether path is dir or lies beneath it; both are clean
// absolute paths.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isRemover reports whether s can remove the copies it holds.
func isRemover(s Store) bool {
	_, ok := s.(refs.Remover)
	return ok
}

// Fetch fetches the payload of the reference the registry holds as id, or
// serves the copy saved for it, and returns what the bytes verified.
//
// For an id the registry does not hold it returns an [*refs.UnknownError]
// (errors.Is matches [refs.ErrUnknownReference]); every other failure is a
// [*Failure] whose clause and remedy are safe to show to the model.
//
// Before dialing, Fetch refuses, in this order: a reference a server marked
// never (unless the request is for the host itself, or the fetcher was
// built with Config.FetchNever), a reference no server delivered, a server
// the host no longer has or cannot reach over a network (with no
// [Server.UnauthenticatedOrigins] either), an address that does not parse
// (the reference's, then the server's, then an entry of its
// UnauthenticatedOrigins), a user name or password in the address, a
// scheme other than http or https, an origin that is neither the server's
// own nor one of its UnauthenticatedOrigins, an expired reference, a
// claimed size over the host ceiling, a spent budget, a claim over what
// the budget has left, and a claim over the call's max bytes. A record
// with a saved copy is served without dialing, expired or not.
//
// The request carries the server's bearer token only because it goes to
// the server's own origin; a request to one of its UnauthenticatedOrigins
// carries no credential, and the fetcher sends no cookies anywhere.
// Redirects are refused. The body is streamed, gzip decoded as it
// arrives, and every limit counts decoded bytes: the host ceiling first,
// then the server's budget (which also counts what its other origins
// sent), then the call's max bytes. A claimed digest must match the
// decoded bytes. The copy is stored as "<id>.<ext>" (the extension from
// the observed media type) and recorded only when every check passed.
// When Fetch returns a failure, nothing of the download is left in the
// store. Concurrent calls for one record share one download, each with
// its own deadline and max bytes; a call that arrives while a download
// every caller left is still ending, or while one for another of the
// record's servers runs, waits for it (within its own deadline), so one
// record never has two downloads at once.
func (f *Fetcher) Fetch(ctx context.Context, id string, req Request) (Result, error) {
	rec, ok := f.reg.Lookup(id)
	if !ok {
		return Result{}, &refs.UnknownError{ID: id}
	}
	maxBytes, bad := f.set.callMax(req.MaxBytes)
	if bad == nil {
		_, bad = f.set.callTimeout(req.Timeout)
	}
	if bad != nil {
		return f.failed(ctx, rec, bad)
	}
	timeout, _ := f.set.callTimeout(req.Timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	forModel := !req.ForHost && !f.fetchNever
	// The mark store is asked within the call's deadline: one that stopped
	// answering would otherwise hold the caller for as long as ctx lives
	// (TestMarkQuestionWithinDeadline). A question it could not answer in
	// time counts as a mark, as any unread answer does.
	if forModel && (rec.Never || f.reg.Marked(cctx, rec.URI)) {
		if !rec.Never && !f.reg.MarkKnown(rec.URI) {
			// Marked counted a mark store it could not read as a mark.
			return f.failed(ctx, rec, failUncheckedNow(rec.Server()))
		}
		return f.failed(ctx, rec, withheld(rec))
	}
	if res, ok := servable(rec, forModel); ok {
		return res, nil
	}
	t, fail := f.checks(rec, maxBytes)
	if fail != nil {
		return f.failed(ctx, rec, fail)
	}

	allowed := timeout
	if dl, ok := ctx.Deadline(); ok {
		allowed = min(allowed, max(time.Until(dl), 0))
	}
	if cctx.Err() != nil {
		return f.failed(ctx, rec, ended(ctx, t.server, allowed))
	}
	addrs := t.conn.Addrs
	if t.other {
		// The addresses are what the MCPL connection resolved for the
		// server's own host; another origin resolves as usual.
		addrs = nil
	}
	client, ok := f.clients.clientFor(addrs)
	if !ok {
		return f.failed(ctx, rec, failPinning(t.server))
	}

	w := &waiter{max: maxBytes, forModel: forModel, progress: req.Progress, ch: make(chan answer, 1)}
	fl, a, answered, ending := f.join(ctx, t, w, client)
	for ending != nil {
		select {
		case <-ending.done:
		case <-cctx.Done():
			return f.failed(ctx, rec, ended(ctx, t.server, allowed))
		}
		fl, a, answered, ending = f.join(ctx, t, w, client)
	}
	if answered {
		return f.answered(ctx, rec, a)
	}
	select {
	case a := <-w.ch:
		return f.answered(ctx, rec, a)
	case <-cctx.Done():
		if a, ok := fl.leave(w); ok {
			return f.answered(ctx, rec, a)
		}
		return f.failed(ctx, rec, ended(ctx, t.server, allowed))
	}
}

// ended is the failure for a call whose context ended: its deadline (or
// the caller's) passed, or the caller canceled it.
func ended(ctx context.Context, server string, allowed time.Duration) *Failure {
	if errors.Is(ctx.Err(), context.Canceled) {
		return failCanceled(server)
	}
	return failTimeout(server, allowed)
}

// Refusal returns the clause [Fetcher.Fetch] would refuse the entry's
// reference with for the model, without dialing, or "" when Fetch would go
// ahead (dial, or serve a saved copy). It judges the claimed size against
// the host ceiling, not a call's max bytes. It dials nothing, asks no mark
// store and logs nothing, so it is cheap enough for every stub: wire it as
// convert.Policy{Refusal: fetcher.Refusal}. It does ask the host's
// [Servers] for the reference's server, so a Servers that blocks or panics
// blocks or panics the view that asked.
func (f *Fetcher) Refusal(e convert.Entry) string {
	rec, ok := f.reg.ByURI(e.Testimony.URI)
	if e.Testimony.URI == "" {
		// No record is found by an empty uri, though one holds it.
		rec, ok = f.reg.Lookup(e.ID)
	}
	if !ok || rec.ID != e.ID {
		return failGone("").Clause
	}
	if !f.fetchNever && rec.Never {
		return withheld(rec).Clause
	}
	if _, ok := servable(rec, !f.fetchNever); ok {
		return ""
	}
	if _, fail := f.judge(rec, f.set.ceiling, true); fail != nil {
		return fail.Clause
	}
	return ""
}

// held reports whether the registry still holds rec's record.
func (f *Fetcher) held(rec refs.Record) bool {
	cur, ok := f.reg.ByURI(rec.URI)
	return ok && cur.ID == rec.ID
}

// current returns the registry's present state of rec, or rec itself when
// the registry no longer holds that record.
func (f *Fetcher) current(rec refs.Record) refs.Record {
	if cur, ok := f.reg.ByURI(rec.URI); ok && cur.ID == rec.ID {
		return cur
	}
	return rec
}

// servable returns the saved copy a caller may be served: any copy for
// the host, and for the model only a copy of a record no server marked
// never.
func servable(rec refs.Record, forModel bool) (Result, bool) {
	if rec.Copy == nil || (forModel && rec.Never) {
		return Result{}, false
	}
	return Result{Copy: *rec.Copy, FromCopy: true}, true
}

// target is a reference that passed the checks before dialing.
type target struct {
	rec    refs.Record
	server string
	conn   Server
	u      *url.URL
	own    origin // the dialed origin; zero for a server without one
	// other is set for a reference at one of the server's
	// UnauthenticatedOrigins rather than its own origin: the request
	// carries no credential and is not held to the connection's
	// addresses.
	other bool
}

// speaker names, in a clause, whoever answers the request.
func (t target) speaker() speaker { return speaker{server: t.server, other: t.other} }

// claimed returns the reference's claimed size, or -1 when it claims none.
func (t target) claimed() int64 {
	if t.rec.Testimony.Has(convert.FieldSizeBytes) {
		return t.rec.Testimony.SizeBytes
	}
	return -1
}

// preDial runs the checks before dialing as if the host allowed no origin
// but the server's own: a reference at one of the server's
// UnauthenticatedOrigins is refused the way the default policy refuses
// it. [Fetcher.EagerPlan] judges with it, so eager fetching stays at the
// server's own origin; a fetch the model or host asks for is judged by
// checks.
func (f *Fetcher) preDial(rec refs.Record, max int64) (target, *Failure) {
	t, fail := f.checks(rec, max)
	if fail != nil || !t.other {
		return t, fail
	}
	if t.conn.Origin == "" {
		return target{}, failNoNetworkAddress(t.server)
	}
	return target{}, failCrossOrigin(t.server, t.u, t.own, nil)
}

// checks runs the refusals before dialing that follow the never check,
// in order.
func (f *Fetcher) checks(rec refs.Record, max int64) (target, *Failure) {
	return f.judge(rec, max, false)
}

// judge is checks. With advice set it judges as checks does but may leave
// the target's URL nil: a reference spelled in the simple form at its
// server's own origin is judged without parsing it into a url.URL
// ([simpleOrigin]), which [Fetcher.Refusal] asks for every stub a view
// shows. Every other reference, and every refusal, comes from the parsed
// URL as in checks.
//
// The record is judged for the first of its bound servers, in binding
// order, whose own origin its uri is at; failing that, for the first one
// that allows the uri's origin as another origin. The fetch uses that
// server: its token (none for another origin), budget and clauses. Only
// when no bound server's origins match is the refusal the first server's.
// So the first server to name a uri, whatever is wrong with it (another
// origin, no network address, gone from the host, an allowance of the
// origin without its credentials), cannot make another server's reference
// unfetchable.
func (f *Fetcher) judge(rec refs.Record, max int64, advice bool) (target, *Failure) {
	names := rec.Servers
	if len(names) == 0 {
		names = []string{""} // refused: no server
	}
	var (
		first     *Failure
		other     target // the first server that only allows the uri's origin
		haveOther bool   // a value, not a pointer: one would escape per call
	)
	for _, name := range names {
		t, fail := f.judgeOrigin(rec, name, advice)
		switch {
		case fail == nil && !t.other:
			return f.judgeClaims(t, max)
		case fail == nil:
			if !haveOther {
				other, haveOther = t, true
			}
		case first == nil:
			first = fail
		}
	}
	if haveOther {
		return f.judgeClaims(other, max)
	}
	return target{}, first
}

// judgeOrigin runs judge's checks up to the origin for the bound server
// name: the server, the uri's parse, credentials, scheme and origin.
func (f *Fetcher) judgeOrigin(rec refs.Record, name string, advice bool) (target, *Failure) {
	if name == "" {
		return target{}, failNoServer()
	}
	conn, err := f.servers.Server(name)
	switch {
	case errors.Is(err, CodeUnknownServer):
		return target{}, failUnknownServer(name)
	case errors.Is(err, CodeNoNetworkAddress):
		return target{}, failNoNetworkAddress(name)
	case err != nil:
		return target{}, failServerLookup(name, oneLine(err.Error(), 240))
	case conn.Origin == "" && len(conn.UnauthenticatedOrigins) == 0:
		return target{}, failNoNetworkAddress(name)
	}
	var (
		u      *url.URL
		ro     origin
		simple bool // ro is rec.URI's origin, read without a url.URL
	)
	if advice {
		ro, simple = simpleOrigin(rec.URI)
	}
	if !simple {
		if u, err = url.Parse(rec.URI); err != nil {
			return target{}, failBadURI(name)
		}
	}
	var own origin
	if conn.Origin != "" {
		var ok bool
		if own, ok = f.origins.parse(conn.Origin); !ok {
			return target{}, failBadServerURI(name)
		}
	}
	others := make([]origin, 0, len(conn.UnauthenticatedOrigins))
	for i, s := range conn.UnauthenticatedOrigins {
		o, why := parseOtherOrigin(s)
		if why != "" {
			return target{}, failBadOtherOrigin(name, i, why)
		}
		others = append(others, o)
	}
	if simple && (conn.Origin == "" || ro != own) {
		// Only the server's own origin skips the parse: any other case is
		// judged, and a refusal worded, from the parsed URL.
		simple = false
		if u, err = url.Parse(rec.URI); err != nil {
			return target{}, failBadURI(name)
		}
	}
	ok := simple
	if !simple {
		if u.User != nil {
			return target{}, failCredentials(name)
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			return target{}, failScheme(name, u.Scheme)
		}
		ro, ok = originOf(u)
	}
	other := false
	switch {
	case ok && conn.Origin != "" && ro == own:
	case ok && slices.Contains(others, ro):
		other = true
	case conn.Origin == "":
		return target{}, failCrossOriginNoAddress(name, u, others)
	default:
		return target{}, failCrossOrigin(name, u, own, others)
	}
	return target{rec: rec, server: name, conn: conn, u: u, own: own, other: other}, nil
}

// judgeClaims runs judge's checks after the origin, for t's server:
// expiry, then the claimed size against the host ceiling, the server's
// budget and max.
func (f *Fetcher) judgeClaims(t target, max int64) (target, *Failure) {
	rec, name := t.rec, t.server
	now := f.now()
	if why := rec.Testimony.Expiry(now); why.Expired() {
		return target{}, failExpired(name, why)
	}
	claimed := rec.Testimony.Has(convert.FieldSizeBytes)
	claim := rec.Testimony.SizeBytes
	if claimed && claim > f.set.ceiling {
		return target{}, failClaimOverCeiling(name, claim, f.set.ceiling)
	}
	spent, limit := f.budgetAt(name, now)
	if spent >= limit {
		return target{}, failBudgetSpent(name, spent, limit)
	}
	if claimed && claim > limit-spent {
		return target{}, failClaimOverBudget(name, claim, spent, limit)
	}
	if claimed && claim > max {
		return target{}, failClaimOverMax(name, claim, max, f.upTo(spent, limit))
	}
	return t, nil
}

// upTo is the largest max bytes worth passing: the host ceiling or what
// the budget has left, whichever is less.
func (f *Fetcher) upTo(spent, limit int64) int64 {
	return min(f.set.ceiling, limit-spent)
}

// tooLarge is the failure for a waiter whose max bytes n passed.
func (f *Fetcher) tooLarge(server string, n, max int64, announced bool, spent, limit int64) *Failure {
	return f.tooLargeFrom(speaker{server: server}, n, max, announced, spent, limit)
}

// tooLargeFrom is tooLarge with the clause naming s as whoever announced
// the size.
func (f *Fetcher) tooLargeFrom(s speaker, n, max int64, announced bool, spent, limit int64) *Failure {
	k := f.upTo(spent, limit)
	r := largerMaxBytes(n, k)
	if k < n {
		r = budgetTooSmall(limit - spent)
	}
	if announced {
		return failAnnouncedOverMax(s, n, max, r)
	}
	return failReadOverMax(s.server, n, max, r)
}

// failed logs a failure for the operator, with its detail, and returns it
// as the call's error.
func (f *Fetcher) failed(ctx context.Context, rec refs.Record, fail *Failure) (Result, error) {
	cp := *fail
	attrs := []slog.Attr{
		slog.String("ref", rec.ID),
		slog.String("code", string(cp.Code)),
		slog.String("clause", cp.Clause),
	}
	if cp.Server != "" {
		attrs = append(attrs, slog.String("server", cp.Server))
	}
	if cp.detail != "" {
		attrs = append(attrs, slog.String("detail", cp.detail))
	}
	f.log.LogAttrs(ctx, slog.LevelWarn, "fetch: reference not fetched", attrs...)
	return Result{}, &cp
}

func (f *Fetcher) answered(ctx context.Context, rec refs.Record, a answer) (Result, error) {
	if a.fail != nil {
		return f.failed(ctx, rec, a.fail)
	}
	return a.res, nil
}

// CloseIdleConnections closes the connections the fetcher keeps open for
// reuse and no fetch is using, as [http.Client.CloseIdleConnections] does;
// a fetch under way keeps its own. The fetcher stays usable: a later fetch
// opens new ones. A host that drops a fetcher calls it first, since a
// fetcher's connections otherwise stay open until their idle timeout.
// It closes those of the fetcher's own transport and of every client it
// made to dial only a server's resolved addresses ([Server.Addrs]), which
// copy the host's transport and so are out of its reach. Those of a
// transport the host passed in [Config.Client] are the host's to close.
func (f *Fetcher) CloseIdleConnections() { f.clients.closeIdle() }
