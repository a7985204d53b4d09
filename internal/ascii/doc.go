// Package ascii holds the module's one lower-casing that touches ASCII
// letters only.
//
// It guarantees that the result has the same length as its input, byte
// for byte: only the bytes 'A' to 'Z' change, and every other byte stays
// as it is, invalid UTF-8 included. So an offset found in the result is
// the same offset in the input, which strings.ToLower does not promise.
//
// It does not fold any letter outside ASCII.
package ascii
