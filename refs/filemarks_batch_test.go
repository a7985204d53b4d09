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
	var (
		syncs   atomic.Int32
		gate    = make(chan struct{})
		holding = make(chan struct{})
		waiting sync.WaitGroup
	)
	waiting.Add(others + 1) // the first Mark passes the hook too
	defer func(s func(*os.File) error) { syncMarkFile = s }(syncMarkFile)
	syncMarkFile = func(f *os.File) error {
		if syncs.Add(1) == 1 {
			close(holding)
			<-gate
		}
		return f.Sync()
	}
	testHookMarkWaits = waiting.Done
	defer func() { testHookMarkWaits = nil }()

	var done sync.WaitGroup
	synced := make([]atomic.Bool, others+1) // set once Mark returned nil
	done.Go(func() {
		if err := m.Mark(t.Context(), batchKey(0), "vst"); err != nil {
			t.Errorf("Mark 0 = %v", err)
		}
		synced[0].Store(true)
	})
	<-holding // the first mark's sync is under way and held
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
	close(gate)
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
