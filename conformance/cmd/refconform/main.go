// Command refconform runs RFC-005's conformance vectors against refcore
// and exposes the observer contract to outside checkers.
//
//	refconform run [-vectors FILE]... [-report FILE] [-only id,id]
//	refconform observe            < {"case": …, "origin": …, "token": …}
//	refconform identity
//	refconform validate [FILE|-]  strict schema verdict, host reading and advice per block
//	refconform render [-server NAME] [-tool NAME] [-event NAME] [FILE|-]
//	                              what a model would see of some content
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcplrefs/refcore/conformance"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: refconform <command> [arguments]

commands:
  run [-vectors FILE]... [-report FILE] [-only id,id]
                   run every vector (the bundled RFC-005 file by default)
  observe          read one case as JSON on stdin, print its observation
  identity         print the implementation, version and view bound
  validate [FILE|-]  check blocks against the strict schema (exit 1 if any
                   fails) and advise on what the schema cannot see
  render [-server NAME] [-tool NAME] [-event NAME] [FILE|-]
                   show what a model would see of content (no fetching)

Run "refconform validate -h" or "refconform render -h" for their own help.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx := context.Background()
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "observe":
		return cmdObserve(ctx, stdin, stdout, stderr)
	case "identity":
		_ = json.NewEncoder(stdout).Encode(conformance.CurrentIdentity())
		return 0
	case "validate":
		return cmdValidate(args[1:], stdin, stdout, stderr)
	case "render":
		return cmdRender(args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "refconform: unknown command %q\n%s", args[0], usage)
	return 2
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files listFlag
	fs.Var(&files, "vectors", "a vectors file to run (repeatable; default: the bundled RFC-005 vectors)")
	report := fs.String("report", "", "write a JSON report of every case to this file")
	only := fs.String("only", "", "run only these comma-separated case ids")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts := conformance.RunOptions{Files: files}
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	if *report != "" {
		f, err := os.Create(*report)
		if err != nil {
			fmt.Fprintln(stderr, "refconform:", err)
			return 2
		}
		defer f.Close()
		opts.Report = f
	}
	_, failed, err := conformance.Run(ctx, opts, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "refconform:", err)
		return 2
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func cmdObserve(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := readObserveInput(io.LimitReader(stdin, 256<<20))
	if err != nil {
		fmt.Fprintln(stderr, "refconform observe: input:", err)
		return 2
	}
	if in.Origin == "" {
		fmt.Fprintln(stderr, "refconform observe: input: no origin")
		return 2
	}
	obs, err := conformance.ObserveJSON(ctx, in)
	if err != nil {
		fmt.Fprintln(stderr, "refconform observe:", err)
		return 2
	}
	_, _ = stdout.Write(append(obs, '\n'))
	return 0
}

// readObserveInput reads observe's input: one JSON object, with nothing
// but white space after it. Of the case it reads only the members the
// contract names, each with its type, matching their names exactly (not
// with encoding/json's folding of letter case), so that keys a checker
// adds, whatever their shape or spelling, cannot change what is observed
// or make the input unreadable.
func readObserveInput(r io.Reader) (conformance.Input, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&top); err != nil {
		return conformance.Input{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return conformance.Input{}, errors.New("more than one JSON value")
	}
	if top == nil {
		return conformance.Input{}, errors.New("not a JSON object")
	}
	var in conformance.Input
	var c map[string]json.RawMessage
	for _, m := range []struct {
		from map[string]json.RawMessage
		key  string
		to   any
	}{{top, "origin", &in.Origin}, {top, "token", &in.Token}, {top, "case", &c}} {
		if err := member(m.from, m.key, m.to); err != nil {
			return conformance.Input{}, err
		}
	}
	k := &in.Case
	for key, to := range map[string]any{
		"operation": &k.Operation, "blocks": &k.Blocks, "maxBytes": &k.MaxBytes,
		"timeoutMs": &k.TimeoutMs, "registrations": &k.Registrations, "touchAfter": &k.TouchAfter,
	} {
		if err := member(c, key, to); err != nil {
			return conformance.Input{}, fmt.Errorf("case: %w", err)
		}
	}
	return in, nil
}

