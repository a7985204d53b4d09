package refs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// fmSecretURI is the never-marked uri of the file-store tests; its query
// stands for a credential that must never reach the file.
const fmSecretURI = "https://files.example/secret?sig=abc"

// fmKey is the key the registry gives a mark store for uri.
func fmKey(uri string) string {
	sum := sha256.Sum256([]byte(uriform.Canonical(uri)))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// fmKeyN is the key of the n-th uri of a family.
func fmKeyN(n int) string { return fmKey(fmt.Sprintf("https://files.example/m/%d", n)) }

// fmLine is the documented line for one mark: the key, a space, the
// server quoted as strconv.Quote quotes it, a newline.
func fmLine(key, server string) string { return key + " " + strconv.Quote(server) + "\n" }

// fmOpen opens the store at path, failing the test on error, and closes it
// when the test ends.
func fmOpen(t *testing.T, path string) *refs.FileMarks {
	t.Helper()
	m, err := refs.OpenFileMarks(path)
	if err != nil {
		t.Fatalf("OpenFileMarks(%q) = %v", path, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// fmClose closes m, failing the test on error.
func fmClose(t *testing.T, m *refs.FileMarks) {
	t.Helper()
	if err := m.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

// fmMark marks key for server, failing the test on error.
func fmMark(t *testing.T, m *refs.FileMarks, key, server string) {
	t.Helper()
	if err := m.Mark(t.Context(), key, server); err != nil {
		t.Fatalf("Mark(%q, %q) = %v", key, server, err)
	}
}

// fmMarked reports m.Marked(key), failing the test on error.
func fmMarked(t *testing.T, m *refs.FileMarks, key string) bool {
	t.Helper()
	ok, err := m.Marked(t.Context(), key)
	if err != nil {
		t.Fatalf("Marked(%q) = %v", key, err)
	}
	return ok
}

// fmRead returns the file's bytes.
func fmRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// fmWrite writes a fixture file.
func fmWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

// fmHeader is the header a new mark file starts with, as the store writes
// it.
func fmHeader(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "header.marks")
	fmClose(t, fmOpen(t, path))
	h := fmRead(t, path)
	if h == "" || strings.Count(h, "\n") != 1 || !strings.HasSuffix(h, "\n") {
		t.Fatalf("a new mark file holds %q; want one header line", h)
	}
	return h
}

func TestFileMarksMarkAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	odd := "odd \"server\"\nname ☃ \xff end"
	k1, k2, k3 := fmKeyN(1), fmKeyN(2), fmKeyN(3)

	m := fmOpen(t, path)
	if fmMarked(t, m, k1) {
		t.Fatalf("a new store reports a mark")
	}
	fmMark(t, m, k1, "vst")
	fmMark(t, m, k2, odd)
	if !fmMarked(t, m, k1) || !fmMarked(t, m, k2) {
		t.Errorf("a mark just made reads unmarked")
	}
	if fmMarked(t, m, k3) {
		t.Errorf("a key nobody marked reads marked")
	}
	fmClose(t, m)

	want := fmHeader(t) + fmLine(k1, "vst") + fmLine(k2, odd)
	if got := fmRead(t, path); got != want {
		t.Fatalf("the file holds\n%q\nwant\n%q", got, want)
	}

	m = fmOpen(t, path)
	if !fmMarked(t, m, k1) || !fmMarked(t, m, k2) {
		t.Errorf("after reopening, a recorded mark reads unmarked")
	}
	if fmMarked(t, m, k3) {
		t.Errorf("after reopening, a key nobody marked reads marked")
	}
	// The servers survived: marking the same pairs again writes nothing,
	// and another server's mark on k1 is a new line.
	fmMark(t, m, k1, "vst")
	fmMark(t, m, k2, odd)
	if got := fmRead(t, path); got != want {
		t.Errorf("marks already recorded were written again; the file holds\n%q\nwant\n%q", got, want)
	}
	fmMark(t, m, k1, "mail")
	want += fmLine(k1, "mail")
	if got := fmRead(t, path); got != want {
		t.Errorf("another server's mark on a marked key: the file holds\n%q\nwant\n%q", got, want)
	}
}

func TestFileMarksCreatesPrivateFile(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no unix permission bits")
	}
	path := filepath.Join(t.TempDir(), "marks")
	fmOpen(t, path)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("a new mark file has permission %v, want 0600", perm)
	}
}

func TestFileMarksTornLastLine(t *testing.T) {
	k1, k2, k3 := fmKeyN(1), fmKeyN(2), fmKeyN(3)
	whole := fmLine(k2, "vst")
	tests := []struct{ name, tail string }{
		{"half a line", whole[:len(whole)/2]},
		{"a line without its newline", strings.TrimSuffix(whole, "\n")},
		{"the key alone", k2},
		{"zeros", "\x00\x00\x00\x00\x00\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "marks")
			good := fmHeader(t) + fmLine(k1, "vst")
			fmWrite(t, path, good+tt.tail)

			m := fmOpen(t, path)
			if !fmMarked(t, m, k1) {
				t.Errorf("the mark before the torn line was lost")
			}
			if fmMarked(t, m, k2) {
				t.Errorf("the torn line's mark reads marked; a mark without its newline was never reported done")
			}
			if got := fmRead(t, path); got != good {
				t.Errorf("the torn line was not cut: the file holds\n%q\nwant\n%q", got, good)
			}
			fmMark(t, m, k3, "mail")
			fmClose(t, m)

			want := good + fmLine(k3, "mail")
			if got := fmRead(t, path); got != want {
				t.Errorf("a mark after the torn line: the file holds\n%q\nwant\n%q", got, want)
			}
			m = fmOpen(t, path)
			if !fmMarked(t, m, k1) || !fmMarked(t, m, k3) || fmMarked(t, m, k2) {
				t.Errorf("after reopening: marked k1, k2, k3 = %t, %t, %t; want true, false, true",
					fmMarked(t, m, k1), fmMarked(t, m, k2), fmMarked(t, m, k3))
			}
		})
	}
}

