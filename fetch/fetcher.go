package fetch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// Fetcher is the host-mediated fetcher of RFC-005 §7. It is safe for
// concurrent use by multiple goroutines; concurrent fetches of one record
// share one download (F17).
type Fetcher struct {
	reg     *refs.Registry
	servers Servers
	store   Store
	set     settings
	log     *slog.Logger
	now     func() time.Time
	hook    Withholder
	clients pinned

	mu      sync.Mutex
	flights map[string]*flight // by record id

	bmu     sync.Mutex
	budgets map[string]*budget // by server name
}

type budget struct {
	spent int64
	limit int64 // < 0: none
}

// New returns a Fetcher that reads and updates records in reg, reaches
// servers through servers and stores copies in store.
//
// reg may be nil: the fetcher then records nothing and only returns what
// it verified. A nil store means a new [MemoryStore]. New panics when
// servers is nil or cfg.Ceiling is negative. It starts no goroutine; each
// download runs on a goroutine of its own while its callers wait.
func New(reg *refs.Registry, servers Servers, store Store, cfg Config) *Fetcher {
	if servers == nil {
		panic("fetch: nil Servers")
	}
	if store == nil {
		store = NewMemoryStore()
	}
	f := &Fetcher{
		reg:     reg,
		servers: servers,
		store:   store,
		set:     resolve(cfg),
		log:     cfg.Logger,
		now:     cfg.Now,
		hook:    cfg.Withhold,
		flights: make(map[string]*flight),
		budgets: make(map[string]*budget),
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.now == nil {
		f.now = time.Now
	}
	f.clients.base, f.clients.own = baseClient(cfg.Client)
	return f
}

// Fetch fetches the reference rec names, or serves the copy saved for it,
// and returns what the bytes verified. Every failure is a [*Failure]; test
// its kind with errors.Is against the sentinels of this package.
//
// Before dialing, Fetch refuses in this order (F2): a never-marked record
// (only with Config.Withhold), no bound server, a server the host no longer
// has, a server with no network address, a reference address that does not
// parse, a server address that does not parse, userinfo in the reference
// address, a scheme other than http or https, another origin than the
// server's, an expired reference, a claimed size over the host ceiling, a
// spent budget, a claim over what the budget has left, and a claim over the
// call's max bytes. A record with a saved copy that is not never-marked is
// served without dialing, expired or not (F16).
//
// The request carries the server's bearer token only because it goes to
// the server's own origin (F3); redirects are refused (F4). The body is
// streamed, gzip decoded as it arrives, and every limit counts decoded
// bytes: the host ceiling first, then the server's budget, then the call's
// max bytes (F5–F7). A claimed digest must match the decoded bytes (F8).
// The copy is stored as "<refId>.<ext>" from the observed type (F9, F10)
// and its facts are saved on the record only when every check passed
// (F19). Concurrent calls for one record share one download, each with its
// own deadline and max bytes (F17).
func (f *Fetcher) Fetch(ctx context.Context, rec refs.Record, req Request) (Result, error) {
	rec = f.current(rec)
	max := f.set.callMax(req.MaxBytes)
	if fail := f.withheld(rec); fail != nil {
		return f.failed(ctx, rec, fail)
	}
	if res, ok := savedCopy(rec); ok {
		return res, nil
	}
	t, fail := f.preDial(rec, max)
	if fail != nil {
		return f.failed(ctx, rec, fail)
	}

	if !f.held(rec) {
		// Whatever arrived could not be saved for a record the registry
		// let go (F20), so nothing is dialed for it.
		return f.failed(ctx, rec, failGone(t.server))
	}

	timeout := f.set.callTimeout(req.Timeout)
	cctx, allowed := ctx, timeout
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); timeout == 0 || left < allowed {
			allowed = max64d(left, 0)
		}
	}
	if cctx.Err() != nil {
		return f.failed(ctx, rec, ended(ctx, t.server, allowed))
	}
	client, ok := f.clients.clientFor(t.conn.Addrs)
	if !ok {
		return f.failed(ctx, rec, failPinning(t.server))
	}

	fl, w, res, served := f.join(ctx, t, max, client)
	if served {
		return res, nil
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

func max64d(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// ended is the failure for a call whose context ended: its deadline (or
// the caller's) passed, or the caller canceled it.
func ended(ctx context.Context, server string, allowed time.Duration) *Failure {
	if errors.Is(ctx.Err(), context.Canceled) {
		return failCanceled(server)
	}
	return failTimeout(server, allowed)
}

// Refusal reports the failure [Fetcher.Fetch] would give rec without
// dialing, or nil when Fetch would go ahead (dial, or serve a saved copy).
// It judges the claimed size against the host ceiling, not a call's max
// bytes, so none of its remedies names a max bytes. It dials nothing and
// logs nothing.
func (f *Fetcher) Refusal(rec refs.Record) *Failure {
	rec = f.current(rec)
	if fail := f.withheld(rec); fail != nil {
		return fail
	}
	if _, ok := savedCopy(rec); ok {
		return nil
	}
	_, fail := f.preDial(rec, f.set.ceiling)
	return fail
}

// RenewBudget resets the bytes counted against server's budget to zero and
// sets its budget to limit: zero means Config.Budget, negative means no
// budget. Budgets never renew on their own.
func (f *Fetcher) RenewBudget(server string, limit int64) {
	if limit == 0 {
		limit = f.set.budget
	}
	f.bmu.Lock()
	defer f.bmu.Unlock()
	f.budgets[server] = &budget{limit: limit}
}

// Budget returns the decoded bytes fetched through server so far and its
// budget; a negative limit means none.
func (f *Fetcher) Budget(server string) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	if b := f.budgets[server]; b != nil {
		return b.spent, b.limit
	}
	return 0, f.set.budget
}

// charge counts n decoded bytes against server's budget and returns the
// new state.
func (f *Fetcher) charge(server string, n int64) (spent, limit int64) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	b := f.budgets[server]
	if b == nil {
		b = &budget{limit: f.set.budget}
		f.budgets[server] = b
	}
	b.spent += n
	return b.spent, b.limit
}

