//go:build race

package uriform

const raceEnabled = true
