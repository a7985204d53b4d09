package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixedNow is the clock used for default release dates.
func fixedNow() time.Time { return time.Date(2025, 3, 4, 23, 0, 0, 0, time.UTC) }

// setup creates a fragment directory holding files and returns the
// directory and the changelog path next to it.
func setup(t *testing.T, files map[string]string) (dir, out string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "changelog.d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(root, "CHANGELOG.md")
}

// runCmd runs the command with args and returns its exit status and output.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e, fixedNow)
	return code, o.String(), e.String()
}

func TestCheck(t *testing.T) {
	dir, _ := setup(t, map[string]string{
		"README.md":       "Rules.",
		"ok.added.md":     "Adds ok.",
		"bad.breaking.md": "Everything changed.",
	})
	code, _, stderr := runCmd(t, "-dir", dir, "-check")
	if code != exitFail {
		t.Errorf("exit = %d, want %d", code, exitFail)
	}
	if bad := filepath.Join(dir, "bad.breaking.md"); !strings.Contains(stderr, bad) {
		t.Errorf("stderr does not name %s:\n%s", bad, stderr)
	}

	os.Remove(filepath.Join(dir, "bad.breaking.md"))
	if code, _, stderr := runCmd(t, "-dir", dir, "-check"); code != exitOK {
		t.Errorf("exit = %d, want %d; stderr:\n%s", code, exitOK, stderr)
	}
}

func TestPreview(t *testing.T) {
	dir, out := setup(t, map[string]string{"ok.added.md": "Adds ok."})
	code, stdout, stderr := runCmd(t, "-dir", dir, "-out", out)
	if code != exitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	if diff := cmp.Diff("## Unreleased\n\n### Added\n\n- Adds ok.\n", stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("preview touched %s (stat error %v)", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.added.md")); err != nil {
		t.Errorf("preview removed a fragment: %v", err)
	}
}

func TestRelease(t *testing.T) {
	dir, out := setup(t, map[string]string{
		"README.md":  "Rules.",
		"a.added.md": "Adds a.",
		"b.fixed.md": "Fixes b.",
	})
	old := "# Changelog\n\nIntro.\n\n## v0.1.0 (2025-01-01)\n\n### Added\n\n- First.\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "-dir", dir, "-out", out, "-release", "v0.2.0")
	if code != exitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Changelog\n\nIntro.\n\n" +
		"## v0.2.0 (2025-03-04)\n\n### Added\n\n- Adds a.\n\n### Fixed\n\n- Fixes b.\n\n" +
		"## v0.1.0 (2025-01-01)\n\n### Added\n\n- First.\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", out, diff)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{"README.md"}, left); diff != "" {
		t.Errorf("files left in %s (-want +got):\n%s", dir, diff)
	}

	// Releasing the same version again is refused, even with new fragments.
	os.WriteFile(filepath.Join(dir, "c.fixed.md"), []byte("Fixes c."), 0o644)
	if code, _, _ := runCmd(t, "-dir", dir, "-out", out, "-release", "v0.2.0", "-date", "2025-03-05"); code != exitFail {
		t.Errorf("duplicate release: exit = %d, want %d", code, exitFail)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.fixed.md")); err != nil {
		t.Errorf("refused release removed a fragment: %v", err)
	}
}

func TestReleaseCreatesChangelog(t *testing.T) {
	dir, out := setup(t, map[string]string{"a.added.md": "Adds a."})
	if code, _, stderr := runCmd(t, "-dir", dir, "-out", out, "-release", "v0.1.0", "-date", "2025-01-01"); code != exitOK {
		t.Fatalf("exit = %d; stderr:\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Changelog\n\n## v0.1.0 (2025-01-01)\n\n### Added\n\n- Adds a.\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", out, diff)
	}
}

func TestReleaseFailures(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		args   []string
		want   int
		reason string
	}{
		{"nothing-to-release", map[string]string{"README.md": "Rules."}, []string{"-release", "v1.0.0"}, exitFail, "a release needs fragments"},
		{"bad-fragment", map[string]string{"a.added.md": ""}, []string{"-release", "v1.0.0"}, exitFail, "bad fragments block a release"},
		{"check-and-release", nil, []string{"-check", "-release", "v1.0.0"}, exitUsage, "the modes exclude each other"},
		{"date-without-release", nil, []string{"-date", "2025-01-01"}, exitUsage, "-date only makes sense with -release"},
		{"bad-date", nil, []string{"-release", "v1.0.0", "-date", "01/02/2025"}, exitUsage, "dates are YYYY-MM-DD"},
		{"spaced-version", nil, []string{"-release", "v1 beta"}, exitUsage, "a version is one word"},
		{"stray-argument", nil, []string{"extra"}, exitUsage, "no positional arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				t.Fatal("test case needs a reason")
			}
			dir, out := setup(t, tt.files)
			args := append([]string{"-dir", dir, "-out", out}, tt.args...)
			code, _, stderr := runCmd(t, args...)
			if code != tt.want {
				t.Errorf("exit = %d, want %d (%s); stderr:\n%s", code, tt.want, tt.reason, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("failed run wrote %s", out)
			}
		})
	}
}
