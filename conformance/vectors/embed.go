package vectors

import (
	_ "embed" // the bundled vectors and schemas travel inside every binary
	"sync"
)

// The files bundled with this package. They are RFC-005's own: the
// executable vectors, the amended content-block schema of its section 8,
// and the schema that was in force before it (which legacySchemaValid
// judges against).
var (
	//go:embed rfc005-bulk-reference-vectors.json
	bundledVectors []byte
	//go:embed rfc005-contentblock-schema.json
	bundledSchema []byte
	//go:embed pre-rfc005-contentblock-schema.json
	bundledLegacySchema []byte
)

// BundledName is the file name of the bundled vectors, as reports print it.
const BundledName = "rfc005-bulk-reference-vectors.json"

var bundled = sync.OnceValues(func() (*File, error) { return Parse(bundledVectors) })

// Bundled returns the RFC's 43 vectors as this package carries them. The
// file is parsed once; callers share the result and must not modify it.
func Bundled() (*File, error) { return bundled() }

// BundledJSON returns a copy of the bundled vectors file's bytes.
func BundledJSON() []byte { return append([]byte(nil), bundledVectors...) }

// SchemaJSON returns a copy of the amended content-block schema file (the
// strict emitter schema RFC-005 section 8 describes), as
// {"description": ..., "schema": {...}}.
func SchemaJSON() []byte { return append([]byte(nil), bundledSchema...) }

// LegacySchemaJSON returns a copy of the content-block schema in force
// before RFC-005, as {"sourceRevision": ..., "schema": {...}}.
func LegacySchemaJSON() []byte { return append([]byte(nil), bundledLegacySchema...) }