func TestFileMarksTornHeader(t *testing.T) {
	header := fmHeader(t)
	for _, torn := range []string{header[:1], header[:len(header)-1]} {
		path := filepath.Join(t.TempDir(), "marks")
		fmWrite(t, path, torn)
		m := fmOpen(t, path)
		fmMark(t, m, fmKeyN(1), "vst")
		fmClose(t, m)
		if got, want := fmRead(t, path), header+fmLine(fmKeyN(1), "vst"); got != want {
			t.Errorf("a file holding a torn header %q: after a mark it holds\n%q\nwant\n%q", torn, got, want)
		}
	}
}

func TestFileMarksCorrupt(t *testing.T) {
	header := fmHeader(t)
	k1, k2 := fmKeyN(1), fmKeyN(2)
	good1, good2 := fmLine(k1, "vst"), fmLine(k2, "vst")
	tests := []struct{ name, data string }{
		{"garbage in the middle", header + good1 + "qqjunkqq\n" + good2},
		{"half a line in the middle", header + good1[:20] + "\n" + good2},
		{"an empty line", header + good1 + "\n" + good2},
		{"a bad last line with its newline", header + good1 + "qqjunkqq\n"},
		{"no server", header + k1 + "\n"},
		{"an unquoted server", header + k1 + " vst\n"},
		{"a single-quoted server", header + k1 + " `vst`\n"},
		{"a server quoted otherwise than strconv.Quote", header + k1 + ` "v\x73t"` + "\n"},
		{"a carriage return", header + strings.TrimSuffix(good1, "\n") + "\r\n"},
		{"a uri for a key", header + fmLine(fmSecretURI, "vst")},
		{"a short key", header + fmLine("sha256:abc", "vst")},
		{"another digest", header + fmLine("md5:"+strings.Repeat("a", 43), "vst")},
		{"no header", good1 + good2},
		{"another version's header", strings.Replace(header, "1", "2", 1) + good1},
		{"another file, one line without newline", "export TOKEN=secret"},
		{"another file", "root:x:0:0:root:/root:/bin/sh\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "marks")
			fmWrite(t, path, tt.data)
			m, err := refs.OpenFileMarks(path)
			if err == nil {
				_ = m.Close()
				t.Fatalf("OpenFileMarks opened a corrupt file; a damaged file must not silently lose marks")
			}
			if !errors.Is(err, refs.ErrMarkFileCorrupt) {
				t.Errorf("OpenFileMarks = %v, want an error wrapping ErrMarkFileCorrupt", err)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "qqjunkqq") {
				t.Errorf("the error quotes the file's content: %v", err)
			}
			if got := fmRead(t, path); got != tt.data {
				t.Errorf("OpenFileMarks changed a file it refused: it holds\n%q\nwant\n%q", got, tt.data)
			}
		})
	}
}

