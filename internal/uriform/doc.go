// Package uriform computes the canonical form under which refcore keys a
// reference's uri (behaviors N8), so that two spellings of one location
// share one record and one never mark.
//
// It guarantees that Canonical is deterministic, never panics, and maps a
// string to itself when it is already canonical. It does not resolve names,
// follow redirects or decide whether a uri is safe to fetch: that is package
// fetch's job. It is internal: hosts never see canonical forms.
package uriform
