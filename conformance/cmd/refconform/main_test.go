package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/conformance"
	"github.com/mcplrefs/refcore/conformance/vectors"
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

// TestValidateAdvisesOnTheIssueExample runs validate on the block a server
// author is most likely to get wrong at once: a user name, password and
// token in the uri, an expiry no host can read, and no mimeType. Each gets
// its own advice line naming what was found, and no credential appears.
func TestValidateAdvisesOnTheIssueExample(t *testing.T) {
	var stdout, stderr strings.Builder
	in := `{"type":"resource","uri":"https://user:pw@h/x?token=abc","expiresAt":"soon"}`
	if code := run([]string{"validate"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("validate: exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		`advice: uri "https://…@h/x?token=…" carries a user name or password`,
		`advice: uri query parameter "token" looks like a credential`,
		`advice: no mimeType;`,
		`advice: expiresAt "soon" is not a date a host can read;`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line with %q in:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[2:] {
		if !strings.HasPrefix(line, "  advice: ") || !strings.Contains(line, "; ") || !strings.Contains(line, ": ") {
			t.Errorf("advice line %q does not say what was found, then what to change", line)
		}
	}
}

// TestValidateNeverRepeatsACredential holds every golden input's report
// to hiding the values of the credentials it names.
func TestValidateNeverRepeatsACredential(t *testing.T) {
	secrets := []string{"user:pw", "pw@", "token=abc", "sig=abc123", "5f2c", "AKIA", "eyJhbGciOi", "s3cr3t", "k-123"}
	inputs, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "refconform", "*.json"))
	for _, in := range inputs {
		var stdout, stderr strings.Builder
		run([]string{"validate", in}, strings.NewReader(""), &stdout, &stderr)
		for _, s := range secrets {
			if strings.Contains(stdout.String(), s) {
				t.Errorf("%s: validate repeats %q:\n%s", filepath.Base(in), s, stdout.String())
			}
		}
	}
}

func TestValidateHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		var stdout, stderr strings.Builder
		code := run([]string{"validate", arg}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 || !strings.HasPrefix(stdout.String(), "usage: refconform validate") || !strings.Contains(stdout.String(), "Exit status:") || stderr.Len() != 0 {
			t.Errorf("validate %s: exit %d, stdout %q, stderr %q", arg, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"validate", "-x"}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: refconform validate") {
		t.Errorf("validate -x: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"validate", "a.json", "b.json"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("validate with two files: exit %d, want 2", code)
	}
}

func TestRenderTakesNames(t *testing.T) {
	in := filepath.Join("..", "..", "..", "testdata", "refconform", "tool-result.json")
	var stdout, stderr strings.Builder
	code := run([]string{"render", "-server", "studio", "-tool", "vst_render", "-event", "take_done", in}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String()
	if code != 0 || !strings.Contains(out, "from tool vst_render of studio;") || !strings.Contains(out, "attachment on push event take_done from studio;") || strings.Contains(out, "example") {
		t.Errorf("render with names: exit %d, stderr %q, output:\n%s", code, stderr.String(), out)
	}
	stdout.Reset()
	if code := run([]string{"render", "-tool", "t", "-"}, strings.NewReader(`{"type":"resource","uri":"https://h/a"}`), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "from tool t of example-server;") {
		t.Errorf("render from stdin: exit %d, output %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"render", "-h"}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "-server NAME") {
		t.Errorf("render -h: exit %d, output %q", code, stdout.String())
	}
	stderr.Reset()
	if code := run([]string{"render", "-server", " ", in}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "need a name") {
		t.Errorf("render with a blank name: exit %d, stderr %q", code, stderr.String())
	}
}

func TestAdvise(t *testing.T) {
	now := time.Date(2026, 9, 7, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		block string
		want  []string // each a prefix of one advice, in order
	}{
		{`{"type":"resource","uri":"https://h/x?pageToken=p1&key=v&monkey=1&token=&Signature=s","mimeType":"a/b","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"}`,
			[]string{`uri query parameter "key" looks like a credential (its value is hidden as … in "https://h/x?pageToken=p1&key=…&monkey=1&token=&Signature=…")`, `uri query parameter "Signature"`}},
		{`{"type":"resource","uri":"wss://h/x","mimeType":"a/b","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","expiresAt":"2026-09-07T00:00:00Z"}`,
			[]string{`uri scheme is "wss" in "wss://h/x"; hosts fetch only over https`, `expiresAt "2026-09-07T00:00:00Z" has passed;`}},
		{`{"type":"resource","uri":"https://h/x","mimeType":"a/b","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","expiresAt":"2026-09-07T00:00:01+00:00","disposition":"NEVER"}`,
			[]string{`disposition "NEVER" is not "never": values are lower case, so hosts set the field aside and do not withhold`}},
		{`{"type":"resource","uri":"https://h/%zz","mimeType":"a/b","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"}`,
			[]string{`uri "https://h/%zz" does not parse as a URL;`}},
		{`{"type":"audio","uri":"https://h/a.wav","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"}`,
			[]string{`no mimeType; a host cannot tell the model what kind of payload this is, nor decide whether to open, show or convert it: add one, such as "audio/wav"`}},
		{`{"type":"resource","resource":{"uri":"https://u:p@h/x","text":"hi"}}`,
			[]string{`this is MCP's embedded resource: its contents sit inline under "resource" (uri "https://…@h/x")`}},
		{`{"type":"text","text":"https://u:p@h/x?token=1"}`, nil},
		{`{"type":"image","data":"aGk=","mimeType":"image/png","disposition":"Never"}`, nil},
		{`[1]`, nil},
		{`{"type":"resource","uri":"https://h/x","mimeType":"a/b","sizeBytes":1,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","expiresAt":"2026-09-08"}`, nil},
	}
	for _, c := range cases {
		got := conformance.Advise(json.RawMessage(c.block), now)
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], c.want[i])
		}
		if !ok {
			t.Errorf("Advise(%s):\n got  %q\n want %q", c.block, got, c.want)
		}
	}
}

// observeCase is a render case of one never reference, with the input's
// other members; extra is spliced into the case object.
func observeCase(extra string) string {
	return `{"case": {"operation": "render"` + extra + `,
		"blocks": [{"type": "resource", "uri": "http://127.0.0.1:1/p", "name": "a.wav", "disposition": "never"}]},
		"origin": "http://127.0.0.1:1", "token": "fixture-secret"}`
}

// TestObserveIgnoresKeysOfAnyType: the keys observe does not read are
// ignored whatever their type, since a checker may give its own
// expectation keys any shape, including keys the bundled vectors use with
// another type.
func TestObserveIgnoresKeysOfAnyType(t *testing.T) {
	for _, extra := range []string{
		`, "rfc": "1"`, `, "id": 7`, `, "description": {"a": 1}`, `, "schemaValid": "yes"`,
		`, "expect": {"hidden": "$ORIGIN"}`, `, "expect": []`, `, "response": "ok"`,
		`, "registrations": 0, "legacySchemaValid": null, "knownEmbeddedCredential": 5`,
		// Keys are matched exactly, not with encoding/json's case folding.
		`, "MaxBytes": "10"`, `, "OPERATION": {}`, `, "Blocks": "n/a"`, `, "Operation": "registry"`,
	} {
		var stdout, stderr strings.Builder
		if code := run([]string{"observe"}, strings.NewReader(observeCase(extra)), &stdout, &stderr); code != 0 {
			t.Errorf("observe with %s: exit %d, stderr %q", extra, code, stderr.String())
		} else if !strings.Contains(stdout.String(), `"parsed"`) {
			t.Errorf("observe with %s did not observe the render case: %.200s", extra, stdout.String())
		}
	}
	// What observe reads keeps its type.
	var stdout, stderr strings.Builder
	if code := run([]string{"observe"}, strings.NewReader(observeCase(`, "maxBytes": "10"`)), &stdout, &stderr); code != 2 {
		t.Errorf("observe with a string maxBytes: exit %d, want 2", code)
	}
}

// TestObserveBoundsRegistrations: a registry case asking for more
// registrations than a case may is refused at once; it ran for about 80
// minutes before.
func TestObserveBoundsRegistrations(t *testing.T) {
	var stdout, stderr strings.Builder
	huge := `{"case": {"operation": "registry", "registrations": 2147483647,
		"blocks": [{"type": "resource", "uri": "http://127.0.0.1:1/p", "name": "a.wav"}]},
		"origin": "http://127.0.0.1:1", "token": "fixture-secret"}`
	if code := run([]string{"observe"}, strings.NewReader(huge), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "registrations") {
		t.Errorf("observe with 2147483647 registrations: exit %d, stderr %q; want 2 and a reason", code, stderr.String())
	}
}

// TestObserveReadsOneObject: input that holds more than one JSON value is
// bad input, not a case with a tail to ignore.
func TestObserveReadsOneObject(t *testing.T) {
	for _, tail := range []string{" trailing garbage", ` {"case": null}`, " 5"} {
		var stdout, stderr strings.Builder
		if code := run([]string{"observe"}, strings.NewReader(observeCase("")+tail), &stdout, &stderr); code != 2 {
			t.Errorf("observe with %q after the object: exit %d, want 2", tail, code)
		}
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"observe"}, strings.NewReader(observeCase("")+" \n\t"), &stdout, &stderr); code != 0 {
		t.Errorf("observe with white space after the object: exit %d, stderr %q", code, stderr.String())
	}
}

