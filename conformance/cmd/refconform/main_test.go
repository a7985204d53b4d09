package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/internal/golden"
)

// TestToolsGolden pins what validate and render print for the inputs under
// testdata/refconform: both are model- or author-facing text.
func TestToolsGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "refconform", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		for _, cmd := range []string{"validate", "render"} {
			name := strings.TrimSuffix(filepath.Base(in), ".json") + "." + cmd
			t.Run(name, func(t *testing.T) {
				var stdout, stderr strings.Builder
				code := run([]string{cmd, in}, strings.NewReader(""), &stdout, &stderr)
				got := stdout.String() + "exit " + string(rune('0'+code)) + "\n"
				golden.Check(t, filepath.Join("..", "..", "..", "testdata", "refconform", name+".golden"), got)
			})
		}
	}
}

func TestValidateReadsStdin(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"validate", "-"}, strings.NewReader(`{"type":"resource","uri":"u","sizeBytes":3.5}`), &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "sizeBytes") {
		t.Errorf("validate - : exit %d, output %q", code, stdout.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"dance"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("unknown command exit %d, want 2", code)
	}
}

func TestIdentity(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"identity"}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `"maxViewChars"`) {
		t.Errorf("identity: exit %d, %q", code, stdout.String())
	}
}

// TestRunPrintsVerdicts runs the main job on two cases through the command
// itself: a PASS line each and the closing summary line.
func TestRunPrintsVerdicts(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"run", "-only", "01-never,10-stream-ceiling"}, strings.NewReader(""), &stdout, &stderr)
	want := "PASS 01-never\nPASS 10-stream-ceiling\n2 passed, 0 failed\n"
	if code != 0 || stdout.String() != want {
		t.Errorf("run: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout.String(), stderr.String(), want)
	}
	stdout.Reset()
	if code := run([]string{"run", "-vectors", "no-such-file.json"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("run on a missing vectors file: exit %d, want 2", code)
	}
}

// TestObserveIgnoresUnknownKeys pins the contract's leniency: observe reads
// only what it needs from a case, so a checker's own expectation keys and
// fixture options pass through without an error.
func TestObserveIgnoresUnknownKeys(t *testing.T) {
	in := `{"case": {"id": "x", "operation": "render", "futureFlag": [1, 2],
		"blocks": [{"type": "resource", "uri": "http://127.0.0.1:1/p", "name": "a.wav", "sizeBytes": 12, "disposition": "never"}],
		"schemaValid": [true], "expect": {"somethingNew": true}},
		"origin": "http://127.0.0.1:1", "token": "fixture-secret", "checkerOption": "x"}`
	var stdout, stderr strings.Builder
	if code := run([]string{"observe"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("observe: exit %d, stderr %q", code, stderr.String())
	}
	var obs struct {
		Parsed []struct{ Kind string }
		Before map[string]any
	}
	if err := json.Unmarshal([]byte(stdout.String()), &obs); err != nil {
		t.Fatal(err)
	}
	views, _ := json.Marshal(obs.Before)
	if len(obs.Parsed) != 1 || obs.Parsed[0].Kind != "reference" || strings.Contains(string(views), "127.0.0.1:1/p") {
		t.Errorf("observe output lacks the reading or its views leak the uri: %s", stdout.String())
	}
	if code := run([]string{"observe"}, strings.NewReader(`{"case": 5}`), &stdout, &stderr); code != 2 {
		t.Errorf("observe on bad input: exit %d, want 2", code)
	}
}

// TestRunOutsideTheModule builds the command and runs it from an empty
// directory: the vectors travel inside the binary, so `go install` and
// `refconform run` work anywhere, with all 43 cases passing.
func TestRunOutsideTheModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "refconform")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "run")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "\n43 passed, 0 failed\n") {
		t.Errorf("refconform run outside the module: %v\n%s", err, out)
	}
}
