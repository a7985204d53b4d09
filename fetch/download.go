package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// errAbandoned marks a download every caller left; nobody reads its
// answer.
var errAbandoned = NewFailure(CodeCanceled, "every caller left before the fetch finished", TryLater())

// download runs one flight: request, status, coding, stream, checks,
// storage and the record's update.
func (f *Fetcher) download(fl *flight) (Result, *Failure) {
	t := fl.t
	name := t.server
	u := *t.u
	u.Fragment, u.RawFragment = "", ""
	req, err := http.NewRequestWithContext(fl.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, failBadURI(name)
	}
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("User-Agent", "refcore-fetch")
	// F3: the credential goes only to the server's own dialed origin. The
	// checks before dialing refused every other origin; this guards the
	// rule where the header is set.
	if t.conn.Token != "" {
		if o, ok := originOf(req.URL); ok && o == t.own {
			req.Header.Set("Authorization", "Bearer "+t.conn.Token)
		}
	}
	resp, err := fl.client.Do(req)
	if err != nil {
		if fl.ctx.Err() != nil {
			return Result{}, errAbandoned
		}
		return Result{}, failRequest(name, f.causeWords(err, t))
	}
	defer resp.Body.Close()

	switch s := resp.StatusCode; {
	case s >= 300 && s <= 399:
		return Result{}, failRedirect(name, s)
	case s == http.StatusNoContent || s == http.StatusResetContent:
		return Result{}, failNoContent(name, s)
	case s < 200 || s > 299:
		return Result{}, failStatus(name, s)
	}

	gz := false
	switch coding := strings.ToLower(strings.TrimSpace(strings.Join(resp.Header.Values("Content-Encoding"), ","))); coding {
	case "", "identity":
	case "gzip", "x-gzip":
		gz = true
	default:
		return Result{}, failUnknownCoding(name, coding)
	}

	// Content-Length is a cheap early refusal, never a guarantee (F6).
	if n := resp.ContentLength; !gz && n >= 0 {
		if fail := fl.announced(n); fail != nil {
			return Result{}, fail
		}
	}

	return f.stream(fl, resp, gz)
}

// announced judges a declared identity length against the limits.
func (fl *flight) announced(n int64) *Failure {
	f, name := fl.f, fl.t.server
	if n > f.set.ceiling {
		return failAnnouncedOverCeiling(name, n, f.set.ceiling)
	}
	spent, limit := f.Budget(name)
	if limit >= 0 && n > limit-spent {
		return failAnnouncedOverBudget(name, n, spent, limit)
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
			w.ch <- answer{fail: fl.f.tooLarge(fl.t.server, n, w.max, announced, spent, limit)}
			delete(fl.waiters, w)
		}
	}
}

// readCap bounds the next read so that a limit is passed by at most one
// byte: the smallest of the chunk size and one more than what is left
// under the host ceiling, the budget and every waiter's max bytes.
func (fl *flight) readCap(chunk int) int {
	f := fl.f
	fl.mu.Lock()
	bound := f.set.ceiling - fl.total
	for w := range fl.waiters {
		if left := w.max - fl.total; left < bound {
			bound = left
		}
	}
	fl.mu.Unlock()
	if spent, limit := f.Budget(fl.t.server); limit >= 0 && limit-spent < bound {
		bound = limit - spent
	}
	if bound < 0 {
		bound = 0
	}
	if bound+1 < int64(chunk) {
		return int(bound + 1)
	}
	return chunk
}

// account counts n decoded bytes and applies the three ceilings in order:
// the host ceiling, the server's budget, each waiter's max bytes (F5).
func (fl *flight) account(n int64) *Failure {
	f, name := fl.f, fl.t.server
	spent, limit := f.charge(name, n)
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.total += n
	if fl.total > f.set.ceiling {
		return failReadOverCeiling(name, fl.total, f.set.ceiling)
	}
	if limit >= 0 && spent > limit {
		return failReadOverBudget(name, spent, limit)
	}
	fl.dropOver(fl.total, false, spent, limit)
	if len(fl.waiters) == 0 {
		fl.dead = true
		return errAbandoned
	}
	return nil
}

