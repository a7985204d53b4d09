package label_test

import (
	"fmt"
	"strings"

	"github.com/mcplrefs/refcore/label"
)

func ExampleClean() {
	// A right-to-left override would show "invoice\u202efdp.exe" as
	// "invoiceexe.pdf"; the zero-width space and the newline are invisible or
	// break the line.
	fmt.Printf("%+q\n", label.Clean("  invoice\u202efdp.exe\u200b\n"))
	// Hebrew text and inner spaces are kept.
	fmt.Printf("%q\n", label.Clean("\u05e9\u05dc\u05d5\u05dd world"))
	// Invalid UTF-8 becomes U+FFFD.
	fmt.Printf("%q\n", label.Clean("caf\xe9"))
	// Output:
	// "invoicefdp.exe"
	// "שלום world"
	// "caf�"
}

func ExampleBound() {
	fmt.Println(label.Bound("recording.wav", 20))
	fmt.Println(label.Bound("recording.wav", 8))
	// The cut does not separate "e" from its combining acute accent.
	fmt.Println(label.Bound("cafe\u0301 noir", 5))
	// Output:
	// recording.wav
	// recordi…
	// caf…
}

func ExampleDisplay() {
	name := strings.Repeat("a", 255)
	shown := label.Display(name, label.NameMax)
	fmt.Println(len(shown), strings.HasSuffix(shown, "…"))

	// A name with nothing left is absent: leave the segment out.
	if label.Display("\u200b\u202e ", label.NameMax) == "" {
		fmt.Println("no name")
	}
	// Output:
	// 162 true
	// no name
}

func ExampleMediaType() {
	fmt.Println(label.MediaType(" Audio/WAV; Rate=44100\u202e"))
	fmt.Println(label.MediaTypeEssence(" Audio/WAV; Rate=44100\u202e"))
	fmt.Printf("%q\n", label.MediaTypeEssence("../etc/passwd"))
	// Output:
	// audio/wav; rate=44100
	// audio/wav
	// ""
}

func ExampleAppendDisplay() {
	// One buffer serves every label of a listing.
	var buf []byte
	for _, name := range []string{"take-1.wav", "\u202eexe.pdf", "a very long name indeed"} {
		buf = append(buf, "- "...)
		buf = label.AppendDisplay(buf, name, 12)
		buf = append(buf, '\n')
	}
	fmt.Print(string(buf))
	// Output:
	// - take-1.wav
	// - exe.pdf
	// - a very long…
}
