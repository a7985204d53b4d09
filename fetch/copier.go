package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/copylock"
)

// copier streams one response body into the store: it decodes gzip,
// counts and checks every chunk, hashes the decoded bytes, sniffs the
// media type from the first bytes, and commits the copy only when every
// check passed. Memory stays bounded by its ring of buffers (ringBytes).
type copier struct {
	f    *Fetcher
	fl   *flight
	resp *http.Response
	wire *wireReader
	src  io.Reader
	head []byte // the first bytes, held until the media type is known
	h    hash.Hash
	// store is where the copy goes: the host-only store for a reference
	// marked never when the copy started (hostOnly), else the shared one.
	store    Store
	hostOnly bool
	pend     Pending
	mime     string
	n        int64 // decoded bytes read
	// marked is set once a never mark landed during the download, or the
	// mark store could not be read; unchecked says it was only the latter.
	marked, unchecked bool
	// modelFail, once set, answers the model's callers of a download
	// stopped for everyone (see markLanded).
	modelFail *Failure
	// fill is set for a gzip body: see readChunk.
	fill bool
	// ahead is the sum of the bytes hashAhead read ahead of the hashing;
	// it is kept only so that those reads stay in the program.
	ahead byte
	// failed is set once the reading failed: the copy will be discarded,
	// so nothing more is hashed or written (see stream).
	failed atomic.Bool
}

func newCopier(f *Fetcher, fl *flight, resp *http.Response, gz bool) *copier {
	c := &copier{
		f: f, fl: fl, resp: resp,
		// The host's bound until the first chunk is read (a gzip header,
		// read now, is at most about 67 KB); see readCap.
		wire: &wireReader{r: resp.Body, limit: f.set.wireCeiling},
		head: make([]byte, 0, sniffLen),
		h:    sha256.New(),
	}
	c.store = f.store
	// Marked asks the mark store too, where another host's mark may be;
	// a store that cannot be read counts as a mark, and record then
	// removes the copy unless a mark is known by then.
	if f.hostStore != nil && (fl.t.rec.Never || f.reg.Marked(fl.ctx, fl.t.rec.URI)) {
		c.store, c.hostOnly = f.hostStore, true
	}
	c.src = c.wire
	if gz {
		br := bufio.NewReaderSize(c.wire, 4096)
		if z, err := gzip.NewReader(br); err == nil {
			z.Multistream(false)
			c.src = &gunzip{z: z, src: br}
			c.fill = true
		} else {
			c.src = nil
		}
	}
	return c
}

// run copies the body and finishes the copy. Every failure path discards
// the partial copy before it returns.
func (c *copier) run() outcome {
	if c.src == nil {
		return failure(c.readFailure())
	}
	if fail := c.stream(); fail != nil {
		c.abort()
		return outcome{fail: fail, modelFail: c.modelFail}
	}
	// From the last checks before the commit until the record names the
	// copy (or the copy is withdrawn), this is the only work on the
	// record's copy: another fetcher's commit waits, and so does the
	// removal of a copy the record stopped naming, which could otherwise
	// delete this copy at the same storage name (TestStaleCommitAtOnce,
	// TestRemovalKeepsCopyCommittedMeanwhile).
	release, err := copylock.Hold(c.fl.ctx, c.f.reg, c.fl.t.rec.ID)
	if err != nil {
		c.abort()
		return outcome{fail: errAbandoned, modelFail: c.modelFail}
	}
	defer release()
	res, fail := c.commit()
	if fail != nil {
		c.abort()
		return outcome{fail: fail, modelFail: c.modelFail}
	}
	if res.FromCopy {
		c.abort() // the copy this download made is not needed
		return c.savedOutcome(res)
	}
	if !c.fl.finish() {
		// Every caller left while the store committed, and each is told
		// the fetch failed: the copy may not stay.
		c.f.withdraw(context.WithoutCancel(c.fl.ctx), c, res.Path, "every caller left while the store committed the copy")
		return failure(errAbandoned)
	}
	return c.f.record(c, res)
}

