// Package jsonschema compiles and evaluates the small part of JSON Schema
// that the two content-block schemas bundled in conformance/vectors use, so
// that the conformance runner reaches the verdicts MCPL's JavaScript
// checker reaches with Ajv 8 (strict: true, strictRequired: false,
// allErrors: true).
//
// It is not a general JSON Schema implementation. The keywords it knows
// are type, const, enum, required, properties, additionalProperties,
// minLength, maxLength, pattern, minimum, maximum, oneOf, anyOf and not,
// plus boolean schemas; the annotations description, title, $comment,
// default, examples, deprecated, readOnly and writeOnly are accepted and
// ignored. Every other keyword, $ref, $schema, $id, format, the array
// keywords and patternProperties among them, is refused as unknown.
//
// What it guarantees:
//
//   - Compile refuses, with an error naming the keyword, what Ajv's strict
//     mode refuses for these keywords: an unknown keyword, a keyword value
//     of the wrong kind (a negative maxLength, an empty or duplicated enum,
//     a duplicated required name, an empty oneOf), a pattern that does not
//     compile, and the strictTypes faults: a type-specific keyword such as
//     required or maxLength where no type at that spot makes it apply, and
//     a type that contradicts the one an enclosing schema set for the same
//     value.
//   - Validate never panics; input that is not exactly one JSON value is an
//     error, so it counts as invalid.
//   - Numbers are judged as JavaScript sees them after JSON.parse: each is
//     rounded to the nearest float64 (a value too large becomes infinite,
//     and infinite values are neither numbers nor integers). So 1.0 and 1e3
//     are integers, 9007199254740992 is above a maximum of
//     9007199254740991, and, like Ajv, 0.99999999999999999999 counts as
//     the integer 1 because that is the number it parses to.
//   - String lengths count Unicode code points, as Ajv does.
//   - When an object has a key twice, the last value wins, as with
//     JSON.parse.
//
// What it does not cover: patterns run on Go's RE2 engine, which agrees
// with JavaScript's for the bundled patterns but not for every pattern
// (lookarounds and backreferences are refused at compile time). Type
// arrays such as ["string", "null"] are refused even where Ajv would take
// them. A lone UTF-16 surrogate escape in a string decodes to U+FFFD, so
// two different lone surrogates compare equal here and not in JavaScript.
// Property names inherited by every JavaScript object (such as
// "constructor") are treated as ordinary names.
package jsonschema
