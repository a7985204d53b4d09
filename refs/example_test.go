package refs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// A record lives until the registry's bound pushes it out; after that its
// id is unknown, never another record.
func ExampleRegistry_Resolve() {
	ctx := context.Background()
	g, err := refs.New(refs.Config{Capacity: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	report := g.Register(ctx, convert.Registration{
		Testimony: convert.Testimony{URI: "https://files.example/report.pdf", Present: convert.FieldURI},
		Server:    "docs",
	})
	rec, err := g.Resolve(report.ID)
	fmt.Println(strings.HasPrefix(report.ID, "ref_"), rec.Server(), err)

	// A second reference takes the only slot.
	g.Register(ctx, convert.Registration{
		Testimony: convert.Testimony{URI: "https://files.example/chart.png", Present: convert.FieldURI},
		Server:    "docs",
	})
	_, err = g.Resolve(report.ID)
	var unknown *refs.UnknownError
	fmt.Println(errors.Is(err, refs.ErrUnknownReference), errors.As(err, &unknown) && unknown.ID == report.ID)
	// Output:
	// true docs <nil>
	// true true
}

// A server's never marks the uri for good: a later plain delivery does not
// lift it, no copy may be saved, and another spelling of the uri is marked
// too.
func ExampleRegistry_MarkNever() {
	ctx := context.Background()
	g, err := refs.New(refs.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	e, ok := g.MarkNever(ctx, "https://mail.example/att/7?sig=abc", "mail")
	fmt.Println(ok, e.Never)

	again := g.Register(ctx, convert.Registration{
		Testimony: convert.Testimony{URI: "https://mail.example/att/7?sig=abc", Present: convert.FieldURI},
		Server:    "mail",
	})
	fmt.Println(again.ID == e.ID, again.Never)

	err = g.Save(e.ID, convert.Copy{Path: "store/" + e.ID + ".bin"}, again.Testimony)
	fmt.Println(errors.Is(err, refs.ErrMarked))
	fmt.Println(g.Marked(ctx, "HTTPS://MAIL.example:443/att/7?sig=abc"))
	// Output:
	// true true
	// true true
	// true
	// true
}