// current returns the registry's present state of rec (its testimony,
// mark and saved copy), or rec itself when the registry no longer holds
// that record.
func (f *Fetcher) current(rec refs.Record) refs.Record {
	if f.reg == nil {
		return rec
	}
	if cur, ok := f.reg.ByURI(rec.URI); ok && cur.ID == rec.ID {
		return cur
	}
	return rec
}

// held reports whether the registry still holds rec's record (always
// true without a registry).
func (f *Fetcher) held(rec refs.Record) bool {
	if f.reg == nil {
		return true
	}
	cur, ok := f.reg.ByURI(rec.URI)
	return ok && cur.ID == rec.ID
}

// withheld is the first refusal (F18): only a fetcher with a withhold
// hook refuses a never-marked record.
func (f *Fetcher) withheld(rec refs.Record) *Failure {
	if f.hook == nil {
		return nil
	}
	if rec.Never || f.hook.Marked(rec.URI) {
		return failWithheld(rec.Server())
	}
	return nil
}

// savedCopy serves a saved copy (F16).
func savedCopy(rec refs.Record) (Result, bool) {
	if rec.Saved == nil || rec.Never {
		return Result{}, false
	}
	s := rec.Saved
	return Result{Path: s.Path, Bytes: s.Bytes, MimeType: s.MimeType, DigestVerified: s.DigestVerified, FromCopy: true}, true
}

// target is a reference that passed the checks before dialing.
type target struct {
	rec    refs.Record
	server string
	conn   Server
	u      *url.URL
	own    origin
}

// preDial runs the refusals of F2 after the withhold check, in order.
func (f *Fetcher) preDial(rec refs.Record, max int64) (target, *Failure) {
	name := rec.Server()
	if name == "" {
		return target{}, failNoServer()
	}
	conn, err := f.servers.Server(name)
	switch {
	case errors.Is(err, ErrUnknownServer):
		return target{}, failUnknownServer(name)
	case errors.Is(err, ErrNoNetworkAddress):
		return target{}, failNoNetworkAddress(name)
	case err != nil:
		return target{}, failServerLookup(name)
	case conn.Origin == "":
		return target{}, failNoNetworkAddress(name)
	}
	u, err := url.Parse(rec.URI)
	if err != nil {
		return target{}, failBadURI(name)
	}
	su, err := url.Parse(conn.Origin)
	if err != nil {
		return target{}, failBadServerURI(name)
	}
	own, ok := originOf(su)
	if !ok {
		return target{}, failBadServerURI(name)
	}
	if u.User != nil {
		return target{}, failCredentials(name)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return target{}, failScheme(name, schemeText(u.Scheme))
	}
	if ro, ok := originOf(u); !ok || ro != own {
		return target{}, failCrossOrigin(name, refOrigin(u), own)
	}
	if why := rec.Testimony.Expiry(f.now()); why.Expired() {
		return target{}, failExpired(name, why)
	}
	claimed := rec.Testimony.Has(convert.FieldSizeBytes)
	claim := rec.Testimony.SizeBytes
	if claimed && claim > f.set.ceiling {
		return target{}, failClaimOverCeiling(name, claim, f.set.ceiling)
	}
	spent, limit := f.Budget(name)
	if limit >= 0 && spent >= limit {
		return target{}, failBudgetSpent(name, spent, limit)
	}
	if claimed && limit >= 0 && claim > limit-spent {
		return target{}, failClaimOverBudget(name, claim, spent, limit)
	}
	if claimed && claim > max {
		return target{}, failClaimOverMax(name, claim, max, f.upTo(spent, limit))
	}
	return target{rec: rec, server: name, conn: conn, u: u, own: own}, nil
}

