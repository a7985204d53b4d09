// Package nilness tells whether an interface value holds a nil pointer,
// map, slice, function or channel: a value that passes a plain nil check
// and panics on first use. The constructors of refcore's packages use it to
// refuse such arguments with an error instead.
package nilness
