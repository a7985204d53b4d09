package ascii_test

import (
	"fmt"

	"github.com/mcplrefs/refcore/internal/ascii"
)

func ExampleLower() {
	fmt.Println(ascii.Lower("Audio/WAV; Rate=44100"))
	// Output: audio/wav; rate=44100
}