func TestFileMarksRefusesPath(t *testing.T) {
	if _, err := refs.OpenFileMarks(""); err == nil {
		t.Errorf("OpenFileMarks(\"\") opened something")
	}
	if _, err := refs.OpenFileMarks(t.TempDir()); err == nil {
		t.Errorf("OpenFileMarks opened a directory")
	}
	if runtime.GOOS != "windows" {
		if _, err := os.Stat("/dev/null"); err == nil {
			if m, err := refs.OpenFileMarks("/dev/null"); err == nil {
				_ = m.Close()
				t.Errorf("OpenFileMarks opened /dev/null: marks would vanish")
			}
		}
	}
	// A named pipe would block the read for good.
	mkfifo, err := exec.LookPath("mkfifo")
	if err != nil || runtime.GOOS == "windows" {
		return
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if out, err := exec.Command(mkfifo, fifo).CombinedOutput(); err != nil {
		t.Logf("mkfifo failed, pipe case skipped: %v %s", err, out)
		return
	}
	done := make(chan error, 1)
	go func() {
		m, err := refs.OpenFileMarks(fifo)
		if err == nil {
			_ = m.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("OpenFileMarks opened a named pipe")
		}
	case <-time.After(10 * time.Second):
		t.Errorf("OpenFileMarks blocked on a named pipe")
	}
}

func TestFileMarksCompaction(t *testing.T) {
	header := fmHeader(t)
	servers := []string{"vst", "mail", "vst"}
	keys := []string{fmKeyN(1), fmKeyN(1), fmKeyN(2)}
	dups := func(lines int) string {
		var b strings.Builder
		b.WriteString(header)
		for i := range lines {
			b.WriteString(fmLine(keys[i%3], servers[i%3]))
		}
		return b.String()
	}
	lineCount := func(data string) int { return strings.Count(data, "\n") - 1 }
	distinct := func(data string) bool {
		lines := strings.Split(data, "\n")
		seen := map[string]bool{}
		for _, l := range lines {
			if seen[l] {
				return false
			}
			seen[l] = true
		}
		return true
	}

	t.Run("on open", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "marks")
		fixture := dups(3000)
		fmWrite(t, path, fixture)
		m := fmOpen(t, path)
		fmClose(t, m)
		got := fmRead(t, path)
		if lineCount(got) != 3 || !distinct(got) || !strings.HasPrefix(got, header) {
			t.Fatalf("a file of 3,000 lines holding 3 marks was not compacted on open: %d lines, %d bytes",
				lineCount(got), len(got))
		}
		m = fmOpen(t, path)
		for i := range keys {
			fmMark(t, m, keys[i], servers[i])
		}
		if after := fmRead(t, path); after != got {
			t.Errorf("a mark lost by compaction was written again")
		}
		if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("compaction left its temporary file behind: %v", err)
		}
	})

	t.Run("after a mark", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "marks")
		// 1,000 lines holding 3 marks: under the 1,024-line floor, so
		// opening leaves the file alone.
		fixture := dups(1000)
		fmWrite(t, path, fixture)
		m := fmOpen(t, path)
		if got := fmRead(t, path); got != fixture {
			t.Fatalf("a file under the compaction floor was rewritten on open")
		}
		for n := 10; n < 40; n++ {
			fmMark(t, m, fmKeyN(n), "vst")
		}
		got := fmRead(t, path)
		if lineCount(got) != 33 || !distinct(got) {
			t.Fatalf("after 30 marks past the floor the file has %d lines, want the 33 distinct marks", lineCount(got))
		}
		if len(got) >= len(fixture) {
			t.Errorf("compaction did not shrink the file: %d bytes, was %d", len(got), len(fixture))
		}
		// The store still appends to the file after the rename.
		fmMark(t, m, fmKeyN(99), "mail")
		fmClose(t, m)
		if got := fmRead(t, path); lineCount(got) != 34 {
			t.Errorf("a mark after compaction did not reach the file: %d lines, want 34", lineCount(got))
		}
		m = fmOpen(t, path)
		for i := range keys {
			if !fmMarked(t, m, keys[i]) {
				t.Errorf("compaction lost mark %d", i)
			}
		}
		for n := 10; n < 40; n++ {
			if !fmMarked(t, m, fmKeyN(n)) {
				t.Errorf("compaction lost the mark on key %d", n)
			}
		}
		if !fmMarked(t, m, fmKeyN(99)) {
			t.Errorf("the mark made after compaction was lost")
		}
	})
}

func TestFileMarksRefusesOtherKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m := fmOpen(t, path)
	for _, key := range []string{
		fmSecretURI,
		"",
		"sha256:",
		fmKeyN(1) + " x",
		fmKeyN(1) + "\n",
		fmKeyN(1)[:len(fmKeyN(1))-1] + "=",
		"sha512:" + fmKeyN(1)[len("sha256:"):],
	} {
		err := m.Mark(t.Context(), key, "vst")
		if err == nil {
			t.Errorf("Mark(%q) = nil; a key other than a sha256 key must be refused", key)
			continue
		}
		if len(key) > len("sha256:") && strings.Contains(err.Error(), key) {
			t.Errorf("Mark's error quotes the key: %v", err)
		}
	}
	if fmMarked(t, m, fmSecretURI) {
		t.Errorf("a refused key reads marked")
	}
	fmClose(t, m)
	if got := fmRead(t, path); strings.Contains(got, "files.example") || strings.Contains(got, "sig=") {
		t.Errorf("the file holds a uri:\n%q", got)
	}
}

func TestFileMarksContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m := fmOpen(t, path)
	fmMark(t, m, fmKeyN(1), "vst")
	before := fmRead(t, path)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := m.Mark(ctx, fmKeyN(2), "vst"); !errors.Is(err, context.Canceled) {
		t.Errorf("Mark with a cancelled context = %v, want context.Canceled", err)
	}
	if fmMarked(t, m, fmKeyN(2)) {
		t.Errorf("a mark refused for its context reads marked")
	}
	if got := fmRead(t, path); got != before {
		t.Errorf("Mark with a cancelled context wrote to the file")
	}
	if err := m.Mark(ctx, fmKeyN(1), "vst"); err != nil {
		t.Errorf("Mark of a recorded mark with a cancelled context = %v, want nil (nothing to write)", err)
	}
}

func TestFileMarksClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m := fmOpen(t, path)
	fmMark(t, m, fmKeyN(1), "vst")
	fmClose(t, m)
	if err := m.Mark(t.Context(), fmKeyN(2), "vst"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Mark after Close = %v, want os.ErrClosed", err)
	}
	if _, err := m.Marked(t.Context(), fmKeyN(1)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Marked after Close = %v, want os.ErrClosed (the registry then counts the uri as marked)", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

func TestFileMarksConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	m := fmOpen(t, path)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Every writer marks every key once and a key of its own.
				if err := m.Mark(t.Context(), fmKeyN(i), "vst"); err != nil {
					t.Errorf("Mark = %v", err)
				}
				if err := m.Mark(t.Context(), fmKeyN(1000+w*each+i), fmt.Sprint("s", w)); err != nil {
					t.Errorf("Mark = %v", err)
				}
				if _, err := m.Marked(t.Context(), fmKeyN(i)); err != nil {
					t.Errorf("Marked = %v", err)
				}
			}
		})
	}
	wg.Wait()
	fmClose(t, m)
	if got := strings.Count(fmRead(t, path), "\n") - 1; got != each+writers*each {
		t.Errorf("the file holds %d marks, want %d distinct ones", got, each+writers*each)
	}
	m = fmOpen(t, path)
	for n := range each {
		if !fmMarked(t, m, fmKeyN(n)) {
			t.Errorf("key %d lost", n)
		}
	}
	for n := 1000; n < 1000+writers*each; n++ {
		if !fmMarked(t, m, fmKeyN(n)) {
			t.Errorf("key %d lost", n)
		}
	}
}

