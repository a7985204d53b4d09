package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// CaseResult is the outcome of one case.
type CaseResult struct {
	// ID is the case id.
	ID string
	// Problems lists what failed; empty means the case passed.
	Problems []string
	// Observation is the observer's JSON output for the case.
	Observation json.RawMessage
}

// Passed reports whether the case passed.
func (r CaseResult) Passed() bool { return len(r.Problems) == 0 }

// Observer turns one input into an observation's JSON. The runner's own
// observer is [ObserveJSON]; tests substitute broken ones to show the
// checker catches them.
type Observer func(ctx context.Context, in Input) (json.RawMessage, error)

// ObserveJSON runs [Observe] and encodes the observation as the observe
// command prints it.
func ObserveJSON(ctx context.Context, in Input) (json.RawMessage, error) {
	obs, err := Observe(ctx, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obs)
}

// RunCase runs one case end to end: it starts the case's fixtures,
// expands the case against the fixture origin, observes it and checks the
// observation as an outside checker would, from its JSON.
func RunCase(ctx context.Context, c vectors.Case, token string, observe Observer) CaseResult {
	res := CaseResult{ID: c.ID}
	fx, err := NewFixture(c, token)
	if err != nil {
		res.Problems = []string{err.Error()}
		return res
	}
	defer fx.Close()
	x, err := c.Expand(fx.Origin)
	if err != nil {
		res.Problems = []string{err.Error()}
		return res
	}
	raw, err := observe(ctx, Input{Case: x, Origin: fx.Origin, Token: token})
	if err != nil {
		res.Problems = []string{"observe: " + err.Error()}
		return res
	}
	res.Observation = raw
	if probs := ValidateObservation(x.Operation, raw); len(probs) > 0 {
		res.Problems = append(res.Problems, probs...)
		return res
	}
	if x.Operation == vectors.OpRegistry {
		var obs RegistryObservation
		if err := json.Unmarshal(raw, &obs); err != nil {
			res.Problems = []string{"observation: " + err.Error()}
			return res
		}
		res.Problems = CheckRegistry(x, &obs)
		return res
	}
	var obs Observation
	if err := json.Unmarshal(raw, &obs); err != nil {
		res.Problems = []string{"observation: " + err.Error()}
		return res
	}
	streaming := x.Response != nil && x.Response.Stream != nil
	res.Problems = Check(x, &obs, fx.Record(streaming), token, MaxViewChars)
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
}

// Run runs every selected case, printing "PASS <id>" or "FAIL <id>: <why>"
// per case and a closing "N passed, M failed" line to w. An unreadable or
// malformed vectors file, or an -only id that names no case, is an error.
func Run(ctx context.Context, opts RunOptions, w io.Writer) (passed, failed int, err error) {
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
			r := RunCase(ctx, c, token, ObserveJSON)
			if r.Passed() {
				passed++
				fmt.Fprintf(w, "PASS %s\n", c.ID)
			} else {
				failed++
				fmt.Fprintf(w, "FAIL %s: %s\n", c.ID, strings.Join(r.Problems, "; "))
			}
			report = append(report, map[string]any{"id": c.ID, "passed": r.Passed(), "problems": r.Problems})
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
		if err := enc.Encode(map[string]any{"identity": CurrentIdentity(), "passed": passed, "failed": failed, "cases": report}); err != nil {
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