// member decodes the member key of m, if present, into to.
func member(m map[string]json.RawMessage, key string, to any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, to); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// readInput reads the FILE argument, or stdin for "-" or none.
func readInput(args []string, stdin io.Reader) ([]byte, error) {
	if len(args) > 1 {
		return nil, errors.New("one FILE at most")
	}
	if len(args) == 0 || args[0] == "-" {
		return io.ReadAll(io.LimitReader(stdin, 256<<20))
	}
	return os.ReadFile(args[0])
}

const validateHelp = `usage: refconform validate [FILE|-]

Reads one content block, an array of blocks, or a whole tool result
({"content": [...]}) from FILE, or from standard input when FILE is "-" or
left out, and prints for each block:

  schema      the strict verdict: MCPL Appendix B.1 as RFC-005 section 8
              amends it, with every rule the block breaks
  host reads  how a receiving host reads the block: its kind, and the
              fields it sets aside as invalid
  advice      what the schema cannot see, one line each, saying what was
              found and what to change: credentials in the uri (a user
              name or password, or a query parameter such as token or
              sig), a scheme other than https, an expiresAt a host cannot
              read or that has passed, a missing mimeType, sizeBytes or
              digest, a disposition spelled in another case, and MCP's
              embedded resource or resource link in place of a reference

Advice shows each value it found, except that the parts of a uri that may
be credentials (the user name and password, the credential-like
parameters' values) are replaced by "…", so the report never repeats a
credential. Advice never changes the exit status.

Exit status:
  0  every block passes the strict schema
  1  some block breaks it
  2  the arguments are wrong, or the input cannot be read as content
`

const renderHelp = `usage: refconform render [-server NAME] [-tool NAME] [-event NAME] [FILE|-]

Reads one content block, an array of blocks, or a whole tool result
({"content": [...]}) from FILE, or from standard input when FILE is "-" or
left out, and prints what a model would see of it: the history text of a
tool result, then the wake text and blocks of a push event carrying the
same content. Nothing is fetched; reference ids are stable run to run.
No fetcher is wired, so a stub offers a fetch the fetcher would refuse
(a uri with a user name, a scheme other than http or https, another
origin than the server's): a host that wires Fetcher.Refusal says
"not fetchable" there.

Flags:
  -server NAME  the server the content came from (default example-server)
  -tool NAME    the tool whose result it is (default example_tool)
  -event NAME   the push event it is shown as (default example_event)

Exit status: 0 when it rendered, 2 when the arguments are wrong or the
input cannot be read as content.
`

// parseFlags parses a command's flags. It prints help to stdout for -h
// (done, exit 0) and the error and help to stderr for a bad flag (done,
// exit 2).
func parseFlags(fs *flag.FlagSet, args []string, help string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, help)
		return 0, true
	case err != nil:
		fmt.Fprintf(stderr, "refconform %s: %v\n%s", fs.Name(), err, help)
		return 2, true
	}
	return 0, false
}

func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	if code, done := parseFlags(fs, args, validateHelp, stdout, stderr); done {
		return code
	}
	data, err := readInput(fs.Args(), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "refconform validate:", err)
		return 2
	}
	report, ok, err := conformance.ValidateContentWith(data, conformance.ValidateOptions{Advice: true})
	if err != nil {
		fmt.Fprintln(stderr, "refconform validate:", err)
		return 2
	}
	fmt.Fprint(stdout, report)
	if !ok {
		return 1
	}
	return 0
}

func cmdRender(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	var opts conformance.RenderOptions
	fs.StringVar(&opts.Server, "server", "example-server", "")
	fs.StringVar(&opts.Tool, "tool", "example_tool", "")
	fs.StringVar(&opts.Event, "event", "example_event", "")
	if code, done := parseFlags(fs, args, renderHelp, stdout, stderr); done {
		return code
	}
	for _, name := range []string{opts.Server, opts.Tool, opts.Event} {
		if strings.TrimSpace(name) == "" {
			fmt.Fprintf(stderr, "refconform render: -server, -tool and -event need a name\n%s", renderHelp)
			return 2
		}
	}
	data, err := readInput(fs.Args(), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "refconform render:", err)
		return 2
	}
	out, err := conformance.RenderContentWith(data, opts)
	if err != nil {
		fmt.Fprintln(stderr, "refconform render:", err)
		return 2
	}
	fmt.Fprint(stdout, out)
	return 0
}