// upTo is the largest max bytes worth passing: the host ceiling or what
// the budget has left, whichever is less (F15).
func (f *Fetcher) upTo(spent, limit int64) int64 {
	k := f.set.ceiling
	if limit >= 0 && limit-spent < k {
		k = limit - spent
	}
	return k
}

// tooLarge is the failure for a waiter whose max bytes n passed.
func (f *Fetcher) tooLarge(server string, n, max int64, announced bool, spent, limit int64) *Failure {
	k := f.upTo(spent, limit)
	r := PassLargerMaxBytes(n, k)
	if k < n {
		r = BudgetTooSmall(limit - spent)
	}
	if announced {
		return failAnnouncedOverMax(server, n, max, r)
	}
	return failReadOverMax(server, n, max, r)
}

// failed logs a failure (O1) and returns it as the call's error.
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
	if cp.why != "" {
		attrs = append(attrs, slog.String("why", cp.why))
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

// flight is one download shared by every caller waiting on one record.
type flight struct {
	f      *Fetcher
	t      target
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	waiters map[*waiter]struct{}
	total   int64 // decoded bytes read so far
	dead    bool  // no caller can join: done, or abandoned
}

type waiter struct {
	max int64
	ch  chan answer // buffered: the flight never blocks on a caller
}

type answer struct {
	res  Result
	fail *Failure
}

// join adds a caller to the record's flight, starting one when none is
// running. served is set when a flight that just ended saved a copy.
func (f *Fetcher) join(ctx context.Context, t target, max int64, client *http.Client) (fl *flight, w *waiter, res Result, served bool) {
	w = &waiter{max: max, ch: make(chan answer, 1)}
	start := false
	f.mu.Lock()
	fl = f.flights[t.rec.ID]
	if fl != nil {
		fl.mu.Lock()
		if fl.dead {
			fl.mu.Unlock()
			fl = nil
		}
	}
	if fl == nil {
		// A flight saves its copy before it leaves the map, so a caller
		// that finds no flight finds the copy instead.
		if res, ok := savedCopy(f.current(t.rec)); ok && f.withheld(t.rec) == nil {
			f.mu.Unlock()
			return nil, nil, res, true
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		fl = &flight{f: f, t: t, client: client, ctx: fctx, cancel: cancel, waiters: make(map[*waiter]struct{})}
		fl.mu.Lock()
		f.flights[t.rec.ID] = fl
		start = true
	}
	f.mu.Unlock()
	if fl.total > max {
		spent, limit := f.Budget(t.server)
		w.ch <- answer{fail: f.tooLarge(t.server, fl.total, max, false, spent, limit)}
	} else {
		fl.waiters[w] = struct{}{}
	}
	fl.mu.Unlock()
	if start {
		go f.run(fl)
	}
	return fl, w, Result{}, false
}

// leave takes a caller whose deadline passed out of the flight, ending
// the download when no caller is left. ok is set when an answer had
// already been sent to w.
func (fl *flight) leave(w *waiter) (a answer, ok bool) {
	fl.mu.Lock()
	if _, waiting := fl.waiters[w]; waiting {
		delete(fl.waiters, w)
		if len(fl.waiters) == 0 && !fl.dead {
			fl.dead = true
			fl.cancel()
		}
		fl.mu.Unlock()
		return answer{}, false
	}
	fl.mu.Unlock()
	return <-w.ch, true
}

// waiting returns how many callers wait on the record's flight.
func (f *Fetcher) waiting(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.flights[id]
	if fl == nil {
		return 0
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return len(fl.waiters)
}

// run performs the download and answers every caller still waiting.
func (f *Fetcher) run(fl *flight) {
	defer fl.cancel()
	res, fail := f.download(fl)
	f.mu.Lock()
	if f.flights[fl.t.rec.ID] == fl {
		delete(f.flights, fl.t.rec.ID)
	}
	f.mu.Unlock()
	fl.mu.Lock()
	fl.dead = true
	for w := range fl.waiters {
		w.ch <- answer{res: res, fail: fail}
		delete(fl.waiters, w)
	}
	fl.mu.Unlock()
}
