package jsonschema

import (
	"testing"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// FuzzValidate feeds arbitrary bytes to the amended schema: Validate must
// never panic, and its verdict must not depend on trailing white space.
func FuzzValidate(f *testing.F) {
	s, err := CompileWrapped(vectors.SchemaJSON())
	if err != nil {
		f.Fatal(err)
	}
	file, err := vectors.Bundled()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range file.Cases {
		for _, b := range c.Blocks {
			f.Add([]byte(b))
		}
	}
	for _, seed := range []string{``, `{`, `null`, `1e400`, `{"type":"image","uri":"x","sizeBytes":-0}`, `{"a":1,"a":2}`, `"\ud800"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, instance []byte) {
		err := s.Validate(instance)
		again := s.Validate(append(append([]byte(nil), instance...), " \n"...))
		if (err == nil) != (again == nil) {
			t.Fatalf("verdict changed with trailing white space: %v then %v", err, again)
		}
	})
}
