package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/internal/memtest"
)

// TestCopyTypeKeepsNoHeader fetches references whose server declares a
// media type followed by a 60 KiB parameter, and checks that the saved
// copies' records do not keep those headers alive: a copy's media type is
// a few bytes, and a record lives as long as the host keeps it (L6).
func TestCopyTypeKeepsNoHeader(t *testing.T) {
	const n = 64
	header := "application/x-foo; p=" + strings.Repeat("a", 60<<10)
	e := newEnv(t, body([]byte("\x00\x01\x02\x03\x04\x05\x06\x07"), header))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.ref(serverName, fmt.Sprintf(`{"type":"resource","uri":"$ORIGIN/r%d"}`, i)).ID
	}
	held := memtest.Held(func() {
		for _, id := range ids {
			if _, err := e.f.Fetch(t.Context(), id, Request{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, id := range ids {
		rec, ok := e.reg.Lookup(id)
		if !ok || rec.Copy == nil || rec.Copy.MimeType != "application/x-foo" {
			t.Fatalf("record %s: copy %+v, want one of type application/x-foo", id, rec.Copy)
		}
	}
	// The copies are 8 bytes each and their types 16; the headers were
	// 60 KiB each.
	if held > 1<<20 {
		t.Errorf("%d saved copies of 8 bytes keep %d bytes of heap alive; want at most 1 MiB", n, held)
	}
	runtime.KeepAlive(e)
}

// TestStaleCopyRemoved fetches references into a DirStore that is also
// the registry's Remover, and then has their server send each uri again
// with another digest. The saved copies no longer describe the references
// and no record names them, so they must go, or such a server leaves one
// file behind per fetch (F19, F20).
func TestStaleCopyRemoved(t *testing.T) {
	payload := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	dir := t.TempDir()
	store, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e := newEnv(t, body(payload, "audio/wav"), withStore(store), func(e *env) { e.regCfg.Remover = store })
	block := `{"type":"resource","uri":"$ORIGIN/take%d.wav","digest":%q}`
	for i := range 8 {
		rec := e.ref(serverName, fmt.Sprintf(block, i, digestOf(payload)))
		if _, err := e.f.Fetch(t.Context(), rec.ID, Request{}); err != nil {
			t.Fatal(err)
		}
		e.ref(serverName, fmt.Sprintf(block, i, digestOf([]byte("another payload"))))
		if rec, _ := e.reg.Lookup(rec.ID); rec.Copy != nil {
			t.Fatalf("F19: the record still names its copy after a new digest: %+v", rec.Copy)
		}
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("F20: %d files stay in the store that no record names (%v)", len(left), err)
	}
}

// TestStaleHostCopyRemoved is TestStaleCopyRemoved for a copy in the
// host-only store: a never reference fetched for the host, whose server
// then sends another digest. The registry's Remover is Removers of both
// stores, as Config.HostStore advises, so the stale copy goes from the
// store that holds it (F19, F20).
func TestStaleHostCopyRemoved(t *testing.T) {
	payload := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	shared, host := t.TempDir(), t.TempDir()
	stores := make([]*DirStore, 2)
	for i, dir := range []string{shared, host} {
		s, err := NewDirStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	e := newEnv(t, body(payload, "audio/wav"), withStore(stores[0]),
		withConfig(func(c *Config) { c.HostStore = stores[1] }),
		func(e *env) { e.regCfg.Remover = Removers(stores[0], stores[1]) })
	block := `{"type":"resource","uri":"$ORIGIN/take.wav","digest":%q,"disposition":"never"}`
	rec := e.ref(serverName, fmt.Sprintf(block, digestOf(payload)))
	res, err := e.f.Fetch(t.Context(), rec.ID, Request{ForHost: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(res.Path) != host {
		t.Fatalf("the host's copy is at %s, not in the host-only store %s", res.Path, host)
	}
	e.ref(serverName, fmt.Sprintf(block, digestOf([]byte("another payload"))))
	for _, dir := range []string{shared, host} {
		if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
			t.Errorf("F20: %d files stay in %s that no record names (%v)", len(left), dir, err)
		}
	}
	if strings.Contains(e.logs.String(), "could not remove") {
		t.Errorf("the log says a removal failed:\n%s", e.logs.String())
	}
}

// TestRemovers pins how Removers answers: the store that holds a path
// removes it, a path no store holds is an error wrapping ErrBadName, and
// a store that fails in another way makes Remove fail.
func TestRemovers(t *testing.T) {
	a, err := NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	bdir := t.TempDir()
	b, err := NewDirStore(bdir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := b.Begin(t.Context(), "ref_x.bin", "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte("bytes"))
	path, err := p.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := Removers(a, b)
	if err := r.Remove(t.Context(), path); err != nil {
		t.Errorf("Remove of a copy in the second store = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy is still there (%v)", err)
	}
	if err := r.Remove(t.Context(), filepath.Join(t.TempDir(), "ref_y.bin")); !errors.Is(err, ErrBadName) {
		t.Errorf("Remove of a path no store holds = %v, want ErrBadName", err)
	}
	failing := removerFunc(func(context.Context, string) error { return errors.New("disk says no") })
	if err := Removers(a, b, failing).Remove(t.Context(), filepath.Join(bdir, "ref_z.bin")); err == nil || !strings.Contains(err.Error(), "disk says no") {
		t.Errorf("Remove with a failing store = %v, want its error", err)
	}
}

type removerFunc func(context.Context, string) error

func (f removerFunc) Remove(ctx context.Context, path string) error { return f(ctx, path) }

// TestRemoversOfNone pins the degenerate Removers: with no store to ask,
// no store holds any path, and Remove says so rather than claiming the
// copy is gone.
func TestRemoversOfNone(t *testing.T) {
	if err := Removers().Remove(t.Context(), "/tmp/ref_x.bin"); !errors.Is(err, ErrBadName) {
		t.Errorf("Removers().Remove = %v, want ErrBadName", err)
	}
}

// TestDirStoreRemoveOnlyItsCopies pins F22's bound on Remove: a path is
// one of the store's copies only when it names a file directly inside the
// store's directory. The directory itself, written with a trailing
// separator, names no copy, though its base name looks like a copy's; a
// copy spelled with a redundant separator or "." is still that copy.
func TestDirStoreRemoveOnlyItsCopies(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ref_store")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// A copy whose name is the directory's own base name.
	copyPath := filepath.Join(dir, "ref_store")
	if err := os.WriteFile(copyPath, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	sep := string(filepath.Separator)
	for _, p := range []string{dir + sep, dir + sep + sep, dir + sep + "."} {
		if err := d.Remove(t.Context(), p); !errors.Is(err, ErrBadName) {
			t.Errorf("Remove(%q) = %v, want ErrBadName", p, err)
		}
	}
	if _, err := os.Stat(copyPath); err != nil {
		t.Fatalf("a Remove that named the store's directory deleted %s (%v)", copyPath, err)
	}
	if err := d.Remove(t.Context(), dir+sep+"."+sep+"ref_store"); err != nil {
		t.Errorf("Remove of the copy by another spelling = %v", err)
	}
	if _, err := os.Stat(copyPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy is still there (%v)", err)
	}
}
