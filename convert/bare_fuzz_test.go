package convert

import (
	"strings"
	"testing"
)

// FuzzBareReadings pins that reading the bare uris of any text never
// fails (L5), whatever surrounds them, runs of up to 320 KiB of one byte
// included (past the part of a uri that is decoded), and that every
// reading it keeps is one a never could name.
func FuzzBareReadings(f *testing.F) {
	for _, s := range []string{"a://", "https://h.example/", `https:\/\/h.example\/`, "gs://bucket/", "x://a.b_c(d)", "https://h/\u00e9"} {
		f.Add(s, uint16(0), byte('b'), "")
		f.Add(s, uint16(60000), byte('b'), " https://h.example/x")
		f.Add(s, uint16(60000), byte('.'), `\u0026`)
	}
	f.Fuzz(func(t *testing.T, head string, run uint16, b byte, tail string) {
		text := head + strings.Repeat(string([]byte{b}), int(run)*5) + tail
		budget := newReadingBudget()
		for _, sp := range withBareURIs(text, nil, &budget) {
			if sp.start < 0 || sp.end > len(text) || sp.start > sp.end {
				t.Fatalf("span %d-%d in a text of %d bytes", sp.start, sp.end, len(text))
			}
			if len(sp.alts) != len(sp.altKeys) {
				t.Fatalf("%d readings with %d keys", len(sp.alts), len(sp.altKeys))
			}
			for _, alt := range sp.alts {
				if len(alt) > maxURIBytes {
					t.Fatalf("a reading of %d bytes, longer than a never can name", len(alt))
				}
			}
		}
	})
}