// savedOutcome answers the callers with res, the copy another fetcher
// saved while this one downloaded, once this one's own copy is discarded.
// The record is read again first: the discarding may take a while, and a
// new digest or a never mark meanwhile stops the record naming that copy,
// whose file is removed once the copy lock is let go
// (TestSavedCopyServedOnlyWhileNamed). The callers are then answered as a
// commit of their own would have been.
func (c *copier) savedOutcome(res Result) outcome {
	t := c.fl.t
	marked := c.marked || c.f.reg.MarkedHere(t.rec.URI)
	e, ok := c.f.reg.EntryForURI(t.rec.URI)
	switch {
	case !ok || e.ID != t.rec.ID:
		return failure(failGone(t.server))
	case e.Copy == nil || *e.Copy != res.Copy:
		if marked {
			return c.markedOutcome()
		}
		return failure(failReissued(t.server))
	}
	out := outcome{res: res, modelFail: c.modelFail}
	if out.modelFail == nil && !c.f.fetchNever && marked {
		out.modelFail = failWithheld(t.server)
	}
	return out
}

// markLanded drops the callers who wanted the bytes for the model, once a
// never mark landed (or, unchecked, the mark store could not be read); the
// download goes on only for the host's own callers (or for every caller
// under Config.FetchNever). A copy going to the shared store while a
// host-only store exists goes on for nobody: the host's callers are told
// to fetch again, which saves apart, and a model's caller that joins as
// the copy is discarded is answered as the others were.
func (c *copier) markLanded(unchecked bool) *Failure {
	c.marked, c.unchecked = true, unchecked
	modelFail, hostFail := c.markFailures()
	if c.f.hostStore != nil && !c.hostOnly {
		c.modelFail = modelFail
		if fail := c.fl.dropModel(modelFail); fail != nil {
			return fail
		}
		return hostFail
	}
	if c.f.fetchNever {
		return nil
	}
	return c.fl.dropModel(modelFail)
}

// write hands a chunk to the store, beginning the copy once the first
// bytes have told its media type. (The hasher of stream hashes it.)
func (c *copier) write(chunk []byte) *Failure {
	if c.pend == nil {
		k := min(sniffLen-len(c.head), len(chunk))
		c.head = append(c.head, chunk[:k]...)
		chunk = chunk[k:]
		if len(c.head) < sniffLen {
			return nil
		}
		if fail := c.begin(); fail != nil {
			return fail
		}
		if c.stopped() {
			// So did writing the first bytes: the rest is not written.
			return errAbandoned
		}
	}
	if len(chunk) == 0 {
		return nil
	}
	if err := safeWrite(c.pend, chunk); err != nil {
		return failStorage(c.fl.t.server, "the store could not write: "+oneLine(err.Error(), 300))
	}
	return nil
}

// begin opens the copy in the store, named from the record's id and the
// observed media type, and writes the bytes held so far.
func (c *copier) begin() *Failure {
	t := c.fl.t
	c.mime = observedType(c.head, c.resp.Header.Get("Content-Type"), t.rec.Testimony.MimeType)
	p, err := safeBegin(c.fl.ctx, c.store, storageName(t.rec.ID, c.mime), c.mime)
	if err != nil {
		return failStorage(t.server, "the store could not begin the copy: "+oneLine(err.Error(), 300))
	}
	c.pend = p
	if c.stopped() {
		// Beginning took long enough for the copy to be given up: the
		// store gets none of its bytes (abort discards what it began).
		return errAbandoned
	}
	if err := safeWrite(c.pend, c.head); err != nil {
		return failStorage(t.server, "the store could not write: "+oneLine(err.Error(), 300))
	}
	return nil
}

