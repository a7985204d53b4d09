package jsonschema

import (
	"testing"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// origin stands in for the fixture server when a vector is expanded; no
// request is ever made to it.
const origin = "http://127.0.0.1:9"

func mustCompileWrapped(t *testing.T, file []byte) *Schema {
	t.Helper()
	s, err := CompileWrapped(file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func expandedCases(t *testing.T) []vectors.Case {
	t.Helper()
	f, err := vectors.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 43 {
		t.Fatalf("the bundled file has %d vectors, want RFC-005's 43", len(f.Cases))
	}
	out := make([]vectors.Case, len(f.Cases))
	for i, c := range f.Cases {
		if out[i], err = c.Expand(origin); err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
	}
	return out
}

// TestLegacySchemaValid judges blocks[0] of each vector that carries
// legacySchemaValid against the schema in force before RFC-005.
func TestLegacySchemaValid(t *testing.T) {
	legacy := mustCompileWrapped(t, vectors.LegacySchemaJSON())
	judged := 0
	for _, c := range expandedCases(t) {
		if c.LegacySchemaValid == nil {
			continue
		}
		judged++
		err := legacy.Validate(c.Blocks[0])
		if (err == nil) != *c.LegacySchemaValid {
			t.Errorf("%s: legacy schema says %v, the vector says legacySchemaValid=%v\nblock: %s",
				c.ID, err, *c.LegacySchemaValid, c.Blocks[0])
		}
	}
	if judged == 0 {
		t.Fatal("no vector carries legacySchemaValid; the test judged nothing")
	}
}

// TestAmendedSchemaMatchesSchemaValid checks every block of every vector
// against the amended schema, as MCPL's checker does with Ajv.
func TestAmendedSchemaMatchesSchemaValid(t *testing.T) {
	amended := mustCompileWrapped(t, vectors.SchemaJSON())
	blocks, invalid := 0, 0
	for _, c := range expandedCases(t) {
		for i, block := range c.Blocks {
			blocks++
			err := amended.Validate(block)
			if err != nil {
				invalid++
			}
			if (err == nil) != c.SchemaValid[i] {
				t.Errorf("%s block %d: amended schema says %v, the vector says schemaValid=%v\nblock: %.300s",
					c.ID, i, err, c.SchemaValid[i], block)
			}
		}
	}
	// Both verdicts must occur, or the comparison would prove little.
	if invalid == 0 || invalid == blocks {
		t.Fatalf("%d of %d blocks invalid; want a mix", invalid, blocks)
	}
	t.Logf("%d blocks judged, %d invalid", blocks, invalid)
}
