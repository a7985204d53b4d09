// Command changelog checks the fragments in changelog.d/ and assembles them
// into CHANGELOG.md.
//
// Usage, from the module root:
//
//	go run ./internal/changelog/cmd/changelog [-dir changelog.d] [-out CHANGELOG.md] -check
//	go run ./internal/changelog/cmd/changelog [-dir changelog.d]
//	go run ./internal/changelog/cmd/changelog [-dir changelog.d] [-out CHANGELOG.md] -release VERSION [-date YYYY-MM-DD]
//
// With -check it only validates the fragments. With -release it renders
// them as a release section, inserts it at the top of the -out file
// (creating the file if needed), and then deletes the fragments it used;
// README.md and hidden files stay. -date defaults to today's date in UTC.
// With neither flag it prints the "Unreleased" section the fragments would
// produce, without touching any file.
//
// The exit status is 0 on success, 1 when a fragment is bad or a file
// operation fails (each bad fragment is named on standard error), and 2 for
// a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcplrefs/refcore/internal/changelog"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// dateLayout is the only accepted -date format.
const dateLayout = "2006-01-02"

// run is main without the process: it parses args, does the work, writes to
// stdout and stderr, and returns the exit status. now supplies the default
// release date.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fl := flag.NewFlagSet("changelog", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "changelog.d", "directory holding the `fragments`")
	out := fl.String("out", "CHANGELOG.md", "changelog `file` that -release updates")
	check := fl.Bool("check", false, "only validate the fragments")
	version := fl.String("release", "", "assemble a release section for `VERSION` into -out and delete the fragments")
	date := fl.String("date", "", "release date as `YYYY-MM-DD` (default today, UTC)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}

	usage := func(msg string) int {
		fmt.Fprintln(stderr, "changelog:", msg)
		fl.Usage()
		return exitUsage
	}
	switch {
	case fl.NArg() > 0:
		return usage("unexpected arguments: " + strings.Join(fl.Args(), " "))
	case *check && *version != "":
		return usage("-check and -release cannot be combined")
	case *date != "" && *version == "":
		return usage("-date needs -release")
	case *version != "" && strings.ContainsFunc(*version, isSpaceOrControl):
		return usage(fmt.Sprintf("-release %q must not contain spaces or control characters", *version))
	}
	if *date != "" {
		if _, err := time.Parse(dateLayout, *date); err != nil {
			return usage(fmt.Sprintf("-date %q is not YYYY-MM-DD", *date))
		}
	} else {
		*date = now().UTC().Format(dateLayout)
	}

	frags, err := changelog.ParseDir(os.DirFS(*dir))
	if err != nil {
		reportParseError(stderr, *dir, err)
		return exitFail
	}

	switch {
	case *check:
		fmt.Fprintf(stdout, "changelog: %d valid fragment(s) in %s\n", len(frags), *dir)
		return exitOK
	case *version == "":
		io.WriteString(stdout, changelog.Render("Unreleased", "", frags))
		if len(frags) == 0 {
			fmt.Fprintf(stderr, "changelog: no fragments in %s\n", *dir)
		}
		return exitOK
	}

	if err := release(*dir, *out, *version, *date, frags); err != nil {
		fmt.Fprintln(stderr, "changelog:", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "changelog: added %s to %s from %d fragment(s)\n", *version, *out, len(frags))
	return exitOK
}

// isSpaceOrControl reports whether r may not appear in a version.
func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f
}

// reportParseError writes one line per bad fragment, each naming the file
// by its path under dir.
func reportParseError(w io.Writer, dir string, err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var fe *changelog.Error
		if errors.As(e, &fe) {
			fmt.Fprintf(w, "changelog: %s: %v\n", filepath.Join(dir, fe.Path), fe.Err)
			continue
		}
		fmt.Fprintln(w, e)
	}
}

// release writes the assembled changelog to out and then deletes the
// fragments it consumed.
func release(dir, out, version, date string, frags []changelog.Fragment) error {
	if len(frags) == 0 {
		return fmt.Errorf("no fragments in %s, nothing to release", dir)
	}
	existing, err := os.ReadFile(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if hasRelease(string(existing), version) {
		return fmt.Errorf("%s already has a section for %s", out, version)
	}
	text := changelog.Assemble(string(existing), changelog.Render(version, date, frags))
	if err := writeFileAtomic(out, []byte(text)); err != nil {
		return err
	}
	var errs []error
	for _, f := range frags {
		if err := os.Remove(filepath.Join(dir, f.Path)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s was written but some fragments were not deleted: %w", out, errors.Join(errs...))
	}
	return nil
}

// hasRelease reports whether text already has a level-2 heading for version.
func hasRelease(text, version string) bool {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "## "+version)
		if ok && (rest == "" || rest[0] == ' ') {
			return true
		}
	}
	return false
}

// writeFileAtomic replaces name with data through a temporary file in the
// same directory, so a failed run never leaves a half-written changelog.
func writeFileAtomic(name string, data []byte) (err error) {
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(name); err == nil {
		mode = info.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".changelog-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
