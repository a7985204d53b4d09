package fetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// replaceTmpMidFetch returns a handler that sends a first part, waits
// until the DirStore has begun its partial copy, then (as a local process
// with write access to the store directory) removes the partial copy and
// plants its own file, or a symbolic link to one, under the same
// temporary name; then it sends the rest.
func replaceTmpMidFetch(link bool) func(h *hostileEnv) http.HandlerFunc {
	return midCopy(func(h *hostileEnv, tmp string) bool {
		p := filepath.Join(h.dir, tmp)
		if err := os.Remove(p); err != nil {
			h.t.Error(err)
			return false
		}
		if link {
			outside := filepath.Join(filepath.Dir(h.dir), "planted-outside")
			if err := os.WriteFile(outside, plantedBytes, 0o644); err != nil {
				h.t.Error(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				h.t.Error(err)
			}
		} else if err := os.WriteFile(p, plantedBytes, 0o644); err != nil {
			h.t.Error(err)
		}
		return true
	})
}

// midCopy returns a handler that sends a first part of hostilePayload,
// waits until the DirStore has begun its partial copy, lets tamper act on
// the store directory and the copy's temporary name, then sends the rest,
// unless tamper reported a failure.
func midCopy(tamper func(h *hostileEnv, tmp string) bool) func(h *hostileEnv) http.HandlerFunc {
	return func(h *hostileEnv) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(hostilePayload[:4096])
			w.(http.Flusher).Flush()
			tmp := waitForTmp(r, h.dir)
			if tmp == "" {
				h.t.Error("the store never began a partial copy")
				return
			}
			if tamper(h, tmp) {
				w.Write(hostilePayload[4096:])
			}
		}
	}
}

// checkPathGenuine: a fetch that returns OK must return a path that holds
// the served bytes, as a plain file inside the store's own directory.
func checkPathGenuine(t *testing.T, h *hostileEnv, r fetchReturn) {
	t.Helper()
	if r.err != nil {
		return // refused: the runner checked that nothing was kept
	}
	b, err := os.ReadFile(r.res.Path)
	switch {
	case err != nil:
		t.Errorf("Fetch returned OK (digest verified: %t), but its path %s does not read: %v", r.res.DigestVerified, r.res.Path, err)
	case bytes.Equal(b, plantedBytes):
		t.Errorf("Fetch returned OK (digest verified: %t) with the planted bytes at %s", r.res.DigestVerified, r.res.Path)
	case !bytes.Equal(b, hostilePayload):
		t.Errorf("Fetch returned OK, but %s holds %d other bytes", r.res.Path, len(b))
	}
	if fi, err := os.Lstat(r.res.Path); err == nil && !fi.Mode().IsRegular() {
		t.Errorf("the copy at %s is a %v, not a plain file", r.res.Path, fi.Mode().Type())
	}
}

func TestHostileStoreBugs(t *testing.T) {
	runHostile(t, []hostileCase{
		{name: "replace-tmp-with-file", attack: "mid-fetch, the partial copy is replaced by a planted file under the same temporary name",
			stores: []string{"dir"}, handler: replaceTmpMidFetch(false), requests: 1,
			block: hblk("$ORIGIN/payload", `,"digest":"`+digestOf(hostilePayload)+`"`),
			ok:    true, orCode: CodeStorage, check: checkPathGenuine},
		{name: "replace-tmp-with-symlink", attack: "mid-fetch, the partial copy is replaced by a symbolic link to a planted file outside the store",
			stores: []string{"dir"}, handler: replaceTmpMidFetch(true), requests: 1,
			block: hblk("$ORIGIN/payload", `,"digest":"`+digestOf(hostilePayload)+`"`),
			ok:    true, orCode: CodeStorage, check: checkPathGenuine},
		{name: "swap-dir-planted-final-name", attack: "mid-fetch, the store directory is swapped for a link to a directory with planted files under the temporary and the final names",
			stores: []string{"dir"}, handler: swapDirMidFetch(true), requests: 1,
			block: hblk("$ORIGIN/payload", `,"digest":"`+digestOf(hostilePayload)+`"`),
			ok:    true, orCode: CodeStorage, check: checkPathGenuine},
	})
}

// abortGateStore is a MemoryStore whose Abort tells aborting and then
// waits for release: it holds a failed flight open, as a slow store (a
// network store, a busy disk) does.
type abortGateStore struct {
	*MemoryStore
	aborting chan struct{}
	release  chan struct{}
	// began, if not nil, is closed when the first copy begins.
	began     chan struct{}
	beganOnce sync.Once
}

func (s *abortGateStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	if s.began != nil {
		s.beganOnce.Do(func() { close(s.began) })
	}
	return &abortGatePending{Pending: p, s: s}, err
}

type abortGatePending struct {
	Pending
	s *abortGateStore
}

func (p *abortGatePending) Abort(ctx context.Context) error {
	close(p.s.aborting)
	<-p.s.release
	return p.Pending.Abort(ctx)
}

// TestHostileLateJoinerPastCeiling: a caller whose fetch joins a flight
// that has already passed the host ceiling (the flight is cleaning up)
// must get the host ceiling's failure, like the flight's own callers;
// it gets "too large" with a remedy about the budget instead.
func TestHostileLateJoinerPastCeiling(t *testing.T) {
	store := &abortGateStore{MemoryStore: NewMemoryStore(), aborting: make(chan struct{}), release: make(chan struct{}),
		began: make(chan struct{})}
	// The copy begins (and so has something to abort) before the body
	// passes the ceiling: the store is written on a goroutine of its own,
	// which may lag behind the reading.
	e := newEnv(t, endlessAfter(store.began), withCeiling(64<<10), withStore(store), func(e *env) { e.mem = store.MemoryStore },
		withConfig(func(c *Config) { c.ChunkSize = 16 << 10 }))
	rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
	first := make(chan error, 1)
	go func() {
		_, err := e.f.Fetch(context.Background(), rec.ID, Request{Timeout: 10 * time.Second})
		first <- err
	}()
	select {
	case <-store.aborting:
	case <-time.After(10 * time.Second):
		t.Fatal("the first fetch never aborted its copy")
	}
	// The flight passed the ceiling and is discarding its copy: a second
	// caller, with the same (default) max bytes, arrives now.
	r := fetchBounded(t, e, context.Background(), rec.ID, Request{Timeout: 10 * time.Second}, nil)
	close(store.release)
	if err := <-first; !errors.Is(err, CodeHostCeiling) {
		t.Errorf("the first caller got %v, want the host ceiling", err)
	}
	f := failureOf(t, r.err, CodeHostCeiling)
	t.Logf("the late caller got %s: %s. %s", f.Code, f.Clause, f.Remedy)
}
