package convert_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcplrefs/refcore/convert"
)

func ExampleValidate() {
	blocks := []string{
		`{"type":"resource","uri":"https://example.test/report.wav","mimeType":"audio/wav","sizeBytes":12,"disposition":"never"}`,
		`{"type":"resource","uri":"https://example.test/report.wav","sizeBytes":9007199254740992}`,
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","disposition":"never"}`,
	}
	for _, b := range blocks {
		err := convert.Validate(json.RawMessage(b))
		var se *convert.SchemaError
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.As(err, &se):
			fmt.Printf("%v [property %q, constraint %q]\n", err, se.Property, se.Constraint)
		}
	}
	// Output:
	// ok
	// convert: sizeBytes breaks maximum 9007199254740991 [property "sizeBytes", constraint "maximum 9007199254740991"]
	// convert: disposition breaks not allowed beside data [property "disposition", constraint "not allowed beside data"]
}
