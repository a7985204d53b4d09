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
)

// batchKey is a store key for n, in the form Mark accepts.
func batchKey(n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "https://files.example/b/%d", n))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// TestFileMarksShareSync holds the sync of one mark while many others
// arrive: they must all go to disk with one more sync, not one each, and
// each must return only once its own line is synced (N7: a never mark is
// durable before it is reported done).
func TestFileMarksShareSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	const others = 16
	held, release, syncs := holdFirstSync(t, nil)
	defer release()
	var waiting sync.WaitGroup
	waiting.Add(others)
	hookAfter(t, 1, waiting.Done)

	var done sync.WaitGroup
	synced := make([]atomic.Bool, others+1) // set once Mark returned nil
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
		synced[0].Store(true)
	})
	<-held // the first mark's sync is under way and held
	for i := 1; i <= others; i++ {
		done.Go(func() {
			if err := m.Mark(t.Context(), batchKey(i), fmt.Sprint("s", i%3)); err != nil {
				t.Errorf("Mark %d = %v", i, err)
			}
			synced[i].Store(true)
		})
	}
	waiting.Wait() // every other Mark is about to wait
	for i := range synced {
		if synced[i].Load() {
			t.Errorf("Mark %d returned before any sync ended", i)
		}
	}
	release()
	done.Wait()

	if got := syncs.Load(); got != 2 {
		t.Errorf("%d marks made while one sync was held took %d syncs; want 2 (one for the first, one shared by the rest)", others+1, got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= others; i++ {
		if strings.Count(string(data), batchKey(i)) != 1 {
			t.Errorf("the file holds mark %d %d times; want once", i, strings.Count(string(data), batchKey(i)))
		}
	}
}

// holdFirstSync makes the first sync wait until the returned release is
// called, and every later sync return failWith (nil: sync for real). held
// is closed once the first sync is waiting; syncs counts them all.
func holdFirstSync(t *testing.T, failWith error) (held <-chan struct{}, release func(), syncs *atomic.Int32) {
	t.Helper()
	var (
		gate    = make(chan struct{})
		holding = make(chan struct{})
		n       atomic.Int32
	)
	old := syncMarkFile
	t.Cleanup(func() { syncMarkFile = old })
	syncMarkFile = func(f *os.File) error {
		if n.Add(1) == 1 {
			close(holding)
			<-gate
			return f.Sync()
		}
		if failWith != nil {
			return failWith
		}
		return f.Sync()
	}
	return holding, sync.OnceFunc(func() { close(gate) }), &n
}

// TestFileMarksSharedSyncFails fails the sync that marks waiting behind
// another share: every one of them fails, each reads marked (its line is
// in the file), and a retry writes it again and succeeds (N7).
func TestFileMarksSharedSyncFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	diskErr := errors.New("disk gone")
	held, release, _ := holdFirstSync(t, diskErr)
	defer release()
	var waiting, done sync.WaitGroup
	const others = 4
	waiting.Add(others)
	hookAfter(t, 1, waiting.Done)
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
	})
	<-held
	errs := make([]error, others)
	for i := range others {
		done.Go(func() { errs[i] = m.Mark(t.Context(), batchKey(1+i), "vst") })
	}
	waiting.Wait()
	release()
	done.Wait()
	for i, err := range errs {
		if !errors.Is(err, diskErr) {
			t.Errorf("Mark %d, synced with the others, = %v; want the sync's error", 1+i, err)
		}
		if ok, _ := m.Marked(t.Context(), batchKey(1+i)); !ok {
			t.Errorf("Mark %d: its line is in the file but it reads unmarked", 1+i)
		}
	}
	syncMarkFile, testHookMarkWaits = (*os.File).Sync, nil
	for i := range others {
		if err := m.Mark(t.Context(), batchKey(1+i), "vst"); err != nil {
			t.Errorf("retried Mark %d = %v", 1+i, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range others {
		if n := strings.Count(string(data), batchKey(1+i)); n != 2 {
			t.Errorf("mark %d is in the file %d times; want twice (the unsynced write and the retry)", 1+i, n)
		}
	}
}

// TestFileMarksContextEndsWhileWaiting ends a Mark's context while it
// waits behind another mark's sync: it fails and writes nothing, and the
// marks waiting with it are written.
func TestFileMarksContextEndsWhileWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	held, release, syncs := holdFirstSync(t, nil)
	defer release()
	var waiting, done sync.WaitGroup
	waiting.Add(2)
	hookAfter(t, 1, waiting.Done)
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
	})
	<-held
	ctx, cancel := context.WithCancel(t.Context())
	var leftErr, keptErr error
	done.Go(func() { leftErr = m.Mark(ctx, batchKey(1), "vst") })
	done.Go(func() { keptErr = m.Mark(t.Context(), batchKey(2), "vst") })
	waiting.Wait()
	cancel()
	release()
	done.Wait()
	if !errors.Is(leftErr, context.Canceled) {
		t.Errorf("Mark whose context ended while it waited = %v; want context.Canceled", leftErr)
	}
	if keptErr != nil {
		t.Errorf("Mark waiting beside it = %v; want nil", keptErr)
	}
	if ok, _ := m.Marked(t.Context(), batchKey(1)); ok {
		t.Errorf("the mark whose context ended reads marked")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), batchKey(1)) {
		t.Errorf("the mark whose context ended was written")
	}
	if got := syncs.Load(); got != 2 {
		t.Errorf("%d syncs; want 2", got)
	}
}

