package changelog

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// file builds a MapFS entry from text.
func file(text string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(text)}
}

func TestParseDirRejects(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		body   string
		want   error
		reason string
	}{
		{"unknown-type", "gzip.feature.md", "Adds gzip.", ErrUnknownType, "feature is not one of the six types"},
		{"misspelt-type", "gzip.Added.md", "Adds gzip.", ErrUnknownType, "types are lowercase"},
		{"empty-body", "gzip.added.md", "", ErrEmptyBody, "a fragment must say something"},
		{"blank-body", "gzip.added.md", " \n\t\r\n ", ErrEmptyBody, "white space alone is empty"},
		{"no-sentence", "gzip.added.md", "gzip support", ErrNotSentence, "a fragment opens with a full sentence"},
		{"uppercase-slug", "Gzip.added.md", "Adds gzip.", ErrBadName, "slugs are lowercase"},
		{"underscore-slug", "gzip_reader.added.md", "Adds gzip.", ErrBadName, "only hyphens join words"},
		{"dotted-slug", "gzip.v2.added.md", "Adds gzip.", ErrBadName, "a slug has no dots"},
		{"trailing-hyphen", "gzip-.added.md", "Adds gzip.", ErrBadName, "hyphens only between words"},
		{"no-type", "gzip.md", "Adds gzip.", ErrBadName, "the type part is required"},
		{"not-markdown", "gzip.added.txt", "Adds gzip.", ErrBadName, "fragments are .md files"},
		{"breaking-no-actor", "drop-v1.breaking.md", "The v1 API is gone.", ErrNoActor, "breaking must say who acts"},
		{"breaking-actor-not-word", "drop-v1.breaking.md", "Hostsfile parsing changed.", ErrNoActor, "the actor must be a whole word"},
		{"breaking-actor-later", "drop-v1.breaking.md", "The v1 API is gone. Hosts must move to v2.", ErrNoActor, "the first sentence must name the actor"},
		{"not-utf8", "gzip.added.md", "Adds \xff gzip.", ErrNotUTF8, "bodies are UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				t.Fatal("test case needs a reason")
			}
			fsys := fstest.MapFS{
				tt.file:       file(tt.body),
				"ok.fixed.md": file("Fixes a thing."),
				"README.md":   file(""),
				".gitkeep":    file(""),
			}
			frags, err := ParseDir(fsys)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseDir error = %v, want %v (%s)", err, tt.want, tt.reason)
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.Path != tt.file {
				t.Errorf("ParseDir error does not name %q: %#v", tt.file, fe)
			}
			if frags != nil {
				t.Errorf("ParseDir returned fragments alongside an error: %v", frags)
			}
		})
	}
}

func TestParseDirRejectsSubdirectory(t *testing.T) {
	fsys := fstest.MapFS{"fetch/123.md": file("Adds fetch.")}
	_, err := ParseDir(fsys)
	var fe *Error
	if !errors.Is(err, ErrBadName) || !errors.As(err, &fe) || fe.Path != "fetch" {
		t.Fatalf("ParseDir error = %v, want ErrBadName naming fetch", err)
	}
}

func TestParseDirReportsEveryBadFile(t *testing.T) {
	fsys := fstest.MapFS{
		"a.added.md":    file(""),
		"b.nope.md":     file("Text."),
		"c.fixed.md":    file("Fixes c."),
		"d.breaking.md": file("Nothing works."),
	}
	_, err := ParseDir(fsys)
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("ParseDir error %v does not join several errors", err)
	}
	var got []string
	for _, e := range j.Unwrap() {
		var fe *Error
		if !errors.As(e, &fe) {
			t.Fatalf("error %v is not an *Error", e)
		}
		got = append(got, fe.Path)
	}
	want := []string{"a.added.md", "b.nope.md", "d.breaking.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bad files (-want +got):\n%s", diff)
	}
}

