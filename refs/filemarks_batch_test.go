package refs

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// batchKey is a store key for n, in the form Mark accepts.
func batchKey(n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "https://files.example/b/%d", n))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// linesOf counts the lines of the mark file at path that hold
// batchKey(n).
func linesOf(t *testing.T, path string, n int) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), batchKey(n))
}

// openBatchStore opens a mark file in a new temporary directory, closed
// when the test ends, and returns it with its path.
func openBatchStore(t *testing.T) (*FileMarks, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "marks")
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, path
}

// holdFirstSync makes the first sync of the mark file wait until release
// is called, and every later one run later (nil: sync for real). held is
// closed once the first sync is waiting; syncs counts them all.
func holdFirstSync(t *testing.T, later func(*os.File) error) (held <-chan struct{}, release func(), syncs *atomic.Int32) {
	t.Helper()
	var (
		gate    = make(chan struct{})
		holding = make(chan struct{})
		n       atomic.Int32
	)
	if later == nil {
		later = (*os.File).Sync
	}
	old := syncMarkFile
	t.Cleanup(func() { syncMarkFile = old })
	syncMarkFile = func(f *os.File) error {
		if n.Add(1) == 1 {
			close(holding)
			<-gate
			return f.Sync()
		}
		return later(f)
	}
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return holding, release, &n
}

// queueBehind marks batchKey(0) on m, whose sync holdFirstSync holds,
// then calls mark(i) for i from 1 to n, each on a goroutine of its own.
// Once all n are waiting to write, it calls between (if not nil),
// releases the held sync and waits for every mark to return.
func queueBehind(t *testing.T, m *FileMarks, held <-chan struct{}, release func(), n int, mark func(i int), between func()) {
	t.Helper()
	var waiting, done sync.WaitGroup
	waiting.Add(n)
	var calls atomic.Int32
	testHookMarkWaits = func() {
		if calls.Add(1) > 1 { // the first is Mark 0's own
			waiting.Done()
		}
	}
	defer func() { testHookMarkWaits = nil }()
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
	})
	<-held // Mark 0's sync is under way and held
	for i := 1; i <= n; i++ {
		done.Go(func() { mark(i) })
	}
	waiting.Wait()
	if between != nil {
		between()
	}
	release()
	done.Wait()
}

// TestFileMarksShareSync holds the sync of one mark while many others
// arrive: they must all go to disk with one more sync, not one each, and
// each must return only once its own line is synced (N7: a never mark is
// durable before it is reported done).
func TestFileMarksShareSync(t *testing.T) {
	m, path := openBatchStore(t)
	held, release, syncs := holdFirstSync(t, nil)
	const others = 16
	var returned [others + 1]atomic.Bool
	queueBehind(t, m, held, release, others, func(i int) {
		if err := m.Mark(t.Context(), batchKey(i), fmt.Sprint("s", i%3)); err != nil {
			t.Errorf("Mark %d = %v", i, err)
		}
		returned[i].Store(true)
	}, func() {
		for i := range returned {
			if returned[i].Load() {
				t.Errorf("Mark %d returned before any sync ended", i)
			}
		}
	})
	if got := syncs.Load(); got != 2 {
		t.Errorf("%d marks made while one sync was held took %d syncs; want 2 (one for the first, one shared by the rest)", others+1, got)
	}
	for i := 0; i <= others; i++ {
		if n := linesOf(t, path, i); n != 1 {
			t.Errorf("the file holds mark %d %d times; want once", i, n)
		}
	}
}