// hookAfter sets testHookMarkWaits to call f on every call after the
// first skip ones.
func hookAfter(t *testing.T, skip int32, f func()) {
	t.Helper()
	var n atomic.Int32
	testHookMarkWaits = func() {
		if n.Add(1) > skip {
			f()
		}
	}
	t.Cleanup(func() { testHookMarkWaits = nil })
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

// TestFileMarksPanicInSharedWrite makes the sync shared by waiting marks
// panic; the caller that ran it recovers, as net/http does for a
// handler. No other waiter may then read its Mark as done (N7).
func TestFileMarksPanicInSharedWrite(t *testing.T) {
	m, err := OpenFileMarks(filepath.Join(t.TempDir(), "marks"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var (
		syncs   atomic.Int32
		gate    = make(chan struct{})
		held    = make(chan struct{})
		release = sync.OnceFunc(func() { close(gate) })
	)
	defer release()
	old := syncMarkFile
	t.Cleanup(func() { syncMarkFile = old })
	syncMarkFile = func(f *os.File) error {
		switch syncs.Add(1) {
		case 1: // the first mark's own sync, held while the others queue
			close(held)
			<-gate
		case 2: // the sync the others share
			panic("the disk layer failed")
		}
		return f.Sync()
	}
	const others = 4
	var waiting, done sync.WaitGroup
	waiting.Add(others)
	hookAfter(t, 1, waiting.Done)
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
	})
	<-held
	errs := make([]error, others)
	panicked := make([]bool, others)
	for i := range others {
		done.Go(func() {
			defer func() { panicked[i] = recover() != nil }()
			errs[i] = m.Mark(t.Context(), batchKey(1+i), "vst")
		})
	}
	waiting.Wait()
	release()
	done.Wait()
	for i := range others {
		if !panicked[i] && errs[i] == nil {
			t.Errorf("Mark %d returned nil, though the sync of its line panicked", 1+i)
		}
	}
}

// TestFileMarksBatchesUnderLoad marks overlapping pairs from many
// goroutines while syncs fail now and then, some contexts end early and
// Close arrives at the end, and the file starts near its rewrite bound:
// every Mark that returned nil must be in the file when it is opened
// again, and must read marked at once (N7).
func TestFileMarksBatchesUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	var seed strings.Builder
	seed.WriteString(fileMarksHeader)
	for i := range compactMinLines - 4 { // duplicates, so a rewrite comes soon
		seed.WriteString(string(markLine(filePair{batchKey(10_000 + i%2), "old"})))
	}
	if err := os.WriteFile(path, []byte(seed.String()), 0o600); err != nil {
		t.Fatal(err)
	}
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
	path := filepath.Join(t.TempDir(), "marks")
	var seed strings.Builder
	seed.WriteString(fileMarksHeader)
	for i := range compactMinLines { // duplicates: the next mark rewrites the file
		seed.WriteString(string(markLine(filePair{batchKey(10_000 + i%2), "old"})))
	}
	if err := os.WriteFile(path, []byte(seed.String()), 0o600); err != nil {
		t.Fatal(err)
	}
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
