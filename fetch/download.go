package fetch

import (
	"math"
	"net/http"
	"strings"
)

// errAbandoned ends a download every caller left; nobody reads it.
var errAbandoned = fail(CodeCanceled, "", "every caller left before the fetch finished")

// download runs one flight: the request, then the copier. For a
// reference at another origin than the server's own, a failure the copier
// worded about the server is said of that origin instead.
func (f *Fetcher) download(fl *flight) outcome {
	resp, gz, fail := f.request(fl)
	if fail != nil {
		return failure(fail)
	}
	defer resp.Body.Close()
	out := newCopier(f, fl, resp, gz).run()
	s := fl.t.speaker()
	out.fail, out.modelFail = s.resay(out.fail), s.resay(out.modelFail)
	return out
}

// request sends the GET and judges the response's status, coding and
// announced length. gz reports a gzip-coded body.
func (f *Fetcher) request(fl *flight) (resp *http.Response, gz bool, fail *Failure) {
	t := fl.t
	name, s := t.server, t.speaker()
	u := *t.u
	u.Fragment, u.RawFragment = "", ""
	req, err := http.NewRequestWithContext(fl.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, false, failBadURI(name)
	}
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("User-Agent", "refcore-fetch")
	// The credential goes only to the server's own dialed origin, never
	// to another origin the host allows (even on the same host). The
	// checks before dialing refused every origin not allowed; this guards
	// the rule where the header is set.
	if t.conn.Token != "" && t.conn.Origin != "" && !t.other {
		if o, ok := originOf(req.URL); ok && o == t.own {
			req.Header.Set("Authorization", "Bearer "+t.conn.Token)
		}
	}
	resp, err = fl.client.Do(req)
	if err != nil {
		if fl.ctx.Err() != nil {
			return nil, false, errAbandoned
		}
		return nil, false, failRequest(s, causeOf(err, t))
	}
	if fail := judgeResponse(s, resp); fail != nil {
		resp.Body.Close()
		return nil, false, fail
	}
	gz = isGzip(resp)
	// Content-Length is a cheap early refusal, never a guarantee.
	if n := resp.ContentLength; !gz && n >= 0 {
		if fail := fl.announced(n); fail != nil {
			resp.Body.Close()
			return nil, false, fail
		}
	}
	return resp, gz, nil
}

// judgeResponse refuses a status without a payload and a coding the
// fetcher cannot decode; by names whoever answered.
func judgeResponse(by speaker, resp *http.Response) *Failure {
	switch s := resp.StatusCode; {
	case s >= 300 && s <= 399:
		return failRedirect(by, s)
	case s == http.StatusNoContent || s == http.StatusResetContent:
		return failNoContent(by, s)
	case s < 200 || s > 299:
		return failStatusFrom(by, s)
	}
	switch coding := contentCoding(resp); coding {
	case "", "identity", "gzip", "x-gzip":
		return nil
	default:
		return failUnknownCoding(by, coding)
	}
}

func contentCoding(resp *http.Response) string {
	return strings.ToLower(strings.TrimSpace(strings.Join(resp.Header.Values("Content-Encoding"), ",")))
}

func isGzip(resp *http.Response) bool {
	c := contentCoding(resp)
	return c == "gzip" || c == "x-gzip"
}

// announced judges a declared identity length against the limits.
func (fl *flight) announced(n int64) *Failure {
	f, name, s := fl.f, fl.t.server, fl.t.speaker()
	if n > f.set.ceiling {
		return failAnnouncedOverCeiling(s, n, f.set.ceiling)
	}
	spent, limit := f.Budget(name)
	if n > limit-spent {
		return failAnnouncedOverBudget(s, n, spent, limit)
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.dropOver(n, true, spent, limit)
	if len(fl.waiters) == 0 {
		fl.dead = true
		return errAbandoned
	}
	return nil
}

// dropOver answers every waiter whose max bytes n passes. Called with
// fl.mu held.
func (fl *flight) dropOver(n int64, announced bool, spent, limit int64) {
	for w := range fl.waiters {
		if n > w.max {
			fl.part(w, answer{fail: fl.f.tooLargeFrom(fl.t.speaker(), n, w.max, announced, spent, limit)})
		}
	}
}

// dropModel answers every caller that wants the bytes for the model with
// fail, once a never mark has landed. It reports errAbandoned when no
// caller is left. Called without fl.mu.
func (fl *flight) dropModel(fail *Failure) *Failure {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for w := range fl.waiters {
		if w.forModel {
			fl.part(w, answer{fail: fail})
		}
	}
	if len(fl.waiters) == 0 {
		fl.dead = true
		return errAbandoned
	}
	return nil
}

// anyHost reports whether a caller that wants the bytes for the host
// itself still waits.
func (fl *flight) anyHost() bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for w := range fl.waiters {
		if !w.forModel {
			return true
		}
	}
	return false
}

// readCap bounds the next read so that a limit is passed by at most one
// byte: the smallest of the chunk size and one more than what is left
// under the host ceiling, the budget and every waiter's max bytes.
//
// wire bounds the encoded bytes the body may have sent: twice the decoded
// bytes the download may reach for the waiter with the largest max bytes
// (within the ceiling and the budget), plus 1 MiB, so that encoded bytes
// which decode to nothing (endless empty gzip members) stop near the
// call's max bytes or the budget, not near the host ceiling. Gzip as
// servers write it stays far below: its largest header is under 67 KB,
// and a flush every 32 bytes adds about a quarter. A body that more than
// doubles its content (a flush every few bytes, members of a few bytes
// each) is refused once past the 1 MiB.
func (fl *flight) readCap(chunk int) (n int, wire int64) {
	f := fl.f
	fl.mu.Lock()
	total := fl.total
	bound, widest := f.set.ceiling-total, int64(0)
	for w := range fl.waiters {
		bound = min(bound, w.max-total)
		widest = max(widest, w.max-total)
	}
	fl.mu.Unlock()
	spent, limit := f.Budget(fl.t.server)
	left := max(limit-spent, 0)
	bound = max(min(bound, left), 0)
	widest = max(min(widest, f.set.ceiling-total, left), 0)
	wire = min(wireAllowance(total+widest), f.set.wireCeiling)
	if bound < int64(chunk)-1 { // bound+1 could overflow
		return int(bound + 1), wire
	}
	return chunk, wire
}

// wireAllowance is how many encoded bytes a body may send for n decoded
// bytes: 2n + 1 MiB, saturating at math.MaxInt64.
func wireAllowance(n int64) int64 {
	if n > (math.MaxInt64-1<<20)/2 {
		return math.MaxInt64
	}
	return 2*n + 1<<20
}

// account counts n decoded bytes and applies the three ceilings in order:
// the host ceiling, the server's budget, each waiter's max bytes. It
// returns the progress callbacks to call, outside the lock.
func (fl *flight) account(n int64) ([]func(got, claimed int64), *Failure) {
	f, name := fl.f, fl.t.server
	spent, limit := f.charge(name, n)
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.total += n
	if fl.total > f.set.ceiling {
		return nil, failReadOverCeiling(name, fl.total, f.set.ceiling)
	}
	if spent > limit {
		return nil, failReadOverBudget(name, spent, limit)
	}
	fl.dropOver(fl.total, false, spent, limit)
	if len(fl.waiters) == 0 {
		fl.dead = true
		return nil, errAbandoned
	}
	var progress []func(got, claimed int64)
	for w := range fl.waiters {
		if w.progress != nil {
			progress = append(progress, w.progress)
		}
	}
	return progress, nil
}
