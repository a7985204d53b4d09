package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// CaseResult is the outcome of one case.
type CaseResult struct {
	// ID is the case id.
	ID string
	// Problems lists what failed; empty means the case passed.
	Problems []Problem
	// Evidence is what the judge read, for a case that got as far as an
	// observation.
	Evidence *Evidence
}

// Passed reports whether the case passed.
func (r CaseResult) Passed() bool { return len(r.Problems) == 0 }

// Host is what the runner judges. Observe drives one case through a host
// (the fixture server is already listening at in.Origin) and returns what
// it saw as the observer contract's JSON; MaxViewChars is the bound the
// host declares for one view, which the judge holds every view to.
//
// [Profile] is a Host built from the library's own parts; a host with
// wiring of its own implements Host to judge that wiring end to end.
type Host interface {
	Observe(ctx context.Context, in Input) (json.RawMessage, error)
	MaxViewChars() int
}

// ObserveJSON runs [Observe] and encodes the observation as the observe
// command prints it.
func ObserveJSON(ctx context.Context, in Input) (json.RawMessage, error) {
	return ConformanceProfile().Observe(ctx, in)
}

// RunCase runs one case end to end: it starts the case's fixtures,
// expands the case against the fixture origin, observes it and judges the
// observation as an outside checker would, from its JSON.
func RunCase(ctx context.Context, c vectors.Case, token string, host Host) CaseResult {
	res := CaseResult{ID: c.ID}
	fail := func(check string, err error) CaseResult {
		res.Problems = []Problem{{Check: check, Detail: err.Error()}}
		return res
	}
	fx, err := NewFixture(c, token)
	if err != nil {
		return fail("fixture", err)
	}
	defer fx.Close()
	x, err := c.Expand(fx.Origin)
	if err != nil {
		return fail("fixture", err)
	}
	raw, err := host.Observe(ctx, Input{Case: x, Origin: fx.Origin, Token: token})
	if err != nil {
		return fail("observe", err)
	}
	streaming := x.Response != nil && x.Response.Stream != nil
	ev := &Evidence{Case: x, Observation: raw, Network: fx.Network(streaming), Token: token, MaxViewChars: host.MaxViewChars()}
	res.Evidence = ev
	res.Problems = Judge(*ev)
	return res
}

// RunOptions select what Run runs.
type RunOptions struct {
	// Files are vectors files; empty means the bundled file.
	Files []string
	// Only, if not empty, restricts the run to these case ids.
	Only []string
	// Report, if set, receives a JSON report of every case.
	Report io.Writer
	// Host is what runs each case; nil means [ConformanceProfile].
	Host Host
}

// Run runs every selected case, printing "PASS <id>" or "FAIL <id>: <why>"
// per case and a closing "N passed, M failed" line to w. An unreadable or
// malformed vectors file, or an -only id that names no case, is an error.
func Run(ctx context.Context, opts RunOptions, w io.Writer) (passed, failed int, err error) {
	host := opts.Host
	if host == nil {
		host = ConformanceProfile()
	}
	files := opts.Files
	if len(files) == 0 {
		files = []string{""} // the bundled file
	}
	var report []map[string]any
	matched := map[string]bool{}
	for _, path := range files {
		vf, err := loadVectors(path)
		if err != nil {
			return passed, failed, err
		}
		token := vf.Fixtures.Token
		if token == "" {
			token = "fixture-secret"
		}
		for _, c := range vf.Cases {
			if len(opts.Only) > 0 && !slices.Contains(opts.Only, c.ID) {
				continue
			}
			matched[c.ID] = true
			r := RunCase(ctx, c, token, host)
			if r.Passed() {
				passed++
				fmt.Fprintf(w, "PASS %s\n", oneLine(c.ID))
			} else {
				failed++
				fmt.Fprintf(w, "FAIL %s: %s\n", oneLine(c.ID), oneLine(joinProblems(r.Problems)))
			}
			report = append(report, map[string]any{"id": c.ID, "passed": r.Passed(), "problems": problemStrings(r.Problems)})
		}
	}
	for _, id := range opts.Only {
		if !matched[id] {
			return passed, failed, fmt.Errorf("-only names no case %q", id)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	if opts.Report != nil {
		enc := json.NewEncoder(opts.Report)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"identity": identityOf(host), "passed": passed, "failed": failed, "cases": report}); err != nil {
			return passed, failed, err
		}
	}
	return passed, failed, nil
}

// loadVectors reads and parses a vectors file; "" names the bundled one,
// which the binary carries, so the runner works from any directory.
func loadVectors(path string) (*vectors.File, error) {
	if path == "" {
		return vectors.Bundled()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vf, err := vectors.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vf, nil
}

func problemStrings(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// oneLine returns s as it can stand within one line of Run's output: as
// it is, or quoted when it holds a character that is not graphic, such as
// a line break or a line separator, which could otherwise start a line of
// its own (a forged PASS).
func oneLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

func joinProblems(ps []Problem) string { return strings.Join(problemStrings(ps), "; ") }

// identityOf is the library's identity with the view bound host declares.
func identityOf(host Host) Identity {
	id := CurrentIdentity()
	id.MaxViewChars = host.MaxViewChars()
	return id
}
