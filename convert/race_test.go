//go:build race

package convert_test

// raceEnabled reports whether the race detector is on; it changes how
// much a function allocates.
const raceEnabled = true
