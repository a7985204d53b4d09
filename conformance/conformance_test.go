package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

func loadBundled(t *testing.T) *vectors.File {
	t.Helper()
	f, err := vectors.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestVectors runs every RFC-005 vector through the observer and the
// checker, one subtest per case id, each with its own fixture servers.
func TestVectors(t *testing.T) {
	f := loadBundled(t)
	if len(f.Cases) != 43 {
		t.Fatalf("the bundled file has %d cases, want 43", len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			r := RunCase(context.Background(), c, f.Fixtures.Token, ObserveJSON)
			for _, p := range r.Problems {
				t.Errorf("case %s (rfc %d): %s", c.ID, c.RFC, p)
			}
		})
	}
}

// perturbed wraps the real observer and edits its JSON output, standing in
// for a library that was broken in one specific way.
func perturbed(edit func(obs map[string]any)) Observer {
	return func(ctx context.Context, in Input) (json.RawMessage, error) {
		raw, err := ObserveJSON(ctx, in)
		if err != nil {
			return nil, err
		}
		var obs map[string]any
		if err := json.Unmarshal(raw, &obs); err != nil {
			return nil, err
		}
		edit(obs)
		return json.Marshal(obs)
	}
}

func caseByID(t *testing.T, f *vectors.File, id string) vectors.Case {
	t.Helper()
	for _, c := range f.Cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %q", id)
	return vectors.Case{}
}

// TestCheckerCatchesBrokenLibraries shows the checker is not a rubber
// stamp: each perturbation stands for a library bug, and each must fail.
func TestCheckerCatchesBrokenLibraries(t *testing.T) {
	f := loadBundled(t)
	tests := []struct {
		name, caseID, want, reason string
		edit                       func(obs map[string]any, in Input)
	}{
		{
			name: "leaks-uri", caseID: "01-never", want: "hidden string",
			reason: "S2: a library that puts the uri in a stub must fail vector 1",
			edit: func(obs map[string]any, in Input) {
				before := obs["before"].(map[string]any)
				before["history"] = before["history"].(string) + " at " + in.Origin + "/payload"
			},
		},
		{
			name: "skips-digest", caseID: "05-digest-mismatch", want: "ok true, want false",
			reason: "F8: a library that skips the digest check presents the wrong octets",
			edit: func(obs map[string]any, in Input) {
				obs["outcome"] = map[string]any{"ok": true, "path": "ref_x.wav", "bytes": 19, "mimeType": "audio/wav", "digestVerified": false}
				obs["saves"] = []any{map[string]any{"name": "ref_x.wav", "base64": "UklGRjAwMDBXQVZFcGF5bG9hZA==", "mimeType": "audio/wav"}}
			},
		},
		{
			name: "saves-partial", caseID: "10-stream-ceiling", want: "a failed fetch saved",
			reason: "F6: a library that keeps the bytes read before the ceiling must fail vector 10",
			edit: func(obs map[string]any, in Input) {
				obs["saves"] = []any{map[string]any{"name": "ref_x.bin", "base64": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", 64))), "mimeType": "application/octet-stream"}}
			},
		},
		{
			name: "keeps-rejected-field", caseID: "field-rule-name", want: "missingFields",
			reason: "P3: a library that truncates an over-long name instead of rejecting it",
			edit: func(obs map[string]any, in Input) {
				p := obs["parsed"].([]any)[0].(map[string]any)
				p["testimony"].(map[string]any)["name"] = strings.Repeat("a", 255)
			},
		},
		{
			name: "unbounded-view", caseID: "17-oversized-name", want: "over maxViewChars",
			reason: "vector 17: a stub that grows with the name",
			edit: func(obs map[string]any, in Input) {
				before := obs["before"].(map[string]any)
				before["wake"] = strings.Repeat("x", MaxViewChars+1)
			},
		},
		{
			name: "reuses-id", caseID: "20-eviction-and-unknown", want: "reused",
			reason: "R1: an id handed out again after eviction",
			edit: func(obs map[string]any, in Input) {
				obs["fresh"].(map[string]any)["refId"] = obs["firstId"]
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := caseByID(t, f, tt.caseID)
			var seen Input
			obsv := func(ctx context.Context, in Input) (json.RawMessage, error) {
				seen = in
				return perturbed(func(obs map[string]any) { tt.edit(obs, seen) })(ctx, in)
			}
			r := RunCase(context.Background(), c, f.Fixtures.Token, obsv)
			if r.Passed() {
				t.Fatalf("%s: the checker passed a broken observation (%s)", tt.caseID, tt.reason)
			}
			if !strings.Contains(strings.Join(r.Problems, "\n"), tt.want) {
				t.Errorf("%s: problems %q do not mention %q (%s)", tt.caseID, r.Problems, tt.want, tt.reason)
			}
		})
	}
}

// TestObservationContract checks every case's observation against the
// contract's shape, apart from the checker's judgement.
func TestObservationContract(t *testing.T) {
	f := loadBundled(t)
	for _, c := range f.Cases {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			fx, err := NewFixture(c, f.Fixtures.Token)
			if err != nil {
				t.Fatal(err)
			}
			defer fx.Close()
			x, err := c.Expand(fx.Origin)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := ObserveJSON(context.Background(), Input{Case: x, Origin: fx.Origin, Token: f.Fixtures.Token})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ValidateObservation(c.Operation, raw) {
				t.Errorf("%s: %s", c.ID, p)
			}
		})
	}
}

func TestRunRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"mcpl-bulk-references-9","cases":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, _, err := Run(context.Background(), RunOptions{Files: []string{bad}}, &out); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("Run on an unknown format: err = %v", err)
	}
	if _, _, err := Run(context.Background(), RunOptions{Only: []string{"no-such-case"}}, &out); err == nil {
		t.Error("an -only id naming no case must be an error")
	}
}
