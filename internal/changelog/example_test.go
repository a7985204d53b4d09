package changelog_test

import (
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/mcplrefs/refcore/internal/changelog"
)

func ExampleRender() {
	frags := []changelog.Fragment{
		{Slug: "gzip-ceiling", Type: changelog.TypeFixed, Body: "Counts decoded bytes against the ceiling."},
		{Slug: "ctx-first", Type: changelog.TypeBreaking, Body: "Callers of `Fetch` must pass a context."},
	}
	fmt.Print(changelog.Render("v0.2.0", "2025-06-01", frags))
	// Output:
	// ## v0.2.0 (2025-06-01)
	//
	// ### Breaking
	//
	// - Callers of `Fetch` must pass a context.
	//
	// ### Fixed
	//
	// - Counts decoded bytes against the ceiling.
}

func ExampleParseDir() {
	fsys := fstest.MapFS{
		"README.md":          {Data: []byte("How to write fragments.")},
		"labels.added.md":    {Data: []byte("Adds label cleaning.")},
		"redirects.fixed.md": {Data: []byte("Drops credentials on cross-origin redirects.")},
		"misc.notes.md":      {Data: []byte("Some notes.")},
	}
	_, err := changelog.ParseDir(fsys)
	var fe *changelog.Error
	if errors.As(err, &fe) {
		fmt.Println(fe.Path, errors.Is(err, changelog.ErrUnknownType))
	}

	delete(fsys, "misc.notes.md")
	frags, _ := changelog.ParseDir(fsys)
	for _, f := range frags {
		fmt.Println(f.Type, f.Slug)
	}
	// Output:
	// misc.notes.md true
	// added labels
	// fixed redirects
}

func ExampleAssemble() {
	existing := "# Changelog\n\nIntro.\n\n## v0.1.0 (2025-01-01)\n\n### Added\n\n- Adds a.\n"
	section := changelog.Render("v0.2.0", "2025-02-01", []changelog.Fragment{
		{Slug: "b", Type: changelog.TypeFixed, Body: "Fixes b."},
	})
	fmt.Print(changelog.Assemble(existing, section))
	// Output:
	// # Changelog
	//
	// Intro.
	//
	// ## v0.2.0 (2025-02-01)
	//
	// ### Fixed
	//
	// - Fixes b.
	//
	// ## v0.1.0 (2025-01-01)
	//
	// ### Added
	//
	// - Adds a.
}
