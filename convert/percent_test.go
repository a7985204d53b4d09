package convert

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestPercentEncodersWriteAsTheirLibraries pins each of percentEncoders
// to what the library it stands for writes (outputs taken from Node's
// encodeURIComponent and Python's urllib.parse, and url.QueryEscape
// itself), so that a uri a page carries percent-encoded in its query is
// searched for in the form that page holds (S2).
func TestPercentEncodersWriteAsTheirLibraries(t *testing.T) {
	const in = "tag:x.example,2026:N~(v1)*/a b\u00e9"
	want := []string{
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A%2Fa%20b%C3%A9", // Python quote(s, safe="")
		"tag%3Ax.example%2C2026%3AN~(v1)*%2Fa%20b%C3%A9",       // encodeURIComponent
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A/a%20b%C3%A9",   // Python quote(s)
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A%2Fa+b%C3%A9",   // url.QueryEscape, quote_plus
		"tag%3Ax.example%2C2026%3AN%7E%28v1%29%2A%2Fa+b%C3%A9", // PHP urlencode
		"tag%3Ax.example%2C2026%3AN%7E%28v1%29*%2Fa+b%C3%A9",   // Java URLEncoder
		"tag%3Ax.example%2C2026%3AN%7E(v1)*%2Fa+b%C3%A9",       // .NET WebUtility.UrlEncode
		"tag%3Ax.example%2C2026%3AN~(v1)*%2Fa+b%C3%A9",         // encodeURIComponent, then "+" for "%20"
	}
	if len(percentEncoders) != len(want) {
		t.Fatalf("%d encoders, %d expected outputs", len(percentEncoders), len(want))
	}
	for i, e := range percentEncoders {
		if got := e.encode(in); got != want[i] {
			t.Errorf("encoder %d (%+v) = %q, want %q", i, e, got, want[i])
		}
	}
	// An encoder said to write s as the first one does, does, and each
	// says how long its form is.
	for _, e := range percentEncoders {
		for _, s := range []string{in, "urn:vault.example:N", "a~b", "a b", "a+b", "x/y", "p(q)", "%41"} {
			if !e.differsFrom(percentEncoders[0], s) && e.encode(s) != percentEncoders[0].encode(s) {
				t.Errorf("%+v writes %q as %q, not as the first encoder, yet differsFrom is false", e, s, e.encode(s))
			}
			if n := e.encodedLen(s); n != len(e.encode(s)) {
				t.Errorf("%+v: encodedLen(%q) = %d, its form %q is %d bytes", e, s, n, e.encode(s), len(e.encode(s)))
			}
		}
	}
	// The QueryEscape one on every byte.
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	if got, want := percentEncoders[3].encode(all.String()), url.QueryEscape(all.String()); got != want {
		t.Errorf("QueryEscape's encoder differs from url.QueryEscape:\n got %q\nwant %q", got, want)
	}
	// A uri that holds nothing the encoders write apart gets one form at
	// each level.
	if sp := spellings("urn:vault.example:NEVER-SIG"); !slices.Equal(sp, []string{"urn:vault.example:NEVER-SIG"}) {
		t.Errorf("spellings = %q", sp)
	}
	if sp := encodedSpellings("urn:vault.example:NEVER-SIG"); !slices.Equal(sp, []string{"urn%3avault.example%3anever-sig",
		"urn%253avault.example%253anever-sig", "urn%25253avault.example%25253anever-sig"}) {
		t.Errorf("encodedSpellings = %q", sp)
	}
}

// FuzzSchemePlace checks schemePlace against the plainest search: the
// first offset at which any scheme, encoded at any depth looked for,
// starts (S2, the fallback past the bound of the spellings).
func FuzzSchemePlace(f *testing.F) {
	f.Add("see urn%3Ax and web%2Bvault%253Ay", "urn:", "web+vault:", 0)
	f.Add("URN:x %3a urn%%3a urn%3", "urn:", "a:", 1)
	f.Add("web+vault%3A web%2bvault%3a", "web+vault:", "vault:", 2)
	f.Fuzz(func(t *testing.T, s, sc1, sc2 string, from int) {
		from = min(max(from, 0), encodedSepMax)
		var schemes []string
		for _, sc := range []string{sc1, sc2} {
			// A scheme as the literal search keeps one: in lower case, a
			// letter, then letters, digits, "+", "-" or ".", and a colon.
			if len(sc) < 2 || sc[len(sc)-1] != ':' || !('a' <= sc[0] && sc[0] <= 'z') ||
				strings.ContainsFunc(sc[:len(sc)-1], func(r rune) bool {
					return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune("+-.", r))
				}) {
				continue
			}
			schemes = append(schemes, sc)
		}
		want := -1
	scan:
		for i := range len(s) {
			for _, sc := range schemes {
				for depth := from; depth <= encodedSepMax; depth++ {
					if form := encodedScheme(sc, depth); len(s)-i >= len(form) && strings.EqualFold(s[i:i+len(form)], form) {
						want = i
						break scan
					}
				}
			}
		}
		if got := schemePlace(s, schemes, from); got != want {
			t.Fatalf("schemePlace(%q, %q, %d) = %d, want %d", s, schemes, from, got, want)
		}
	})
}

// TestEncodedFormsCountedOnce pins that encodedForms offers each distinct
// form once, so the room they take (encodedFormsMax) is counted once per
// form the list holds.
func TestEncodedFormsCountedOnce(t *testing.T) {
	for _, u := range []string{"https://files.example/" + strings.Repeat("quarterly report ", 235), "tag:x,2026:N~(v1)* a/b\u00e9", "urn:a:b"} {
		seen := map[string]bool{}
		encodedForms(u, func(n int, form func() string) bool {
			f := form()
			if seen[f] {
				t.Errorf("%.40q: form %.60q offered twice", u, f)
			}
			if n != len(f) {
				t.Errorf("%.40q: form %.60q offered as %d bytes, is %d", u, f, n, len(f))
			}
			seen[f] = true
			return true
		})
	}
}
