package conformance_test

import (
	"context"
	"fmt"
	"os"

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
