package changelog

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fragment types, in the order their groups appear in a release section.
const (
	TypeBreaking = "breaking" // someone has to change code or configuration
	TypeSecurity = "security" // a vulnerability fix or a tightened safety limit
	TypeChanged  = "changed"  // a compatible change of existing behaviour
	TypeAdded    = "added"    // new API or feature
	TypeFixed    = "fixed"    // a bug fix
	TypeRemoved  = "removed"  // something taken away without breaking callers
)

// readmeName is the file in a fragment directory that documents the rules.
// It is never read as a fragment.
const readmeName = "README.md"

// groups lists the known types in render order with their section titles.
var groups = []struct{ typ, title string }{
	{TypeBreaking, "Breaking"},
	{TypeSecurity, "Security"},
	{TypeChanged, "Changed"},
	{TypeAdded, "Added"},
	{TypeFixed, "Fixed"},
	{TypeRemoved, "Removed"},
}

// actors are the openings a breaking fragment may start with.
var actors = []string{
	"Hosts",
	"Host authors",
	"Server authors",
	"Callers",
	"Anyone",
	"Users",
	"Who has to act:",
}

// slugPattern accepts lowercase ASCII letters and digits in runs joined by
// single hyphens.
var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Types returns the fragment types in render order: breaking, security,
// changed, added, fixed, removed. The caller owns the returned slice.
func Types() []string {
	ts := make([]string, len(groups))
	for i, g := range groups {
		ts[i] = g.typ
	}
	return ts
}

// Actors returns the phrases a breaking fragment's first sentence may start
// with, so that it opens by saying who has to act. The caller owns the
// returned slice.
func Actors() []string {
	return slices.Clone(actors)
}

// typeRank returns the position of typ in render order, or len(groups) for a
// type that is not known.
func typeRank(typ string) int {
	for i, g := range groups {
		if g.typ == typ {
			return i
		}
	}
	return len(groups)
}

// Fragment is one change note read from a file named <slug>.<type>.md.
type Fragment struct {
	// Slug is the file name before the type, for example "gzip-ceiling".
	Slug string
	// Type is one of the values returned by [Types].
	Type string
	// Body is the file's Markdown text with line endings normalised to
	// "\n" and surrounding white space removed.
	Body string
	// Path is the file's path within the fs.FS it was read from.
	Path string
}

// Errors reported for bad fragment files. Each arrives wrapped in an
// [*Error] that names the file; test for them with [errors.Is].
var (
	// ErrBadName means the file name is not <slug>.<type>.md with a slug of
	// lowercase letters and digits joined by single hyphens, or the entry is
	// a directory or a file without the .md extension.
	ErrBadName = errors.New("bad fragment name, want <slug>.<type>.md")
	// ErrUnknownType means the type part of the name is not one of [Types].
	ErrUnknownType = errors.New("unknown fragment type")
	// ErrEmptyBody means the file is empty or holds only white space.
	ErrEmptyBody = errors.New("empty fragment body")
	// ErrNotSentence means the body's opening paragraph does not end with
	// '.', '!', '?' or ':', so it is not a full sentence.
	ErrNotSentence = errors.New("fragment must open with a full sentence")
	// ErrNoActor means a breaking fragment's first sentence does not start
	// with one of [Actors].
	ErrNoActor = errors.New("breaking fragment must open by saying who has to act")
	// ErrNotUTF8 means the file is not valid UTF-8.
	ErrNotUTF8 = errors.New("fragment is not valid UTF-8")
)

// Error reports a fragment file that cannot be used.
type Error struct {
	// Path is the file's path within the fs.FS given to ParseDir.
	Path string
	// Err is, or wraps, one of the sentinel errors such as [ErrBadName].
	Err error
}

