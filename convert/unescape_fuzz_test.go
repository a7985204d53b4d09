package convert

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzUnescapeJSON pins the reading of escaped uris in text (S2, L5):
// unescapeJSON, which decodes a uri a piece at a time without going
// through encoding/json, decodes any string exactly as encoding/json
// decodes the literal holding it, and fails exactly where it fails. And a
// string decoded in two pieces, split anywhere but inside a character,
// an escape or a surrogate pair, decodes to the whole's decoding. (A bare uri holds no
// double quote, which would end such a literal: strings with one are not
// compared.)
func FuzzUnescapeJSON(f *testing.F) {
	for _, s := range []string{``, `a`, `\/`, `\\\/`, `\u0026`, `\u00e9`, `\ud83c\udfb5`, `\ud83c`, `\udfb5x`,
		`\ud83cx`, `\ud83c\u0041`, `\x`, `\`, `\u12`, `\u12G4`, "a\x01b", "\xff\xfe", `\'`, `\b\f\n\r\t`,
		"\u00e9\u65e5", "000000\u65e5", `https:\/\/h.example\/a?b=1\u0026c=2`, `a\\u0026b`} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		if strings.Contains(s, `"`) {
			return
		}
		want, wok := decodeString([]byte(`"` + s + `"`))
		got, gok := unescapeJSON(s)
		if gok != wok || got != want {
			t.Fatalf("unescapeJSON(%q) = %q, %t; encoding/json: %q, %t", s, got, gok, want, wok)
		}
		if !wok || len(s) == 0 {
			return
		}
		cut = int(uint(cut) % uint(len(s)+1))
		if cut < len(s) && !utf8.RuneStart(s[cut]) || cut > 0 && (s[cut-1] == '\\' || strings.LastIndexByte(s[:cut], '\\') >= cut-6 || highSurrogateEnd(s[:cut])) {
			return // inside an escape, or between the halves of a pair
		}
		a, aok := unescapeJSON(s[:cut])
		b, bok := unescapeJSON(s[cut:])
		if aok && bok && a+b != want {
			t.Fatalf("%q decoded in pieces at %d: %q + %q, whole: %q", s, cut, a, b, want)
		}
	})
}

// FuzzEscapeBounds pins the shortcut of bareReadings: for each place a
// bare uri may be cut (bareCuts, and its end), the bounds of the escapes
// of the whole uri tell what encoderEscaped tells of the prefix read
// alone.
func FuzzEscapeBounds(f *testing.F) {
	for _, s := range []string{`a\/b.c`, `a\u0026b_c\x.d`, `a\\b.\`, `x\u00.y`, `a.b\"c,d\/`, `\u00e9.\ud83c\udfb5_`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		u := "https://" + rest
		b := newEscapeBounds(u)
		for _, e := range append(bareCuts(u, len("https")), len(u)) {
			if got, want := b.prefix(e), newEscapeBounds(u[:e]).prefix(e); got != want {
				t.Fatalf("%q cut at %d: bounds say %t, the prefix read alone %t", u, e, got, want)
			}
		}
	})
}
