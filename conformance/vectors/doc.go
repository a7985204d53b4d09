// Package vectors loads RFC-005's executable conformance vectors (format
// mcpl-bulk-references-1) into typed cases, refusing what it does not
// understand: an unknown format, a duplicate id, an unknown operation or an
// unknown key anywhere in a case is an error that names it, never a pass.
//
// It guarantees that a loaded file's cases are well formed for the runner
// and that Expand gives each block the JSON a server would send. It does
// not judge anything: the runner in package conformance does.
package vectors