// TestFileMarksSharedSyncFails fails the sync that marks waiting behind
// another share: every one of them fails, each reads marked (its line is
// in the file), and a retry writes it again and succeeds (N7).
func TestFileMarksSharedSyncFails(t *testing.T) {
	m, path := openBatchStore(t)
	diskErr := errors.New("disk gone")
	held, release, syncs := holdFirstSync(t, func(*os.File) error { return diskErr })
	const others = 4
	errs := make([]error, others+1)
	queueBehind(t, m, held, release, others, func(i int) { errs[i] = m.Mark(t.Context(), batchKey(i), "vst") }, nil)
	if got := syncs.Load(); got != 2 {
		t.Errorf("%d syncs; want 2 (the waiting marks share one)", got)
	}
	for i := 1; i <= others; i++ {
		if !errors.Is(errs[i], diskErr) {
			t.Errorf("Mark %d, synced with the others, = %v; want the sync's error", i, errs[i])
		}
		if ok, _ := m.Marked(t.Context(), batchKey(i)); !ok {
			t.Errorf("Mark %d: its line is in the file but it reads unmarked", i)
		}
	}
	syncMarkFile = (*os.File).Sync
	for i := 1; i <= others; i++ {
		if err := m.Mark(t.Context(), batchKey(i), "vst"); err != nil {
			t.Errorf("retried Mark %d = %v", i, err)
		}
	}
	for i := 1; i <= others; i++ {
		if n := linesOf(t, path, i); n != 2 {
			t.Errorf("mark %d is in the file %d times; want twice (the unsynced write and the retry)", i, n)
		}
	}
}

