// Package golden compares test output with golden files, the contract for
// every model-visible text (stubs, notices, failure clauses and remedies),
// and rewrites them when a test binary runs with -update.
//
// It is for tests only. It guarantees that a mismatch fails the test with
// a line diff and that nothing is written without -update; it does not
// decide whether a change to a golden file is right: review the diff.
package golden