func TestParseDirSkipsReadme(t *testing.T) {
	fsys := fstest.MapFS{
		// The README breaks every rule a fragment has.
		"README.md": file("# Fragments\n\nno sentence here"),
		".gitkeep":  file(""),
	}
	frags, err := ParseDir(fsys)
	if err != nil {
		t.Fatalf("ParseDir: %v", err)
	}
	if len(frags) != 0 {
		t.Errorf("ParseDir = %v, want no fragments", frags)
	}
}

func TestParseDirAccepts(t *testing.T) {
	fsys := fstest.MapFS{
		"zeta.added.md":     file("Adds zeta.\r\n\r\nWith a second paragraph.\r\n"),
		"alpha.added.md":    file("\n  Adds alpha.  \n"),
		"v1.removed.md":     file("Removes the deprecated v1 shim."),
		"cve-1.security.md": file("Caps decoded size at 16 MiB (see [fetch.ErrTooLarge])."),
		"api.breaking.md":   file("**Callers** of `Fetch` must pass a context."),
		"who.breaking.md":   file("Who has to act: hosts that set `MaxBytes` to 0."),
		"list.changed.md":   file("Changes these defaults:\n\n- one\n- two"),
		"bug-2.fixed.md":    file("Fixes a panic!"),
		"README.md":         file("ignored"),
	}
	frags, err := ParseDir(fsys)
	if err != nil {
		t.Fatalf("ParseDir: %v", err)
	}
	want := []Fragment{
		{Slug: "api", Type: TypeBreaking, Body: "**Callers** of `Fetch` must pass a context.", Path: "api.breaking.md"},
		{Slug: "who", Type: TypeBreaking, Body: "Who has to act: hosts that set `MaxBytes` to 0.", Path: "who.breaking.md"},
		{Slug: "cve-1", Type: TypeSecurity, Body: "Caps decoded size at 16 MiB (see [fetch.ErrTooLarge]).", Path: "cve-1.security.md"},
		{Slug: "list", Type: TypeChanged, Body: "Changes these defaults:\n\n- one\n- two", Path: "list.changed.md"},
		{Slug: "alpha", Type: TypeAdded, Body: "Adds alpha.", Path: "alpha.added.md"},
		{Slug: "zeta", Type: TypeAdded, Body: "Adds zeta.\n\nWith a second paragraph.", Path: "zeta.added.md"},
		{Slug: "bug-2", Type: TypeFixed, Body: "Fixes a panic!", Path: "bug-2.fixed.md"},
		{Slug: "v1", Type: TypeRemoved, Body: "Removes the deprecated v1 shim.", Path: "v1.removed.md"},
	}
	if diff := cmp.Diff(want, frags); diff != "" {
		t.Errorf("ParseDir (-want +got):\n%s", diff)
	}
}

func TestBreakingActors(t *testing.T) {
	for _, a := range Actors() {
		t.Run(a, func(t *testing.T) {
			body := a + " must update their configuration."
			if err := checkBody(TypeBreaking, body); err != nil {
				t.Errorf("checkBody(%q) = %v, want nil", body, err)
			}
		})
	}
}

