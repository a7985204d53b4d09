// Package memtest measures, in tests, how much heap a piece of work leaves
// alive, so tests can check that what the library keeps (labels, marks,
// records, saved copies' facts) does not hold the much larger inputs it
// was made from.
//
// It is for tests only. It reads the whole process's heap, so a test that
// uses it must not run in parallel with others that allocate.
package memtest
