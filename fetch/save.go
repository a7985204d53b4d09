package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/mcplrefs/refcore/refs"
)

// record saves the verified facts on the record, or withdraws the copy
// when the record was let go, took a new digest, or was marked meanwhile.
func (f *Fetcher) record(c *copier, res Result) outcome {
	fl := c.fl
	ctx, rec, name := context.WithoutCancel(fl.ctx), fl.t.rec, fl.t.server
	forHost := f.fetchNever || fl.anyHost()
	if c.hostOnly && !f.reg.MarkedHere(rec.URI) {
		// The copy went to the host-only store because the mark store
		// could not be read, and no mark is known now. A record not marked
		// never may not name a copy there (views and the model's fetches
		// would show its path), and an unrecorded copy would be lost to
		// the host's cleanup: it is removed, and a later fetch may succeed.
		f.withdraw(ctx, c, res.Path, "the never marks could not be read as the copy started, and no mark is known")
		return failure(failUncheckedDuring(name))
	}
	// The copy may stay once a never mark has landed when it is wanted
	// whatever its mark (by the host itself, or by a fetcher told to fetch
	// never references), and is not in the shared store while a host-only
	// store exists.
	keep := forHost && (f.hostStore == nil || c.hostOnly)
	if c.unchecked && !keep {
		// The mark store could not be read before the commit, and no
		// caller may keep a copy that may be marked: it is dropped before
		// the record names it.
		f.withdraw(ctx, c, res.Path, "the never marks could not be read before the copy was kept")
		return c.markedOutcome()
	}
	save := f.reg.Save
	if keep {
		save = f.reg.SaveMarked
	}
	switch err := save(rec.ID, res.Copy, rec.Testimony); {
	case errors.Is(err, refs.ErrGone):
		if f.held(rec) {
			// Still held, so the record took a new digest meanwhile: the
			// bytes answer testimony it no longer holds.
			f.withdraw(ctx, c, res.Path, "the reference took a new digest during the fetch")
			return failure(failReissued(name))
		}
		f.withdraw(ctx, c, res.Path, "the registry let the record go during the fetch")
		return failure(failGone(name))
	case errors.Is(err, refs.ErrMarked):
		f.withdraw(ctx, c, res.Path, "a never mark landed during the fetch")
		return c.markedOutcome()
	case err != nil:
		f.withdraw(ctx, c, res.Path, "the registry refused the copy")
		return failure(failGone(name))
	}
	out := outcome{res: res}
	if f.reg.MarkedHere(rec.URI) || c.marked {
		if !keep {
			// The mark landed after the save: the registry forgot the
			// copy, and no caller may have it.
			f.withdraw(ctx, c, res.Path, "a never mark landed as the copy was saved")
			return c.markedOutcome()
		}
		if !f.fetchNever {
			out.modelFail, _ = c.markFailures()
		}
	}
	attrs := []slog.Attr{slog.String("ref", rec.ID), slog.String("server", name), slog.String("path", res.Path),
		slog.Int64("bytes", res.Bytes), slog.String("type", res.MimeType),
		slog.Bool("digestVerified", res.DigestVerified), slog.Bool("forHost", forHost)}
	if f.hostStore != nil {
		attrs = append(attrs, slog.Bool("hostStore", c.hostOnly))
	}
	f.log.LogAttrs(ctx, slog.LevelInfo, "fetch: reference fetched", attrs...)
	return out
}

// markedOutcome answers the callers of a copy a never mark made the
// fetcher drop (or a mark store that could not be read, while no mark is
// known): the model's are withheld, and the host's, whose copy was going
// to the shared store beside a host-only store, may fetch again.
func (c *copier) markedOutcome() outcome {
	model, host := c.markFailures()
	if c.f.hostStore != nil && !c.hostOnly {
		return outcome{fail: host, modelFail: model}
	}
	return failure(model)
}