func TestRenderGroupOrder(t *testing.T) {
	// Deliberately in reverse order: Render must regroup.
	frags := []Fragment{
		{Slug: "r", Type: TypeRemoved, Body: "Removes r."},
		{Slug: "f", Type: TypeFixed, Body: "Fixes f."},
		{Slug: "a", Type: TypeAdded, Body: "Adds a.\n\nMore about a."},
		{Slug: "c", Type: TypeChanged, Body: "Changes c."},
		{Slug: "s", Type: TypeSecurity, Body: "Secures s."},
		{Slug: "b", Type: TypeBreaking, Body: "Hosts must act on b."},
		{Slug: "x", Type: "mystery", Body: "Unknown x."},
	}
	got := Render("v1.0.0", "2025-01-02", frags)
	want := `## v1.0.0 (2025-01-02)

### Breaking

- Hosts must act on b.

### Security

- Secures s.

### Changed

- Changes c.

### Added

- Adds a.

  More about a.

### Fixed

- Fixes f.

### Removed

- Removes r.

### Other

- Unknown x.
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
}

func TestRenderOmitsEmptyGroupsAndDate(t *testing.T) {
	got := Render("Unreleased", "", []Fragment{
		{Slug: "b", Type: TypeFixed, Body: "Fixes b."},
		{Slug: "a", Type: TypeFixed, Body: "Fixes a."},
	})
	want := "## Unreleased\n\n### Fixed\n\n- Fixes b.\n- Fixes a.\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	if got, want := Render("v0.1.0", "2025-01-02", nil), "## v0.1.0 (2025-01-02)\n"; got != want {
		t.Errorf("Render with no fragments = %q, want %q", got, want)
	}
}

func TestAssemble(t *testing.T) {
	const section = "## v0.2.0 (2025-02-01)\n\n### Added\n\n- Adds b.\n"
	tests := []struct {
		name     string
		existing string
		want     string
		reason   string
	}{
		{
			name:     "newest-on-top",
			existing: "# Changelog\n\nIntro text.\n\n## v0.1.0 (2025-01-01)\n\n### Added\n\n- Adds a.\n",
			want:     "# Changelog\n\nIntro text.\n\n" + section + "\n## v0.1.0 (2025-01-01)\n\n### Added\n\n- Adds a.\n",
			reason:   "the new release goes above the previous newest one",
		},
		{
			name:     "first-release",
			existing: "# Changelog\n\nIntro text.\n\nUnreleased changes wait in changelog.d/.\n",
			want:     "# Changelog\n\nIntro text.\n\nUnreleased changes wait in changelog.d/.\n\n" + section,
			reason:   "with no release yet the section follows the preamble",
		},
		{
			name:     "empty",
			existing: "",
			want:     "# Changelog\n\n" + section,
			reason:   "an empty file gets a title",
		},
		{
			name:     "unreleased-heading-stays-on-top",
			existing: "# Changelog\n\n## Unreleased\n\nNothing yet.\n\n## v0.1.0\n\n- Old.\n",
			want:     "# Changelog\n\n## Unreleased\n\nNothing yet.\n\n" + section + "\n## v0.1.0\n\n- Old.\n",
			reason:   "an Unreleased heading is not a release",
		},
		{
			name:     "heading-in-code-fence",
			existing: "# Changelog\n\n```\n## not a heading\n```\n\n## v0.1.0\n",
			want:     "# Changelog\n\n```\n## not a heading\n```\n\n" + section + "\n## v0.1.0\n",
			reason:   "headings inside code blocks are text",
		},
		{
			name:     "no-title",
			existing: "## v0.1.0\n\n- Old.\n\n\n",
			want:     section + "\n## v0.1.0\n\n- Old.\n",
			reason:   "a file that starts with a release gets the section first",
		},
		{
			name:     "level3-is-not-a-release",
			existing: "# Changelog\n\n### Note\n\nText.\n",
			want:     "# Changelog\n\n### Note\n\nText.\n\n" + section,
			reason:   "only level-2 headings are releases",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				t.Fatal("test case needs a reason")
			}
			got := Assemble(tt.existing, section)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Assemble (%s) (-want +got):\n%s", tt.reason, diff)
			}
		})
	}
}

func TestAssembleTwiceKeepsNewestFirst(t *testing.T) {
	text := Assemble("", Render("v0.1.0", "2025-01-01", []Fragment{{Type: TypeAdded, Body: "Adds a."}}))
	text = Assemble(text, Render("v0.2.0", "2025-02-01", []Fragment{{Type: TypeFixed, Body: "Fixes b."}}))
	i2 := strings.Index(text, "## v0.2.0")
	i1 := strings.Index(text, "## v0.1.0")
	if i2 < 0 || i1 < 0 || i2 > i1 {
		t.Errorf("v0.2.0 should precede v0.1.0:\n%s", text)
	}
}

// TestRepoFragments checks the fragments committed to the repository, so a
// bad fragment fails CI. An empty directory passes.
func TestRepoFragments(t *testing.T) {
	frags, err := ParseDir(os.DirFS("../../changelog.d"))
	if err != nil {
		t.Fatalf("changelog.d has bad fragments (see changelog.d/README.md):\n%v", err)
	}
	t.Logf("%d fragment(s) in changelog.d", len(frags))
}
