package label

import (
	"flag"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzClean(f *testing.F) {
	// The benchmark inputs are seeds for plain "go test" runs. While
	// fuzzing, the engine would spend its time mutating and minimizing
	// inputs of 32 KiB and 1 MiB, so it gets the same patterns, shorter.
	mixed, ascii := benchMixed(), benchASCII1M()
	if fuzzing() {
		mixed = mixed[:len(mixed)/1000*4]
		ascii = ascii[:len(ascii)/1024*2]
	}
	f.Add(benchShort, NameMax)
	f.Add(mixed, NameMax)
	f.Add(ascii, TypeMax)
	f.Add(strings.Repeat("a", 255), NameMax)
	f.Add("e\u0301\u0302x\u093e", 2)
	f.Add("\xff\xfe\u202e\U000e0041 Text/HTML; charset=x ", 7)
	for _, tt := range cleanTests {
		f.Add(tt.in, 3)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1000 // keep bounds small enough to be reached

		c := Clean(s)
		if !utf8.ValidString(c) {
			t.Fatalf("Clean(%+q) = %+q is not valid UTF-8", s, c)
		}
		for _, r := range c {
			if Removed(r) {
				t.Fatalf("Clean(%+q) = %+q keeps removed rune %+q", s, c, r)
			}
		}
		if c != strings.TrimFunc(c, unicode.IsSpace) {
			t.Fatalf("Clean(%+q) = %+q is not trimmed", s, c)
		}
		if cc := Clean(c); cc != c {
			t.Fatalf("Clean(Clean(%+q)) = %+q; want %+q", s, cc, c)
		}
		if ref := reference(s); ref != c {
			t.Fatalf("Clean(%+q) = %+q; reference gives %+q", s, c, ref)
		}

		d := Display(s, max)
		if max <= 0 && d != "" {
			t.Fatalf("Display(%+q, %d) = %+q; want \"\"", s, max, d)
		}
		if n := utf8.RuneCountInString(d); max > 0 && n > max {
			t.Fatalf("Display(%+q, %d) = %+q has %d runes", s, max, d, n)
		}
		if max > 0 && d != c {
			kept, ok := strings.CutSuffix(d, Ellipsis)
			if !ok || !strings.HasPrefix(c, kept) {
				t.Fatalf("Display(%+q, %d) = %+q is not a marked prefix of %+q", s, max, d, c)
			}
		}
		if a := AppendDisplay([]byte("x"), s, max); string(a) != "x"+d {
			t.Fatalf("AppendDisplay(\"x\", %+q, %d) = %+q; want %+q", s, max, a, "x"+d)
		}
		if dd := Display(d, max); dd != d {
			t.Fatalf("Display(Display(%+q, %d)) = %+q; want %+q", s, max, dd, d)
		}

		m := MediaType(s)
		if utf8.RuneCountInString(m) > TypeMax {
			t.Fatalf("MediaType(%+q) = %+q is over TypeMax", s, m)
		}
		if mm := MediaType(m); mm != m {
			t.Fatalf("MediaType(MediaType(%+q)) = %+q; want %+q", s, mm, m)
		}
		e := MediaTypeEssence(s)
		for i := 0; i < len(e); i++ {
			if e[i] <= ' ' || e[i] >= 0x7f || e[i] == ';' || ('A' <= e[i] && e[i] <= 'Z') {
				t.Fatalf("MediaTypeEssence(%+q) = %+q holds byte %q", s, e, e[i])
			}
		}
		if ee := MediaTypeEssence(e); ee != e {
			t.Fatalf("MediaTypeEssence(MediaTypeEssence(%+q)) = %+q; want %+q", s, ee, e)
		}
	})
}

// fuzzing reports whether the test binary runs with -test.fuzz set.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}
