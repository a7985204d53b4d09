package ascii

import "testing"

func TestLower(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"already lower":       "already lower",
		"MiXeD-Case_42":       "mixed-case_42",
		"\xff\xfeCAP\xe2\x80": "\xff\xfecap\xe2\x80", // invalid UTF-8 stays, byte for byte
		"ÄÖÜ KELVIN \u212a":   "ÄÖÜ kelvin \u212a",   // nothing outside ASCII folds
	} {
		got := Lower(in)
		if got != want || len(got) != len(in) {
			t.Errorf("Lower(%q) = %q, want %q of the same length", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { sink = Lower("no upper case here") }); n != 0 {
		t.Errorf("Lower of a lower-case string allocates %v times", n)
	}
}

var sink string
