package refs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// A mark file keeps a server's never across a restart: the registry of
// the next process, over the same file, finds the uri marked before any
// server says so again.
func ExampleOpenFileMarks() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "marks")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "never.marks")
	const uri = "https://mail.example/att/7?sig=abc"

	// The first process: the mail server says never.
	marks, err := refs.OpenFileMarks(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := refs.New(refs.Config{Marks: marks})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := g.Register(ctx, convert.Registration{
		Testimony: convert.Testimony{URI: uri, Present: convert.FieldURI},
		Server:    "mail",
		Never:     true,
	})
	fmt.Println("first process:", e.Never)
	if err := marks.Close(); err != nil {
		fmt.Println(err)
		return
	}

	// The next process: another server delivers the same uri plainly.
	marks, err = refs.OpenFileMarks(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer marks.Close()
	g, err = refs.New(refs.Config{Marks: marks})
	if err != nil {
		fmt.Println(err)
		return
	}
	e = g.Register(ctx, convert.Registration{
		Testimony: convert.Testimony{URI: uri, Present: convert.FieldURI},
		Server:    "search",
	})
	fmt.Println("next process:", e.Never)
	// Output:
	// first process: true
	// next process: true
}
