// Package logtest captures operator log lines in tests, so tests can check
// what refcore logs and, above all, what it never logs (O1: no credential,
// no query string).
//
// It is for tests only. A Buffer is safe for concurrent use; it keeps
// every line in memory and does not bound them.
package logtest