// Error returns "changelog: <path>: <reason>".
func (e *Error) Error() string {
	return "changelog: " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns e.Err, so [errors.Is] matches the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// ParseDir reads the fragments at the root of fsys and checks each one.
//
// README.md and hidden entries (names starting with ".") are skipped. Every
// other entry must be a regular file named <slug>.<type>.md whose body obeys
// the rules described in the package doc. When any entry fails, ParseDir
// returns a nil slice and an error joining one [*Error] per bad file (see
// [errors.Join]); a failure to list the directory is returned as is.
//
// The fragments are returned sorted by type, in the order of [Types], then
// by slug. An empty directory yields no fragments and no error.
func ParseDir(fsys fs.FS) ([]Fragment, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	var (
		frags []Fragment
		errs  []error
	)
	for _, ent := range entries {
		name := ent.Name()
		if name == readmeName || strings.HasPrefix(name, ".") {
			continue
		}
		f, err := parseEntry(fsys, ent)
		if err != nil {
			errs = append(errs, &Error{Path: name, Err: err})
			continue
		}
		frags = append(frags, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(frags, func(a, b Fragment) int {
		if c := typeRank(a.Type) - typeRank(b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.Slug, b.Slug)
	})
	return frags, nil
}

// parseEntry reads and checks one directory entry.
func parseEntry(fsys fs.FS, ent fs.DirEntry) (Fragment, error) {
	name := ent.Name()
	if !ent.Type().IsRegular() && !ent.Type().IsDir() {
		// Symlinks and other special files: resolve through Stat.
		info, err := fs.Stat(fsys, name)
		if err != nil {
			return Fragment{}, err
		}
		if !info.Mode().IsRegular() {
			return Fragment{}, ErrBadName
		}
	}
	if ent.IsDir() {
		return Fragment{}, ErrBadName
	}
	slug, typ, err := splitName(name)
	if err != nil {
		return Fragment{}, err
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Fragment{}, err
	}
	if !utf8.Valid(data) {
		return Fragment{}, ErrNotUTF8
	}
	body := strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err := checkBody(typ, body); err != nil {
		return Fragment{}, err
	}
	return Fragment{Slug: slug, Type: typ, Body: body, Path: name}, nil
}

// splitName splits "<slug>.<type>.md" and checks both parts.
func splitName(name string) (slug, typ string, err error) {
	base, ok := strings.CutSuffix(name, ".md")
	if !ok {
		return "", "", ErrBadName
	}
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return "", "", ErrBadName
	}
	slug, typ = base[:i], base[i+1:]
	if !slugPattern.MatchString(slug) {
		return "", "", ErrBadName
	}
	if typeRank(typ) == len(groups) {
		return "", "", fmt.Errorf("%w %q, want one of %s", ErrUnknownType, typ, strings.Join(Types(), ", "))
	}
	return slug, typ, nil
}

// checkBody applies the content rules to a trimmed body.
func checkBody(typ, body string) error {
	if body == "" {
		return ErrEmptyBody
	}
	para, _, _ := strings.Cut(body, "\n\n")
	para = strings.TrimRightFunc(para, unicode.IsSpace)
	// Closing marks may follow the sentence's final punctuation.
	para = strings.TrimRight(para, "*_`)]\"'\u201d\u2019")
	if !strings.ContainsAny(lastRune(para), ".!?:") {
		return ErrNotSentence
	}
	if typ == TypeBreaking && !opensWithActor(body) {
		return ErrNoActor
	}
	return nil
}

// lastRune returns the final rune of s as a string, or "" for an empty s.
func lastRune(s string) string {
	r, n := utf8.DecodeLastRuneInString(s)
	if n == 0 {
		return ""
	}
	return string(r)
}

// opensWithActor reports whether body starts with one of the actors, allowing
// for leading emphasis markers such as "**Hosts**".
func opensWithActor(body string) bool {
	s := strings.TrimLeft(body, "*_")
	for _, a := range actors {
		rest, ok := strings.CutPrefix(s, a)
		if !ok {
			continue
		}
		// The actor must be a whole word: "Hosts must", not "Hostsfile".
		r, _ := utf8.DecodeRuneInString(rest)
		if rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return true
		}
	}
	return false
}
