package refs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
)

// neverFlood is a content of n references that say never, then plain
// references and an embedded resource that do not, from files.example.
func neverFlood(n, plain int) []json.RawMessage {
	var blocks []json.RawMessage
	for i := range n {
		blocks = append(blocks, json.RawMessage(fmt.Sprintf(
			`{"type":"resource","uri":"https://files.example/never/%d?sig=s3cr3t","name":"n%d.bin","disposition":"never"}`, i, i)))
	}
	for i := range plain {
		blocks = append(blocks, json.RawMessage(fmt.Sprintf(
			`{"type":"resource","uri":"https://files.example/shown/%d","name":"s%d.bin"}`, i, i)))
	}
	return append(blocks, json.RawMessage(
		`{"type":"resource","resource":{"uri":"https://files.example/embedded","text":"hello"}}`))
}

// countSyncs counts the syncs of the mark file until the test ends.
func countSyncs(t testing.TB) *atomic.Int32 {
	var n atomic.Int32
	old := syncMarkFile
	t.Cleanup(func() { syncMarkFile = old })
	syncMarkFile = func(f *os.File) error { n.Add(1); return f.Sync() }
	return &n
}

// TestIngestNeverFloodOneSync: a content that marks 300 uris never on its
// server's word waits for one write and one sync of a FileMarks, not one
// per reference (N7). Every one of the 300 is then marked in the file, as
// it is after ingesting them one by one, each view withholds it (N1), and
// no uri of the content that did not say never is marked (P1).
func TestIngestNeverFloodOneSync(t *testing.T) {
	const flood, plain = 300, 5
	ctx := t.Context()
	m, path := openBatchStore(t)
	syncs := countSyncs(t)
	reg, err := New(Config{Marks: m})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := convert.New(reg, convert.Policy{ShowURI: func(convert.Entry) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	ct := conv.Ingest(ctx, neverFlood(flood, plain), convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"})
	if n := syncs.Load(); n != 1 {
		t.Errorf("ingesting %d never references synced the mark file %d times, want 1", flood, n)
	}
	if len(ct.IDs()) != flood+plain {
		t.Fatalf("%d ids, want %d", len(ct.IDs()), flood+plain)
	}
	for i, id := range ct.IDs() {
		if e, ok := reg.Entry(id); !ok || e.Never != (i < flood) {
			t.Errorf("entry %d: never %v, want %v", i, e.Never, i < flood)
		}
	}
	for _, v := range []string{ct.History(), convert.PushJSON(ct.Push())} {
		if strings.Contains(v, "s3cr3t") || strings.Contains(v, "/never/") {
			t.Fatalf("a view shows a never uri:\n%.300s", v)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenFileMarks(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	marked := func(uri string) bool {
		ok, err := again.Marked(ctx, storeKey(uriform.Canonical(uri)))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range flood {
		if !marked(fmt.Sprintf("https://files.example/never/%d?sig=s3cr3t", i)) {
			t.Errorf("never uri %d is not in the mark file after the content", i)
		}
	}
	for i := range plain {
		if marked(fmt.Sprintf("https://files.example/shown/%d", i)) {
			t.Errorf("shown uri %d was marked never", i)
		}
	}
	if marked("https://files.example/embedded") {
		t.Error("the embedded resource's uri was marked never")
	}
}

// TestStoreNeverMarksThenRegister: a mark StoreNeverMarks stored before its
// registration reads as the server's own mark, not as one made elsewhere:
// the record's saved copy is withdrawn once, logged once as this server's
// mark (N3, N7).
func TestStoreNeverMarksThenRegister(t *testing.T) {
	ctx := t.Context()
	m, _ := openBatchStore(t)
	var log strings.Builder
	reg, err := New(Config{Marks: m, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	uris := []string{"https://files.example/a.wav", "https://files.example/b.wav"}
	e := reg.Register(ctx, convert.Registration{Testimony: convert.Testimony{URI: uris[0], Present: convert.FieldURI}, Server: "studio"})
	if err := reg.Save(e.ID, convert.Copy{Path: "store/a.wav", Bytes: 3}, convert.Testimony{URI: uris[0], Present: convert.FieldURI}); err != nil {
		t.Fatal(err)
	}
	reg.StoreNeverMarks(ctx, uris, "studio")
	got := reg.Register(ctx, convert.Registration{Testimony: convert.Testimony{URI: uris[0], Present: convert.FieldURI}, Server: "studio", Never: true})
	if !got.Never || got.Copy != nil {
		t.Errorf("after the mark: never %v, copy %v", got.Never, got.Copy)
	}
	if strings.Contains(log.String(), "made elsewhere") {
		t.Errorf("the server's own stored mark was logged as one made elsewhere:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "a server marked a reference never"); n != 1 {
		t.Errorf("logged the mark %d times, want 1:\n%s", n, log.String())
	}
}

// BenchmarkIngestNeverFlood ingests a content of 1,000 references that say
// never into a registry whose marks go to a FileMarks, and reports the
// mark file's syncs per content (StoreNeverMarks: one, instead of 1,000).
func BenchmarkIngestNeverFlood(b *testing.B) {
	syncs := countSyncs(b)
	blocks := neverFlood(1000, 0)
	src := convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		m, err := OpenFileMarks(b.TempDir() + "/marks")
		if err != nil {
			b.Fatal(err)
		}
		reg, err := New(Config{Marks: m})
		if err != nil {
			b.Fatal(err)
		}
		conv, err := convert.New(reg, convert.Policy{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		conv.Ingest(ctx, blocks, src)
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/op")
}

// TestFileMarksMarkAll: MarkAll writes every new key once, with one sync,
// and a key already on disk costs nothing; a malformed key fails the call
// before anything is written; a closed store or an ended context fails it
// (N7).
func TestFileMarksMarkAll(t *testing.T) {
	ctx := t.Context()
	m, path := openBatchStore(t)
	syncs := countSyncs(t)
	keys := []string{batchKey(1), batchKey(2), batchKey(1), batchKey(3)}
	if err := m.MarkAll(ctx, keys, "studio"); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 1 {
		t.Errorf("MarkAll of 3 keys synced %d times, want 1", n)
	}
	for k := 1; k <= 3; k++ {
		if n := linesOf(t, path, k); n != 1 {
			t.Errorf("key %d is on %d lines, want 1", k, n)
		}
	}
	if err := m.MarkAll(ctx, keys[:2], "studio"); err != nil || syncs.Load() != 1 {
		t.Errorf("MarkAll of keys on disk = %v after %d syncs, want nil after 1", err, syncs.Load())
	}
	if err := m.MarkAll(ctx, []string{batchKey(4), "https://files.example/raw"}, "studio"); err == nil || linesOf(t, path, 4) != 0 {
		t.Errorf("MarkAll with a malformed key = %v, and wrote the good key %d times", err, linesOf(t, path, 4))
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.MarkAll(done, []string{batchKey(5)}, "studio"); err != context.Canceled {
		t.Errorf("MarkAll with an ended context = %v", err)
	}
	if err := m.MarkAll(ctx, nil, "studio"); err != nil {
		t.Errorf("MarkAll of no keys = %v", err)
	}
	m.Close()
	if err := m.MarkAll(ctx, []string{batchKey(6)}, "studio"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("MarkAll after Close = %v, want os.ErrClosed", err)
	}
	var zero FileMarks
	if err := zero.MarkAll(ctx, []string{batchKey(7)}, "studio"); err == nil {
		t.Error("MarkAll on a zero FileMarks succeeded")
	}
}

// batchHost is a registry on a FileMarks at path (kept until the test
// ends, closed by it) and a converter on it.
func batchHost(t *testing.T, cfg Config) (*Registry, *convert.Converter, *FileMarks, string) {
	t.Helper()
	m, path := openBatchStore(t)
	cfg.Marks = m
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := convert.New(reg, convert.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return reg, conv, m, path
}

func rawBlocks(blocks ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(blocks))
	for i, b := range blocks {
		out[i] = json.RawMessage(b)
	}
	return out
}

// TestStoreNeverMarksBlankURI: a block that says never on a blank uri
// (its canonical key is empty, so no claim covers it) is not stored ahead
// of the loop. Stored ahead, it was read back by an earlier block of the
// same content with a blank uri of its own: a non-never inline block made
// a record early, which evicted a plain reference's saved copy (found by
// outside review), and a plain blank reference's copy was withdrawn as by
// a mark made elsewhere (N1, N7, P1).
func TestStoreNeverMarksBlankURI(t *testing.T) {
	ctx := t.Context()
	src := convert.Source{Server: "A", Lane: convert.LaneToolResult, Tool: "t"}
	plain := func(u string) string { return `{"type":"resource","uri":"` + u + `","name":"n"}` }

	t.Run("eviction", func(t *testing.T) {
		var evicted []string
		reg, conv, _, _ := batchHost(t, Config{Capacity: 3, OnEvict: func(r Record, _ EvictReason) {
			if r.Copy != nil {
				evicted = append(evicted, r.Copy.Path)
			}
		}})
		keep := conv.Ingest(ctx, rawBlocks(plain("https://files.example/keep")), src).IDs()[0]
		e, _ := reg.Entry(keep)
		if err := reg.Save(keep, convert.Copy{Path: "store/keep.bin", Bytes: 1}, e.Testimony); err != nil {
			t.Fatal(err)
		}
		conv.Ingest(ctx, rawBlocks(plain("https://files.example/o1"), plain("https://files.example/o2")), src)
		conv.Ingest(ctx, rawBlocks(
			`{"type":"audio","data":"AAAA","uri":" "}`,
			plain("https://files.example/keep"),
			`{"type":"resource","uri":"https://files.example/n1","name":"n","disposition":"never"}`,
			`{"type":"image","data":"AAAA","uri":"","mimeType":"image/png","disposition":"never"}`), src)
		got, ok := reg.EntryForURI("https://files.example/keep")
		if !ok || got.Never || got.Copy == nil || len(evicted) != 0 {
			t.Errorf("the plain reference: held %v, never %v, copy %v; copies evicted %v", ok, got.Never, got.Copy, evicted)
		}
	})

	t.Run("log", func(t *testing.T) {
		var log strings.Builder
		reg, conv, _, _ := batchHost(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		id := conv.Ingest(ctx, rawBlocks(plain(" ")), src).IDs()[0]
		e, _ := reg.Entry(id)
		if err := reg.Save(id, convert.Copy{Path: "store/blank.bin", Bytes: 1}, e.Testimony); err != nil {
			t.Fatal(err)
		}
		conv.Ingest(ctx, rawBlocks(plain(" "),
			`{"type":"audio","data":"AAAA","uri":"","disposition":"never"}`,
			`{"type":"resource","uri":"https://files.example/x","name":"x","disposition":"never"}`), src)
		if strings.Contains(log.String(), "made elsewhere") {
			t.Errorf("the content's own mark was logged as one made elsewhere:\n%s", log.String())
		}
	})
}

// TestStoreNeverMarksStoresWhatTheLoopWould: a uri another server marked
// before, with its mark stored, gets no second line for this server, as
// when each block is marked alone (N7).
func TestStoreNeverMarksStoresWhatTheLoopWould(t *testing.T) {
	ctx := t.Context()
	_, conv, m, path := batchHost(t, Config{})
	never := func(u string) string {
		return `{"type":"resource","uri":"` + u + `","name":"n","disposition":"never"}`
	}
	conv.Ingest(ctx, rawBlocks(never("https://files.example/1")), convert.Source{Server: "A", Lane: convert.LaneToolResult, Tool: "t"})
	conv.Ingest(ctx, rawBlocks(never("https://files.example/1"), never("https://files.example/2")), convert.Source{Server: "B", Lane: convert.LaneToolResult, Tool: "t"})
	m.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pair := storeKey(uriform.Canonical("https://files.example/1")) + ` "B"`; strings.Contains(string(data), pair) {
		t.Errorf("the mark file holds server B's mark on a uri A marked first:\n%s", data)
	}
}

// TestStoreNeverMarksRespelledFloodTinyBound is an outsider's attack on
// the batch: a server sends 200 never references, each uri twice in
// other spellings (host case, the default port), and once more plainly,
// into a registry that holds only 2 records. The marks go to the store in
// one sync, one line per uri whatever its spellings; every uri is marked
// after the registry has evicted nearly all of them; and no view shows
// any spelling (N1, N7, N8).
func TestStoreNeverMarksRespelledFloodTinyBound(t *testing.T) {
	const n = 200
	ctx := t.Context()
	reg, conv, m, path := batchHost(t, Config{Capacity: 2})
	syncs := countSyncs(t)
	var blocks []string
	for i := range n {
		blocks = append(blocks,
			fmt.Sprintf(`{"type":"resource","uri":"https://files.example/r/%d?sig=s3cr3t","name":"a","disposition":"never"}`, i),
			fmt.Sprintf(`{"type":"resource","uri":"https://FILES.example:443/r/%d?sig=s3cr3t","name":"b","disposition":"never"}`, i),
			fmt.Sprintf(`{"type":"resource_link","uri":"https://files.example/r/%d?sig=s3cr3t","name":"c"}`, i))
	}
	ct := conv.Ingest(ctx, rawBlocks(blocks...), convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"})
	if got := syncs.Load(); got != 1 {
		t.Errorf("%d never uris in %d spellings synced the mark file %d times, want 1", n, len(blocks), got)
	}
	for _, v := range []string{ct.History(), convert.PushJSON(ct.Push())} {
		if strings.Contains(v, "s3cr3t") || strings.Contains(strings.ToLower(v), "files.example/r/") {
			t.Fatalf("a view shows a never uri:\n%.300s", v)
		}
	}
	for i := range n {
		u := fmt.Sprintf("https://files.example/r/%d?sig=s3cr3t", i)
		if !reg.Marked(ctx, u) {
			t.Errorf("uri %d is not marked after its record was evicted", i)
		}
	}
	m.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "sha256:"); lines != n {
		t.Errorf("the mark file holds %d marks, want one per uri (%d)", lines, n)
	}
}

// TestStoreNeverMarksBatchFails: when the one sync of a content's batched
// never marks fails, the failure is logged and each mark is tried again
// alone, as before batching, so every mark reaches the disk; while the
// mark file fails every sync, each reference is still withheld as never
// and no view shows its uri (N1, N7).
func TestStoreNeverMarksBatchFails(t *testing.T) {
	const n = 3
	ctx := t.Context()
	src := convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}
	diskErr := errors.New("disk gone")
	uri := func(i int) string { return fmt.Sprintf("https://files.example/never/%d?sig=s3cr3t", i) }
	check := func(t *testing.T, reg *Registry, ct *convert.Content) {
		t.Helper()
		for i, id := range ct.IDs() {
			if e, ok := reg.Entry(id); !ok || e.Never != (i < n) {
				t.Errorf("entry %d: held %v, never %v; want never %v", i, ok, e.Never, i < n)
			}
		}
		for _, v := range []string{ct.History(), convert.PushJSON(ct.Push())} {
			if strings.Contains(v, "s3cr3t") || strings.Contains(v, "/never/") {
				t.Fatalf("a view shows a never uri:\n%.300s", v)
			}
		}
	}

	t.Run("batch sync fails once", func(t *testing.T) {
		var log strings.Builder
		reg, conv, m, path := batchHost(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		var syncs atomic.Int32
		old := syncMarkFile
		t.Cleanup(func() { syncMarkFile = old })
		syncMarkFile = func(f *os.File) error {
			if syncs.Add(1) == 1 {
				return diskErr
			}
			return f.Sync()
		}
		ct := conv.Ingest(ctx, neverFlood(n, 1), src)
		check(t, reg, ct)
		if !strings.Contains(log.String(), "could not record a content's never marks together") {
			t.Errorf("the failed batch was not logged:\n%s", log.String())
		}
		if got := syncs.Load(); got != 1+n {
			t.Errorf("%d syncs; want %d (the failed batch, then one per mark)", got, 1+n)
		}
		m.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			// Once in the write whose sync failed, once in its own retry.
			if c := strings.Count(string(data), storeKey(uriform.Canonical(uri(i)))); c != 2 {
				t.Errorf("never uri %d is on %d lines of the mark file; want 2", i, c)
			}
		}
	})

	t.Run("every sync fails", func(t *testing.T) {
		var log strings.Builder
		reg, conv, _, _ := batchHost(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		old := syncMarkFile
		t.Cleanup(func() { syncMarkFile = old })
		syncMarkFile = func(*os.File) error { return diskErr }
		ct := conv.Ingest(ctx, neverFlood(n, 1), src)
		check(t, reg, ct)
		for i := range n {
			if !reg.Marked(ctx, uri(i)) {
				t.Errorf("never uri %d reads unmarked after its mark failed to sync", i)
			}
		}
	})
}