// fmReg returns a registry over the mark store m.
func fmReg(t *testing.T, m refs.MarkStore) *refs.Registry {
	t.Helper()
	g, err := refs.New(refs.Config{Marks: m})
	if err != nil {
		t.Fatalf("refs.New = %v", err)
	}
	return g
}

func fmRegistration(uri, server string, never bool) convert.Registration {
	return convert.Registration{
		Testimony: convert.Testimony{URI: uri, Present: convert.FieldURI},
		Server:    server,
		Never:     never,
	}
}

// fmCheckNoURI fails the test when the file at path holds any part of
// fmSecretURI that could identify it or its credential.
func fmCheckNoURI(t *testing.T, path string) {
	t.Helper()
	data := fmRead(t, path)
	for _, part := range []string{"files.example", "FILES.EXAMPLE", "secret", "sig=", "sig%3D", "abc"} {
		if strings.Contains(data, part) {
			t.Errorf("the mark file holds %q:\n%q", part, data)
		}
	}
}

func TestFileMarksInRegistry(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "marks")
	m := fmOpen(t, path)
	g := fmReg(t, m)
	if e := g.Register(ctx, fmRegistration(fmSecretURI, "vst", true)); !e.Never {
		t.Fatalf("setup: a never registration is not marked")
	}
	if !fmMarked(t, m, fmKey(fmSecretURI)) {
		t.Errorf("the registry's mark did not reach the file store")
	}
	fmClose(t, m)
	fmCheckNoURI(t, path)

	m = fmOpen(t, path)
	g = fmReg(t, m)
	if g.MarkedHere(fmSecretURI) {
		t.Fatalf("setup: a new registry's memory already holds the mark")
	}
	if !g.Marked(ctx, fmSecretURI) {
		t.Errorf("a registry over the reopened store does not see the mark")
	}
	if e := g.Register(ctx, fmRegistration(fmSecretURI, "mail", false)); !e.Never {
		t.Errorf("a registry over the reopened store registered the marked uri unmarked")
	}
	if e := g.Register(ctx, fmRegistration("https://files.example/other", "mail", false)); e.Never {
		t.Errorf("an unmarked uri came out marked")
	}
	fmCheckNoURI(t, path)
}

// Environment of a TestFileMarksChild run.
const (
	fmChildPath  = "REFCORE_FILEMARKS_CHILD_PATH"
	fmChildPhase = "REFCORE_FILEMARKS_CHILD_PHASE"
)

// TestFileMarksSurviveRestart runs this test binary twice as a child
// process over one mark file: the first marks a uri never, the second, a
// new process, must refuse it.
func TestFileMarksSurviveRestart(t *testing.T) {
	if os.Getenv(fmChildPath) != "" {
		t.Skip("running as a child")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "marks")
	for _, phase := range []string{"mark", "refuse"} {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, exe, "-test.run=^TestFileMarksChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fmChildPath+"="+path, fmChildPhase+"="+phase)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("child %q failed: %v\n%s", phase, err, out)
		}
		for _, want := range []string{"child phase " + phase + " done", "--- PASS: TestFileMarksChild", "\nPASS\n"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Fatalf("child %q output lacks %q:\n%s", phase, want, out)
			}
		}
		fmCheckNoURI(t, path)
	}
}