// stream reads the body chunk by chunk into the store, hashing decoded
// bytes, and finishes the copy when every check passes.
func (f *Fetcher) stream(fl *flight, resp *http.Response, gz bool) (Result, *Failure) {
	t := fl.t
	name := t.server
	wire := &wireReader{r: resp.Body, limit: f.set.wireCeiling}
	var src io.Reader = wire
	if gz {
		br := bufio.NewReaderSize(wire, 4096)
		z, err := gzip.NewReader(br)
		if err != nil {
			return Result{}, f.readFailure(fl, wire, 0)
		}
		z.Multistream(false)
		src = &gunzip{z: z, src: br}
	}

	var (
		buf   = make([]byte, f.set.chunk)
		head  = make([]byte, 0, sniffLen)
		h     = sha256.New()
		pend  Pending
		mime  string
		total int64
	)
	abort := func() {
		fl.cancel()
		resp.Body.Close()
		if pend != nil {
			f.abortPending(fl.ctx, t.rec, pend)
		}
	}
	begin := func() *Failure {
		mime = observedType(head, resp.Header.Get("Content-Type"), t.rec.Testimony.MimeType)
		p, err := safeBegin(fl.ctx, f.store, storageName(t.rec.ID, mime), mime)
		if err != nil {
			return failStorage(name, "the store could not begin the copy: "+oneLine(err.Error(), 300))
		}
		pend = p
		if err := safeWrite(pend, head); err != nil {
			return failStorage(name, "the store could not write: "+oneLine(err.Error(), 300))
		}
		return nil
	}

	for {
		n, rerr := src.Read(buf[:fl.readCap(len(buf))])
		if n > 0 {
			chunk := buf[:n]
			total += int64(n)
			if fail := fl.account(int64(n)); fail != nil {
				abort()
				return Result{}, fail
			}
			if f.hook != nil && f.hook.Marked(t.rec.URI) {
				abort()
				return Result{}, failWithheldDuring(name)
			}
			h.Write(chunk)
			if pend == nil {
				k := min(sniffLen-len(head), len(chunk))
				head = append(head, chunk[:k]...)
				chunk = chunk[k:]
				if len(head) == sniffLen {
					if fail := begin(); fail != nil {
						abort()
						return Result{}, fail
					}
				}
			}
			if pend != nil && len(chunk) > 0 {
				if err := safeWrite(pend, chunk); err != nil {
					abort()
					return Result{}, failStorage(name, "the store could not write: "+oneLine(err.Error(), 300))
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			fail := f.readFailure(fl, wire, total)
			abort()
			return Result{}, fail
		}
	}

	verified := false
	if t.rec.Testimony.Has(convert.FieldDigest) {
		sum := h.Sum(nil)
		claim := t.rec.Testimony.Digest
		want, ok := decodeDigest(claim)
		if !ok || !bytes.Equal(sum, want) {
			abort()
			return Result{}, failDigest(name, claim, "sha256:"+base64.RawURLEncoding.EncodeToString(sum))
		}
		verified = true
	}
	if pend == nil {
		if fail := begin(); fail != nil {
			abort()
			return Result{}, fail
		}
	}
	if f.hook != nil && f.hook.Marked(t.rec.URI) {
		abort()
		return Result{}, failWithheldDuring(name)
	}
	path, err := safeCommit(pend)
	if err != nil {
		pend = nil
		abort()
		return Result{}, failStorage(name, "the store could not commit the copy: "+oneLine(err.Error(), 300))
	}
	res := Result{Path: path, Bytes: total, MimeType: mime, DigestVerified: verified}
	return f.record(fl, res)
}

// record saves the verified facts on the record (F19), or withdraws the
// copy when the record was let go or marked meanwhile (F18, F20).
func (f *Fetcher) record(fl *flight, res Result) (Result, *Failure) {
	ctx, rec, name := fl.ctx, fl.t.rec, fl.t.server
	if f.reg != nil {
		save := f.reg.Save
		if f.hook == nil {
			// Without a withhold hook a never reference is fetched like any
			// other, so its record carries the copy's facts too (F19).
			save = f.reg.SaveMarked
		}
		err := save(rec.ID, refs.Saved{
			Path:           res.Path,
			Bytes:          res.Bytes,
			MimeType:       res.MimeType,
			DigestVerified: res.DigestVerified,
			Against:        rec.Testimony,
		})
		switch {
		case errors.Is(err, refs.ErrStale):
			if f.held(rec) {
				// Still held, so the record took a new digest meanwhile:
				// the bytes answer testimony it no longer holds.
				f.withdraw(ctx, rec, res.Path, "the reference took a new digest during the fetch")
				return Result{}, failReissued(name)
			}
			f.withdraw(ctx, rec, res.Path, "the registry let the record go during the fetch")
			if f.hook != nil && f.hook.Marked(rec.URI) {
				return Result{}, failWithheldDuring(name)
			}
			return Result{}, failStale(name)
		case errors.Is(err, refs.ErrMarked):
			f.withdraw(ctx, rec, res.Path, "a never mark landed during the fetch")
			return Result{}, failWithheldDuring(name)
		case err != nil:
			f.withdraw(ctx, rec, res.Path, "the registry refused the copy")
			return Result{}, failStale(name)
		}
	}
	if f.hook != nil && f.hook.Marked(rec.URI) {
		f.withdraw(ctx, rec, res.Path, "a never mark landed as the copy was saved")
		return Result{}, failWithheldDuring(name)
	}
	f.log.LogAttrs(ctx, slog.LevelInfo, "fetch: reference fetched",
		slog.String("ref", rec.ID), slog.String("server", name), slog.String("path", res.Path),
		slog.Int64("bytes", res.Bytes), slog.String("type", res.MimeType), slog.Bool("digestVerified", res.DigestVerified))
	return res, nil
}

// withdraw removes a committed copy that no record may name, through the
// store when it is a [refs.Remover], and says so in the log either way.
func (f *Fetcher) withdraw(ctx context.Context, rec refs.Record, path, why string) {
	r, ok := f.store.(refs.Remover)
	if !ok {
		f.log.LogAttrs(ctx, slog.LevelWarn, "fetch: a copy no record names stays in storage, since the store cannot remove files",
			slog.String("ref", rec.ID), slog.String("path", path), slog.String("why", why))
		return
	}
	if err := safeRemove(r, path); err != nil {
		f.log.LogAttrs(ctx, slog.LevelError, "fetch: could not remove a copy no record names",
			slog.String("ref", rec.ID), slog.String("path", path), slog.String("why", why), slog.String("err", oneLine(err.Error(), 300)))
		return
	}
	f.log.LogAttrs(ctx, slog.LevelInfo, "fetch: removed a copy no record names",
		slog.String("ref", rec.ID), slog.String("path", path), slog.String("why", why))
}

func (f *Fetcher) abortPending(ctx context.Context, rec refs.Record, p Pending) {
	if err := safeAbort(p); err != nil {
		f.log.LogAttrs(ctx, slog.LevelError, "fetch: the store could not discard an unfinished copy",
			slog.String("ref", rec.ID), slog.String("err", oneLine(err.Error(), 300)))
	}
}

// readFailure classifies a failed read of the body.
func (f *Fetcher) readFailure(fl *flight, wire *wireReader, total int64) *Failure {
	name := fl.t.server
	switch {
	case errors.Is(wire.err, errWireCeiling):
		return failWireOverCeiling(name, wire.n, wire.limit)
	case fl.ctx.Err() != nil:
		return errAbandoned
	case wire.err != nil:
		return failBrokeOff(name, total, f.causeWords(wire.err, fl.t))
	}
	return failCorruptGzip(name, total)
}

// storageName is "<refId><ext>" (F10). The id is host-generated; the
// server's name and the reference's name never take part.
func storageName(id, mime string) string { return id + extension(mime) }

// decodeDigest reads a "sha256:<base64url>" claim.
func decodeDigest(d string) ([]byte, bool) {
	const prefix = "sha256:"
	if !strings.HasPrefix(d, prefix) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(d[len(prefix):])
	if err != nil || len(b) != sha256.Size {
		return nil, false
	}
	return b, true
}

// errWireCeiling stops a stream whose encoded bytes pass the wire ceiling.
var errWireCeiling = errors.New("fetch: encoded bytes past the wire ceiling")

// wireReader counts encoded bytes and keeps the first error of the body
// (sticky), so a failed read can be told apart from a decoding error.
type wireReader struct {
	r     io.Reader
	n     int64
	limit int64
	err   error // sticky; io.EOF is not kept
}

func (w *wireReader) Read(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if max := w.limit - w.n + 1; int64(len(p)) > max {
		p = p[:max]
	}
	n, err := w.r.Read(p)
	w.n += int64(n)
	if w.n > w.limit {
		w.err = errWireCeiling
		return n, w.err
	}
	if err != nil && err != io.EOF {
		w.err = err
	}
	return n, err
}

// gunzip decodes gzip members one after another without recursion: the
// standard reader's multistream mode recurses once per empty member, which
// an endless stream of empty members would turn into unbounded stack.
type gunzip struct {
	z   *gzip.Reader
	src *bufio.Reader // the reader z was made on; Reset must reuse it
}

func (g *gunzip) Read(p []byte) (int, error) {
	for {
		n, err := g.z.Read(p)
		if err != io.EOF {
			return n, err
		}
		switch rerr := g.z.Reset(g.src); {
		case rerr == io.EOF:
			return n, io.EOF
		case rerr != nil:
			return n, rerr
		}
		g.z.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

// causeWords gives a failed request's cause in its own words (F13), with
// every uri reduced to its scheme and host and the reference's address,
// query and the token removed.
func (f *Fetcher) causeWords(err error, t target) string {
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

// The store is the host's code: a panic in it is a storage failure, not a
// crash (F10).

func storePanic(r any) error {
	return fmt.Errorf("the store panicked: %v", r)
}

func safeBegin(ctx context.Context, s Store, name, mime string) (p Pending, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, storePanic(r)
		}
	}()
	p, err = s.Begin(ctx, name, mime)
	if err == nil && p == nil {
		err = errors.New("the store returned no copy to write")
	}
	return p, err
}

func safeWrite(p Pending, b []byte) (err error) {
	if len(b) == 0 {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = storePanic(r)
		}
	}()
	n, err := p.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

func safeCommit(p Pending) (path string, err error) {
	defer func() {
		if r := recover(); r != nil {
			path, err = "", storePanic(r)
		}
	}()
	path, err = p.Commit()
	if err == nil && path == "" {
		err = errors.New("the store returned no path")
	}
	return path, err
}

func safeAbort(p Pending) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = storePanic(r)
		}
	}()
	return p.Abort()
}

func safeRemove(r refs.Remover, path string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the remover panicked: %v", v)
		}
	}()
	return r.Remove(path)
}