// markFailures are the answers to the model's and the host's callers of a
// download stopped by a mark, worded by whether one is known or the mark
// store could only not be read.
func (c *copier) markFailures() (model, host *Failure) {
	name := c.fl.t.server
	if c.unchecked && !c.f.reg.MarkKnown(c.fl.t.rec.URI) {
		return failUncheckedDuring(name), failUncheckedDuring(name)
	}
	return failWithheldDuring(name), failWithheldInShared(name)
}

// withdraw removes the copy c committed at path, which no record may
// name, through the store that holds it, when that is a [refs.Remover],
// and says so in the log either way. The store's Remove gets a context
// that ends after withdrawMax: withdraw runs with the record's copy lock
// held, which fetches of the record wait for.
func (f *Fetcher) withdraw(ctx context.Context, c *copier, path, why string) {
	store, id := c.store, c.fl.t.rec.ID
	ctx, cancel := context.WithTimeout(ctx, withdrawMax)
	defer cancel()
	r, ok := store.(refs.Remover)
	if !ok {
		f.log.LogAttrs(ctx, slog.LevelWarn, "fetch: a copy no record names stays in storage, since the store cannot remove files",
			slog.String("ref", id), slog.String("path", path), slog.String("why", why))
		return
	}
	if err := safeRemove(ctx, r, path); err != nil {
		f.log.LogAttrs(ctx, slog.LevelError, "fetch: could not remove a copy no record names",
			slog.String("ref", id), slog.String("path", path), slog.String("why", why), slog.String("err", oneLine(err.Error(), 300)))
		return
	}
	f.log.LogAttrs(ctx, slog.LevelInfo, "fetch: removed a copy no record names",
		slog.String("ref", id), slog.String("path", path), slog.String("why", why))
}

func (f *Fetcher) abortPending(ctx context.Context, id string, p Pending) {
	ctx, cancel := context.WithTimeout(ctx, abortMax)
	defer cancel()
	if err := safeAbort(ctx, p); err != nil {
		f.log.LogAttrs(ctx, slog.LevelError, "fetch: the store could not discard an unfinished copy",
			slog.String("ref", id), slog.String("err", oneLine(err.Error(), 300)))
	}
}

// abortMax bounds how long a store's Abort may take: its context ends
// then. Abort runs after every caller of the download left or failed, and
// the last to leave is answered only once it returns, so a store that
// waited on a context that never ends would hold that caller for good
// (TestAbortContextEnds). A variable only so that the test can shorten it.
var abortMax = 30 * time.Second

// withdrawMax bounds how long a store's Remove may take when the fetcher
// removes a copy it committed and cannot keep (TestWithdrawBounded). A
// variable only so that the test can shorten it.
var withdrawMax = 30 * time.Second

// report calls a request's progress callback. It is the host's code: a
// panic in it is logged, not a crash, and the download goes on.
func (f *Fetcher) report(p func(got, claimed int64), got, claimed int64) {
	defer func() {
		if r := recover(); r != nil {
			f.log.Error("fetch: a progress callback panicked", "panic", fmt.Sprint(r))
		}
	}()
	p(got, claimed)
}

// The store is the host's code: a panic in it is a storage failure, not a
// crash.

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

// safeCommit commits p under ctx. A commit that fails or panics is
// followed by an abort under abortCtx, so the store may discard what it
// began even when ctx has ended.
func safeCommit(ctx, abortCtx context.Context, p Pending) (path string, err error) {
	defer func() {
		if r := recover(); r != nil {
			path, err = "", storePanic(r)
		}
		if err != nil {
			err = errors.Join(err, safeAbort(abortCtx, p))
		}
	}()
	path, err = p.Commit(ctx)
	if err == nil && path == "" {
		err = errors.New("the store returned no path")
	}
	return path, err
}

func safeAbort(ctx context.Context, p Pending) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = storePanic(r)
		}
	}()
	return p.Abort(ctx)
}

func safeRemove(ctx context.Context, r refs.Remover, path string) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = storePanic(rec)
		}
	}()
	return r.Remove(ctx, path)
}
