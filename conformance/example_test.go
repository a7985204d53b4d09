package conformance_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"

	"github.com/mcplrefs/refcore/conformance"
)

// Run runs bundled vectors against the library and prints a verdict per
// case and a summary, as `refconform run` does.
func ExampleRun() {
	_, failed, err := conformance.Run(context.Background(),
		conformance.RunOptions{Only: []string{"01-never", "19-gzip-identity"}}, os.Stdout)
	fmt.Println(failed, err)
	// Output:
	// PASS 01-never
	// PASS 19-gzip-identity
	// 2 passed, 0 failed
	// 0 <nil>
}

// ValidateContent gives a server author the strict verdict and the host's
// reading of each block they emit.
func ExampleValidateContent() {
	report, ok, _ := conformance.ValidateContent([]byte(`{"content":[
		{"type":"resource","uri":"https://s.example/a.wav","sizeBytes":-1,"disposition":"never"}]}`))
	fmt.Print(report)
	fmt.Println("all valid:", ok)
	// Output:
	// block 0: schema INVALID: sizeBytes breaks minimum 0
	//   host reads: kind reference, rejected fields sizeBytes
	// all valid: false
}

// A host judges its own wiring, not only the library's defaults: here a
// tighter view bound and a directory store. Every vector runs through that
// wiring, and the judge holds each view to the host's own bound. The
// vectors expect never references fetched when asked, so the run turns
// that on, as no host serving a model would.
func ExampleProfile() {
	dir, err := os.MkdirTemp("", "refcore-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	host := conformance.Profile{
		Policy: convert.Policy{ViewMax: 4000},
		Fetch:  fetch.Config{FetchNever: true},
		Store: func() (fetch.Store, error) {
			caseDir, err := os.MkdirTemp(dir, "case-")
			if err != nil {
				return nil, err
			}
			return fetch.NewDirStore(caseDir)
		},
	}
	var out strings.Builder
	passed, failed, err := conformance.Run(context.Background(), conformance.RunOptions{Host: host}, &out)
	fmt.Println(passed, failed, err)
	// Output:
	// 43 0 <nil>
}