// TestFileMarksFullDisk runs a child under a file size limit, so that a
// mark's line is written only in part: the store cuts the partial line at
// once, and the file stays readable with every mark reported done.
func TestFileMarksFullDisk(t *testing.T) {
	if os.Getenv(fmChildPath) != "" {
		t.Skip("running as a child")
	}
	sh, err := exec.LookPath("sh")
	if err != nil || runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs a POSIX shell's ulimit")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "marks")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, "-c", `ulimit -f 1 && exec "$0" "$@"`,
		exe, "-test.run=^TestFileMarksChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fmChildPath+"="+path, fmChildPhase+"=full")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	var n int
	if i := bytes.Index(out, []byte("full after ")); i < 0 {
		t.Fatalf("child output lacks its count:\n%s", out)
	} else if _, err := fmt.Sscanf(string(out[i:]), "full after %d marks", &n); err != nil {
		t.Fatalf("child count: %v\n%s", err, out)
	}
	data := fmRead(t, path)
	if want := fmHeader(t) + fmLines(0, n, "vst"); data != want {
		t.Fatalf("after a write cut short the file holds\n%q\nwant the %d whole lines\n%q", data, n, want)
	}
	m := fmOpen(t, path)
	for i := range n {
		if !fmMarked(t, m, fmKeyN(i)) {
			t.Errorf("mark %d lost", i)
		}
	}
	if fmMarked(t, m, fmKeyN(n)) {
		t.Errorf("the mark whose write was cut short reads marked")
	}
}

// fmLines is the lines of marks on keys from..to-1 by server.
func fmLines(from, to int, server string) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(fmLine(fmKeyN(i), server))
	}
	return b.String()
}

// TestFileMarksChild is one process of TestFileMarksSurviveRestart or
// TestFileMarksFullDisk. It skips itself unless one of them started it.
func TestFileMarksChild(t *testing.T) {
	path := os.Getenv(fmChildPath)
	if path == "" {
		t.Skip("runs only as a child of TestFileMarksSurviveRestart")
	}
	ctx := t.Context()
	m, err := refs.OpenFileMarks(path)
	if err != nil {
		t.Fatalf("OpenFileMarks = %v", err)
	}
	g := fmReg(t, m)
	phase := os.Getenv(fmChildPhase)
	switch phase {
	case "mark":
		if e := g.Register(ctx, fmRegistration(fmSecretURI, "vst", true)); !e.Never {
			t.Errorf("a never registration is not marked")
		}
	case "refuse":
		if g.MarkedHere(fmSecretURI) {
			t.Fatalf("a new process's registry memory already holds the mark")
		}
		e := g.Register(ctx, fmRegistration(fmSecretURI, "mail", false))
		if !e.Never {
			t.Errorf("after a restart the marked uri registered unmarked")
		}
		if !g.Marked(ctx, fmSecretURI) {
			t.Errorf("after a restart Marked reports the uri unmarked")
		}
		if !g.Marked(ctx, "HTTPS://FILES.EXAMPLE:443/secret?sig=abc") {
			t.Errorf("after a restart another spelling of the uri reads unmarked")
		}
		if e := g.Register(ctx, fmRegistration("https://files.example/other?sig=abc", "mail", false)); e.Never {
			t.Errorf("after a restart an unmarked uri came out marked")
		}
	case "full":
		// Started with a file size limit: a mark's line meets it midway.
		n := 0
		for ; n < 1000; n++ {
			if err := m.Mark(ctx, fmKeyN(n), "vst"); err != nil {
				break
			}
		}
		if n == 0 || n == 1000 {
			t.Fatalf("%d marks went through under the file size limit", n)
		}
		if err := m.Mark(ctx, fmKeyN(n), "vst"); err == nil {
			t.Errorf("a retried mark went through on a full disk")
		}
		if fmMarked(t, m, fmKeyN(n)) {
			t.Errorf("a mark that failed to write reads marked")
		}
		if !fmMarked(t, m, fmKeyN(n-1)) {
			t.Errorf("a mark that was written reads unmarked")
		}
		t.Logf("full after %d marks", n)
	default:
		t.Fatalf("unknown phase %q", phase)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	t.Logf("child phase %s done", phase)
}
