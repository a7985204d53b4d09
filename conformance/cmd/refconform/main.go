// Command refconform runs RFC-005's conformance vectors against refcore
// and exposes the observer contract to outside checkers.
//
//	refconform run [-vectors FILE]... [-report FILE] [-only id,id]
//	refconform observe            < {"case": …, "origin": …, "token": …}
//	refconform identity
//	refconform validate [FILE|-]  strict schema verdict and host reading per block
//	refconform render [FILE|-]    what a model would see of some content
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
  validate [FILE|-]  check blocks against the strict schema (exit 1 if any fails)
  render [FILE|-]    show what a model would see of content (no fetching)
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
	var in conformance.Input
	dec := json.NewDecoder(io.LimitReader(stdin, 256<<20))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
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

func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := readInput(args, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "refconform validate:", err)
		return 2
	}
	report, ok, err := conformance.ValidateContent(data)
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
	data, err := readInput(args, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "refconform render:", err)
		return 2
	}
	out, err := conformance.RenderContent(data)
	if err != nil {
		fmt.Fprintln(stderr, "refconform render:", err)
		return 2
	}
	fmt.Fprint(stdout, out)
	return 0
}
