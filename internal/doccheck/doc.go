// Package doccheck holds a test that keeps the project's documentation
// promise: every package has a doc.go whose comment opens "Package <name>",
// and every exported name outside tests carries a doc comment (O2).
//
// It has no code of its own and nothing imports it.
package doccheck