// TestFileMarksContextEndsWhileWaiting ends a Mark's context while it
// waits behind another mark's sync: it fails and writes nothing, and the
// mark waiting with it is written.
func TestFileMarksContextEndsWhileWaiting(t *testing.T) {
	m, path := openBatchStore(t)
	held, release, syncs := holdFirstSync(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errs := make([]error, 3)
	queueBehind(t, m, held, release, 2, func(i int) {
		if i == 1 {
			errs[i] = m.Mark(ctx, batchKey(i), "vst")
		} else {
			errs[i] = m.Mark(t.Context(), batchKey(i), "vst")
		}
	}, cancel)
	if !errors.Is(errs[1], context.Canceled) {
		t.Errorf("Mark whose context ended while it waited = %v; want context.Canceled", errs[1])
	}
	if errs[2] != nil {
		t.Errorf("Mark waiting beside it = %v; want nil", errs[2])
	}
	if ok, _ := m.Marked(t.Context(), batchKey(1)); ok {
		t.Errorf("the mark whose context ended reads marked")
	}
	if linesOf(t, path, 1) != 0 {
		t.Errorf("the mark whose context ended was written")
	}
	if got := syncs.Load(); got != 2 {
		t.Errorf("%d syncs; want 2", got)
	}
}

// TestFileMarksPanicInSharedWrite makes the sync shared by waiting marks
// panic; the caller that ran it recovers, as net/http does for a
// handler. No other waiter may then read its Mark as done (N7).
func TestFileMarksPanicInSharedWrite(t *testing.T) {
	m, _ := openBatchStore(t)
	held, release, syncs := holdFirstSync(t, func(*os.File) error { panic("the disk layer failed") })
	const others = 4
	errs := make([]error, others+1)
	panicked := make([]bool, others+1)
	queueBehind(t, m, held, release, others, func(i int) {
		defer func() { panicked[i] = recover() != nil }()
		errs[i] = m.Mark(t.Context(), batchKey(i), "vst")
	}, nil)
	if got := syncs.Load(); got != 2 {
		t.Errorf("%d syncs; want 2 (one panicked for all the waiting marks)", got)
	}
	for i := 1; i <= others; i++ {
		if !panicked[i] && errs[i] == nil {
			t.Errorf("Mark %d returned nil, though the sync of its line panicked", i)
		}
	}
}

// BenchmarkFileMarksParallel marks distinct keys from many goroutines at
// once, as a host taking many results with never references does, and
// reports the syncs each mark cost.
func BenchmarkFileMarksParallel(b *testing.B) {
	m, err := OpenFileMarks(filepath.Join(b.TempDir(), "marks"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var syncs, next atomic.Int64
	defer func(s func(*os.File) error) { syncMarkFile = s }(syncMarkFile)
	syncMarkFile = func(f *os.File) error { syncs.Add(1); return f.Sync() }
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := m.Mark(context.Background(), batchKey(int(next.Add(1))), "vst"); err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/op")
}

// TestFileMarksBatchesUnderLoad marks overlapping pairs from many
// goroutines while syncs fail now and then, some contexts end early and
// Close arrives at the end, and the file starts near its rewrite bound:
// every Mark that returned nil must be in the file when it is opened
// again, and must read marked at once (N7).
func TestFileMarksBatchesUnderLoad(t *testing.T) {
	path := seedDuplicates(t, compactMinLines-4) // a rewrite comes soon
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	old := syncMarkFile
	t.Cleanup(func() { syncMarkFile = old })
	syncMarkFile = func(f *os.File) error {
		if calls.Add(1)%5 == 0 {
			return errors.New("the disk hiccuped")
		}
		return f.Sync()
	}
	var (
		mu   sync.Mutex
		done = map[filePair]bool{}
		wg   sync.WaitGroup
	)
	record := func(p filePair) {
		mu.Lock()
		done[p] = true
		mu.Unlock()
	}
	for g := range 32 {
		wg.Go(func() {
			for j := range 40 {
				p := filePair{batchKey((g*7 + j*13) % 150), fmt.Sprint("s", j%3)}
				ctx, cancel := context.WithCancel(t.Context())
				if (g+j)%6 == 0 {
					cancel()
				}
				err := m.Mark(ctx, p.key, p.server)
				cancel()
				if err == nil {
					record(p)
					if ok, _ := m.Marked(t.Context(), p.key); !ok {
						t.Errorf("Mark returned nil but Marked reads false")
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 { // Close races these
		wg.Go(func() {
			p := filePair{batchKey(500 + g), "late"}
			if err := m.Mark(t.Context(), p.key, p.server); err == nil {
				record(p)
			} else if !errors.Is(err, os.ErrClosed) {
				t.Errorf("Mark racing Close = %v; want nil or os.ErrClosed", err)
			}
		})
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	wg.Wait()
	if len(done) == 0 {
		t.Fatal("no mark went through")
	}
	syncMarkFile = old
	again, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for p := range done {
		if ok, _ := again.Marked(t.Context(), p.key); !ok {
			t.Errorf("a mark reported done (%q) is missing after reopening", p.server)
		}
	}
}

// TestFileMarksRewriteUnsyncedDirectory: a mark whose line reached the
// file but whose sync failed is not done; a rewrite that then carries the
// line to a new file, whose rename the directory sync fails to make
// durable, must not count it done either, since a crash could bring back
// the old file without it. Marking it again must write it again, with
// the directory synced before Mark returns (N7).
func TestFileMarksRewriteUnsyncedDirectory(t *testing.T) {
	path := seedDuplicates(t, compactMinLines) // the next new mark rewrites the file
	oldDir, oldSync := syncMarkDir, syncMarkFile
	t.Cleanup(func() { syncMarkDir, syncMarkFile = oldDir, oldSync })
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	unsynced := filePair{batchKey(1), "vst"}
	syncMarkFile = func(*os.File) error { return errors.New("sync failed") }
	if err := m.Mark(t.Context(), unsynced.key, unsynced.server); err == nil {
		t.Fatal("Mark passed with a failing sync")
	}
	syncMarkFile = oldSync
	var dirSyncs atomic.Int32
	syncMarkDir = func(string) error { dirSyncs.Add(1); return errors.New("directory sync failed") }
	// A new mark takes the file past the bound: it is rewritten.
	if err := m.Mark(t.Context(), batchKey(2), "other"); err != nil {
		t.Fatalf("Mark = %v", err)
	}
	if dirSyncs.Load() == 0 {
		t.Fatal("the file was not rewritten")
	}
	dirSyncs.Store(0)
	syncMarkDir = func(string) error { dirSyncs.Add(1); return nil }
	if err := m.Mark(t.Context(), unsynced.key, unsynced.server); err != nil {
		t.Fatalf("Mark again = %v", err)
	}
	if dirSyncs.Load() == 0 {
		t.Errorf("Mark of a line only an unsynced rename holds returned nil without syncing the directory")
	}
}

// seedDuplicates writes a mark file of n lines that hold only two
// distinct marks, so that a rewrite comes once it passes compactMinLines,
// and returns its path.
func seedDuplicates(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "marks")
	var seed strings.Builder
	seed.WriteString(fileMarksHeader)
	for i := range n {
		seed.WriteString(string(markLine(filePair{batchKey(10_000 + i%2), "old"})))
	}
	if err := os.WriteFile(path, []byte(seed.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unsyncedThenRewritten opens the file at path, made by seedDuplicates
// with compactMinLines lines, fails the sync of a mark on batchKey(1),
// and then makes a new mark that rewrites the file with the directory
// sync doing rewriteDirSync. It returns the store and the unsynced pair.
// The hooks are restored when the test ends.
func unsyncedThenRewritten(t *testing.T, path string, rewriteDirSync func(string) error) (*FileMarks, filePair) {
	t.Helper()
	oldDir, oldSync := syncMarkDir, syncMarkFile
	t.Cleanup(func() { syncMarkDir, syncMarkFile = oldDir, oldSync })
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	p := filePair{batchKey(1), "vst"}
	syncMarkFile = func(*os.File) error { return errors.New("sync failed") }
	if err := m.Mark(t.Context(), p.key, p.server); err == nil {
		t.Fatal("Mark passed with a failing sync")
	}
	syncMarkFile = oldSync
	rewritten := false
	syncMarkDir = func(dir string) error { rewritten = true; return rewriteDirSync(dir) }
	func() {
		defer func() { _ = recover() }() // as a caller that recovers would
		_ = m.Mark(t.Context(), batchKey(2), "other")
	}()
	syncMarkDir = oldDir
	if !rewritten {
		t.Fatal("the new mark did not rewrite the file")
	}
	return m, p
}

// TestFileMarksReopenAfterUnsyncedRename closes the store after a
// rewrite whose rename the directory sync failed to make durable, and
// opens the file again: until the directory is synced, the marks only
// that rename holds are not on disk, so opening must sync it (here it
// fails, and so does the open) rather than count them done (N7).
func TestFileMarksReopenAfterUnsyncedRename(t *testing.T) {
	path := seedDuplicates(t, compactMinLines)
	dirErr := errors.New("directory sync failed")
	m, p := unsyncedThenRewritten(t, path, func(string) error { return dirErr })
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	syncMarkDir = func(string) error { return dirErr }
	again, err := OpenFileMarks(path)
	if err == nil {
		defer again.Close()
		if err := again.Mark(t.Context(), p.key, p.server); err == nil {
			t.Errorf("after reopening, Mark of a mark only an unsynced rename holds = nil, with no directory sync")
		}
		return
	}
	if !errors.Is(err, dirErr) {
		t.Errorf("OpenFileMarks = %v; want the directory sync's error", err)
	}
}

// TestFileMarksPanicInRewriteDirectorySync makes the directory sync of a
// rewrite panic, recovered by the caller: the store must still know the
// directory is not synced, and sync it before a later Mark of a mark
// only the rename holds returns nil (N7).
func TestFileMarksPanicInRewriteDirectorySync(t *testing.T) {
	path := seedDuplicates(t, compactMinLines)
	m, p := unsyncedThenRewritten(t, path, func(string) error { panic("the directory layer failed") })
	var dirSyncs atomic.Int32
	syncMarkDir = func(string) error { dirSyncs.Add(1); return nil }
	if err := m.Mark(t.Context(), p.key, p.server); err != nil {
		t.Fatalf("Mark = %v", err)
	}
	if dirSyncs.Load() == 0 {
		t.Errorf("Mark of a mark only an unsynced rename holds returned nil without syncing the directory")
	}
}

// TestFileMarksContextEndsBehindHeldWrite ends a Mark's context while the
// write it waits behind is still held, as a hung disk would hold it: the
// Mark must return the context's error then, not once the disk answers,
// and its mark must not be written afterwards (N7).
func TestFileMarksContextEndsBehindHeldWrite(t *testing.T) {
	m, path := openBatchStore(t)
	held, release, _ := holdFirstSync(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	returned := make(chan error, 1)
	queueBehind(t, m, held, release, 1, func(int) {
		returned <- m.Mark(ctx, batchKey(1), "vst")
	}, func() {
		cancel()
		select {
		case err := <-returned:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Mark whose context ended = %v; want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Mark whose context ended did not return while the write ahead of it was held")
		}
	})
	// The next write takes whatever is still queued.
	if err := m.Mark(t.Context(), batchKey(2), "vst"); err != nil {
		t.Fatalf("a later Mark = %v", err)
	}
	if linesOf(t, path, 1) != 0 {
		t.Errorf("the mark whose context ended was written by a later write")
	}
}

// TestZeroFileMarks: a FileMarks that OpenFileMarks did not make fails
// Mark with an error rather than waiting forever, reads nothing marked,
// and closes without error.
func TestZeroFileMarks(t *testing.T) {
	var m FileMarks
	if err := m.Mark(t.Context(), batchKey(1), "vst"); err == nil {
		t.Errorf("Mark on a zero FileMarks = nil; want an error")
	}
	if ok, err := m.Marked(t.Context(), batchKey(1)); ok || err != nil {
		t.Errorf("Marked on a zero FileMarks = %v, %v; want false, nil", ok, err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close on a zero FileMarks = %v", err)
	}
}

// panickingContext is a broken context a host might pass: its Err
// answers nil once, then panics.
type panickingContext struct {
	context.Context
	calls *atomic.Int32
}

func (c panickingContext) Err() error {
	if c.calls.Add(1) > 1 {
		panic("a broken context")
	}
	return nil
}

// TestFileMarksPanicWhileTakingBatch: the writer that takes a batch
// panics on one waiter's broken context (its caller recovering). No other
// waiter of that batch may read its Mark as done, and the store must stay
// usable: Marked does not block and a later Mark succeeds (N7).
func TestFileMarksPanicWhileTakingBatch(t *testing.T) {
	m, _ := openBatchStore(t)
	held, release, _ := holdFirstSync(t, nil)
	const others = 4
	errs := make([]error, others+1)
	panicked := make([]bool, others+1)
	queueBehind(t, m, held, release, others, func(i int) {
		defer func() { panicked[i] = recover() != nil }()
		ctx := t.Context()
		if i == 2 {
			ctx = panickingContext{ctx, new(atomic.Int32)}
		}
		errs[i] = m.Mark(ctx, batchKey(i), "vst")
	}, nil)
	for i := 1; i <= others; i++ {
		if !panicked[i] && errs[i] == nil {
			if ok, _ := m.Marked(t.Context(), batchKey(i)); !ok {
				t.Errorf("Mark %d returned nil, but its mark is not recorded", i)
			}
		}
	}
	if err := m.Mark(t.Context(), batchKey(100), "vst"); err != nil {
		t.Errorf("a later Mark = %v", err)
	}
}

// TestFileMarksAbandonedFloodBehindHungWrite is the hung disk under load:
// 200 Marks queue behind a write that does not finish, and their callers
// give up. Every one returns while the write is still held; once the disk
// answers, the next write drops them all (none is written, the queue is
// empty) and the store goes on (N7).
func TestFileMarksAbandonedFloodBehindHungWrite(t *testing.T) {
	m, path := openBatchStore(t)
	held, release, _ := holdFirstSync(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const flood = 200
	returned := make(chan error, flood)
	queueBehind(t, m, held, release, flood, func(i int) {
		returned <- m.Mark(ctx, batchKey(i), fmt.Sprint("s", i%7))
	}, func() {
		cancel()
		timeout := time.After(10 * time.Second)
		for range flood {
			select {
			case err := <-returned:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("an abandoned Mark = %v; want context.Canceled", err)
				}
			case <-timeout:
				t.Fatal("abandoned Marks did not return while the write ahead of them was held")
			}
		}
	})
	if err := m.Mark(t.Context(), batchKey(flood+1), "vst"); err != nil {
		t.Fatalf("a Mark after the disk answered = %v", err)
	}
	for i := 1; i <= flood; i++ {
		if linesOf(t, path, i) != 0 {
			t.Fatalf("abandoned mark %d was written", i)
		}
	}
	m.qmu.Lock()
	left := len(m.queue)
	m.qmu.Unlock()
	if left != 0 {
		t.Errorf("%d abandoned marks are still queued after a write", left)
	}
}