// commit checks the digest and the mark once more, then makes the copy
// visible in the store. It returns the record's saved copy instead, with
// FromCopy set and the download's copy not committed, when another
// fetcher saved one meanwhile.
func (c *copier) commit() (Result, *Failure) {
	t := c.fl.t
	verified := false
	if t.rec.Testimony.Has(convert.FieldDigest) {
		sum := c.h.Sum(nil)
		claim := t.rec.Testimony.Digest
		want, ok := decodeDigest(claim)
		if !ok || !bytes.Equal(sum, want) {
			return Result{}, failDigest(t.server, claim, "sha256:"+base64.RawURLEncoding.EncodeToString(sum))
		}
		verified = true
	}
	if c.pend == nil {
		// The whole payload fits in the bytes held to sniff its type, so
		// the store has been given none of it yet. A copy going to the
		// shared store beside a host-only store, which a mark stops, is
		// not begun at all once one has landed.
		if !c.marked && c.f.hostStore != nil && !c.hostOnly && c.f.reg.Marked(c.fl.ctx, t.rec.URI) {
			return Result{}, c.markLanded(!c.f.reg.MarkKnown(t.rec.URI))
		}
		if fail := c.begin(); fail != nil {
			return Result{}, fail
		}
	}
	// The last word before the copy is visible: a mark from the mark store
	// (another host of a fleet) counts too.
	if !c.marked && c.f.reg.Marked(c.fl.ctx, t.rec.URI) {
		if fail := c.markLanded(!c.f.reg.MarkKnown(t.rec.URI)); fail != nil {
			return Result{}, fail
		}
	}
	// A digest the record no longer claims: another fetcher of this
	// registry may have saved the bytes of the new one under the same
	// storage name, which this commit would replace with stale bytes
	// (TestStaleCommitKeepsNewerCopy). The save below would refuse the
	// copy anyway.
	if e, ok := c.f.reg.EntryForURI(t.rec.URI); ok && e.ID == t.rec.ID {
		if e.Testimony.Has(convert.FieldDigest) && e.Testimony.Digest != t.rec.Testimony.Digest {
			return Result{}, failReissued(t.server)
		}
		if e.Copy != nil {
			// Another fetcher of this registry saved a copy while this
			// one downloaded. That copy is the record's, and this one is
			// not committed: under the same storage name it would replace
			// the file the record names with bytes its facts do not
			// describe, or, in another store, be a second copy nothing
			// names (TestCopySavedMeanwhileServed). The callers get the
			// saved copy, as a call made a moment later would.
			return Result{Copy: *e.Copy, FromCopy: true}, nil
		}
	}
	// The commit's context ends when the last caller leaves, so a store
	// that may block (an upload) can stop and the caller's deadline holds.
	path, err := safeCommit(c.fl.ctx, context.WithoutCancel(c.fl.ctx), c.pend)
	if err != nil {
		c.pend = nil // safeCommit has aborted it
		if c.fl.ctx.Err() != nil {
			return Result{}, errAbandoned
		}
		return Result{}, failStorage(t.server, "the store could not commit the copy: "+oneLine(err.Error(), 300))
	}
	c.pend = nil
	return Result{Copy: convert.Copy{Path: path, Bytes: c.n, MimeType: c.mime, DigestVerified: verified}}, nil
}

// abort stops the transfer and discards the partial copy, before the
// failure is answered.
func (c *copier) abort() {
	c.fl.cancel()
	c.resp.Body.Close()
	if c.pend != nil {
		// The flight's context is canceled by now; the store still needs
		// one that lets it discard the copy.
		c.f.abortPending(context.WithoutCancel(c.fl.ctx), c.fl.t.rec.ID, c.pend)
		c.pend = nil
	}
}

// readFailure classifies a failed read of the body.
func (c *copier) readFailure() *Failure {
	name := c.fl.t.server
	switch {
	case errors.Is(c.wire.err, errWireCeiling):
		// Decoded bytes never pass the ceiling, so even the host's own
		// bound on encoded bytes is passed only by a body that more than
		// doubles what it decodes to: an encoding fault, whatever bound
		// it met.
		return failWireOverDecoded(name, c.wire.n, c.n)
	case c.fl.ctx.Err() != nil:
		return errAbandoned
	case c.wire.err != nil:
		return failBrokeOff(name, c.n, causeOf(c.wire.err, c.fl.t))
	}
	return failCorruptGzip(name, c.n)
}

// storageName is "<refId><ext>". The id is host-generated; the server's
// name and the reference's name never take part.
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
	// One byte past the limit is read, to see it passed; room+1 is taken
	// only below len(p), so a limit of math.MaxInt64 does not overflow.
	room := w.limit - w.n
	if room < 0 {
		// The limit fell below what was read: another download spent
		// the budget it was worked out from.
		w.err = errWireCeiling
		return 0, w.err
	}
	if int64(len(p)) > room {
		p = p[:room+1]
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

// readChunk reads the body's next chunk into b. A gzip body is read until
// b is full or the body ends: the inflater hands out at most its 32 KiB
// window per Read, and each chunk that small woke the hasher, which waits
// idle on so slow a source, with a futex call on the reading goroutine
// (BenchmarkFetchGzip against BenchmarkBaseline/gzip). A plain body is
// read as it arrives, which keeps the hasher busy.
func (c *copier) readChunk(b []byte) (int, error) {
	if !c.fill {
		return c.src.Read(b)
	}
	n := 0
	for n < len(b) {
		m, err := c.src.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