// TestObserveBlankURIRecord: a reference block whose uri is blank still
// has its record in the observation, carrying the block's never (N1).
func TestObserveBlankURIRecord(t *testing.T) {
	in := `{"case": {"operation": "render", "blocks": [{"type": "resource", "uri": "", "name": "e.wav", "disposition": "never"}]},
		"origin": "http://127.0.0.1:1", "token": "fixture-secret"}`
	var stdout, stderr strings.Builder
	if code := run([]string{"observe"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("observe: exit %d, stderr %q", code, stderr.String())
	}
	var obs struct {
		Records []struct {
			NeverMarked bool `json:"neverMarked"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.Records) != 1 || !obs.Records[0].NeverMarked {
		t.Errorf("records = %+v; want one never-marked record", obs.Records)
	}
}

// TestRunOneLinePerCase: a case id holding a line break cannot print a
// line of its own, such as a forged PASS.
func TestRunOneLinePerCase(t *testing.T) {
	var f map[string]any
	if err := json.Unmarshal(vectors.BundledJSON(), &f); err != nil {
		t.Fatal(err)
	}
	cases := f["cases"].([]any)
	c := cases[0].(map[string]any)
	c["id"] = c["id"].(string) + "\nPASS forged-case\u2028"
	f["cases"] = []any{c}
	data, _ := json.Marshal(f)
	path := filepath.Join(t.TempDir(), "v.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := run([]string{"run", "-vectors", path}, strings.NewReader(""), &stdout, &stderr)
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if code != 0 || len(lines) != 2 || strings.HasPrefix(lines[1], "PASS") || strings.ContainsRune(stdout.String(), '\u2028') {
		t.Errorf("run: exit %d, stdout %q; want one PASS line and the summary", code, stdout.String())
	}
}

// TestObserveRefusesLimitsItCannotKeep: a fetch case's maxBytes and
// timeoutMs are the call's own limits. A value the library cannot take as
// given (zero, which its API reads as "the default"; a negative one; a
// deadline too long for a time.Duration) is bad input, said on stderr,
// rather than a fetch observed under other limits than the case asked for.
func TestObserveRefusesLimitsItCannotKeep(t *testing.T) {
	fetchCase := func(extra string) string {
		return `{"case": {"operation": "fetch"` + extra + `,
		"blocks": [{"type": "resource", "uri": "http://127.0.0.1:1/p", "name": "a.wav"}]},
		"origin": "http://127.0.0.1:1", "token": "fixture-secret"}`
	}
	for _, tc := range []struct {
		extra, key string
	}{
		{`, "maxBytes": 0`, "maxBytes"},
		{`, "maxBytes": -1`, "maxBytes"},
		{`, "timeoutMs": 0`, "timeoutMs"},
		{`, "timeoutMs": -5`, "timeoutMs"},
		{`, "timeoutMs": 9223372036854775807`, "timeoutMs"},
		{`, "timeoutMs": 9223372036855`, "timeoutMs"},
	} {
		var stdout, stderr strings.Builder
		if code := run([]string{"observe"}, strings.NewReader(fetchCase(tc.extra)), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.key) {
			t.Errorf("observe with%s: exit %d, stderr %q; want 2 and a reason naming %s", tc.extra, code, stderr.String(), tc.key)
		}
	}
	// The smallest limits it can keep are observed, and so is a render case
	// carrying limits it does not read.
	for _, in := range []string{
		fetchCase(`, "maxBytes": 1, "timeoutMs": 1`),
		fetchCase(`, "timeoutMs": 9223372036854`),
		observeCase(`, "maxBytes": 0, "timeoutMs": 0`),
	} {
		var stdout, stderr strings.Builder
		if code := run([]string{"observe"}, strings.NewReader(in), &stdout, &stderr); code != 0 {
			t.Errorf("observe %s: exit %d, stderr %q; want 0", in, code, stderr.String())
		}
	}
	// A max bytes above the host ceiling is the call's to ask for; the
	// fetcher holds it to the ceiling (F5), and the observation says so.
	over := strings.Replace(fetchCase(`, "maxBytes": 1073741824`), `"name": "a.wav"`, `"name": "a.wav", "sizeBytes": 314572800`, 1)
	var stdout, stderr strings.Builder
	if code := run([]string{"observe"}, strings.NewReader(over), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), `"code":"host-ceiling"`) {
		t.Errorf("observe with maxBytes above the ceiling: exit %d, stderr %q, stdout %.600s; want 0 and a host-ceiling outcome", code, stderr.String(), stdout.String())
	}
}
