package uriform

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// distinctRunes returns n distinct code points from start on.
func distinctRunes(start rune, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(start + rune(i))
	}
	return b.String()
}

// undialableHosts are host names no client can dial: their ASCII form
// would have a label longer than 63 bytes or be longer than 253 bytes.
func undialableHosts() []string {
	var many []string
	for i := range 20 {
		many = append(many, distinctRunes(0x4e00+rune(100*i), 100))
	}
	return []string{
		distinctRunes(0x4e00, 4087),                  // one label, 4,087 distinct CJK characters
		distinctRunes(0xac00, 4000) + ".example",     // Hangul syllables, then an ASCII label
		"-" + distinctRunes(0x4e00, 4000),            // refused by the lookup (leading hyphen)
		distinctRunes(0x4e00, 4000) + "\u0080",       // refused by the lookup (a control)
		strings.Join(many, "."),                      // many labels, each too short to count alone
		strings.Join(many, "\u3002"),                 // the same, ideographic full stops
		strings.Repeat("\u00fc", 520) + ".test",      // one letter repeated
		strings.Repeat("\u00fc", 300) + "\uff0etest", // full-width full stop
	}
}

// TestUndialableHostsShareOneKey pins the key of a Unicode host name no
// client can dial: the one fixed host, whose key is itself, and which is
// cheap to key again. Such a name used to be punycode-encoded whole, at a
// cost of its length times its number of distinct characters: some
// 170 ms for one uri of 4,087 distinct CJK characters, paid again on
// every Canonical of the uri and of its key. The 200 uris at the end took
// about a minute; the package's test timeout is what catches them.
func TestUndialableHostsShareOneKey(t *testing.T) {
	want := "https://" + undialableHost + "/p?q=1"
	if Canonical(want) != want {
		t.Fatalf("the fixed host's key %q is not its own key: %q", want, Canonical(want))
	}
	if !plainCanonical(want) {
		t.Errorf("the fixed host's key %q does not take the fast path", want)
	}
	if label, _, _ := strings.Cut(undialableHost, "."); len(label) <= 63 {
		t.Errorf("the fixed host's label is %d bytes: a DNS name could hold it", len(label))
	}
	for _, h := range undialableHosts() {
		uri := "https://" + h + "/p?q=1"
		key := Canonical(uri)
		if key != want {
			t.Errorf("host of %d code points (%.20q...): key %.80q, want %q", utf8.RuneCountInString(h), h, key, want)
			continue
		}
		if again := Canonical(key); again != key {
			t.Errorf("the key %q keys again as %q", key, again)
		}
	}
	// Every key is made before any is checked, so that before the fix
	// the test runs into the package's timeout rather than stopping at
	// the first wrong key.
	var bad []string
	for i := range 200 {
		uri := "https://" + distinctRunes(0x4e00+rune(i), 4087) + "/" + strings.Repeat("x", i)
		key := Canonical(uri)
		if want := "https://" + undialableHost + "/" + strings.Repeat("x", i); key != want || Canonical(key) != key {
			bad = append(bad, key)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of 200 uris are not keyed to the fixed host; the first: %.80q", len(bad), bad[0])
	}
}

// TestDialableHostsKeepTheirLookup pins the other side: a name the count
// must not take for undialable is still keyed by the name the client
// dials. Characters the lookup maps to nothing do not count, and
// neither may characters it composes with the one before them: forty
// "e"s each followed by a combining acute accent are eighty code points
// but forty "é"s once composed, a name a client dials.
func TestDialableHostsKeepTheirLookup(t *testing.T) {
	cases := []struct{ long, short string }{
		{"vault" + strings.Repeat("\u00ad", 5000) + ".example", "vault.example"},
		{"v\u00e4ult" + strings.Repeat("\u200b\ufe0f\U000e0100", 2000) + ".example", "v\u00e4ult.example"},
		{strings.Repeat("e\u0301", 40) + ".example", strings.Repeat("\u00e9", 40) + ".example"},
		{strings.Repeat("\u3131\u314f", 40) + ".example", strings.Repeat("\uac00", 40) + ".example"},
	}
	for _, c := range cases {
		long, short := Canonical("https://"+c.long+"/"), Canonical("https://"+c.short+"/")
		if long != short {
			t.Errorf("%.40q...: key %.80q, but its short spelling's key is %q", c.long, long, short)
		}
		if strings.HasPrefix(long, "https://"+undialableHost+"/") {
			t.Errorf("%.40q...: keyed as undialable", c.long)
		}
	}
	// A label of exactly 63 characters, and one of 63 letters with an
	// accent, are still looked up; so is a name of 253 in all.
	for _, h := range []string{
		strings.Repeat("\u00fc", 63) + ".test",
		"\u00e9" + strings.Repeat("a", 62) + ".test",
		strings.Repeat("\u00fc"+strings.Repeat("a", 62)+".", 3) + "\u00fc" + strings.Repeat("a", 60),
	} {
		look := lookupHost(t, h)
		if !registrable(look) {
			t.Fatalf("%q: the client does not dial it by an ASCII name (%q)", h, look)
		}
		if k, want := keyHost(h), keyHost(look); k != want {
			t.Errorf("%q: key host %q, want %q, the key of the name dialed", h, k, want)
		}
	}
}

// TestMayVanishCoversTheLookup sweeps every code point r and checks that
// whenever the client's lookup drops r from "a"+r+"b" (it dials "ab"),
// mayVanish(r) holds: a character the lookup drops must not count toward
// a name's length. It also checks that the dialed name holds a dot
// exactly when r is one of the four full stops mayBeDialed splits at. It
// takes a few seconds, and is skipped under -short and under the race
// detector, which makes it many times slower; .ci/run runs it without.
func TestMayVanishCoversTheLookup(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sweeps every code point through net/http's Transport")
	}
	var vanished int
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if 0xd800 <= r && r < 0xe000 {
			continue
		}
		name, ok := lookupName("a" + string(r) + "b")
		if ok && name == "ab" {
			vanished++
			if !mayVanish(r) {
				t.Errorf("the lookup drops %U, but mayVanish(%U) is false", r, r)
			}
		}
		separator := r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
		if ok && strings.Contains(name, ".") != separator {
			t.Errorf("the lookup dials %q for a%cb: %U splits labels, or fails to, unlike mayBeDialed's count", name, r, r)
		}
	}
	if vanished == 0 {
		t.Error("the lookup dropped no code point: the sweep is broken")
	}
}

// TestNormalizationMergesAtMostFour checks the bound the length count
// rests on: normalization to NFC merges at most four code points into
// one (no character's canonical decomposition is longer), so a label of
// n code points that survive the mapping is at least n/4 code points
// long.
func TestNormalizationMergesAtMostFour(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if 0xd800 <= r && r < 0xe000 {
			continue
		}
		if n := utf8.RuneCountInString(norm.NFD.String(string(r))); n > maxComposed {
			t.Errorf("%U decomposes into %d code points, more than %d", r, n, maxComposed)
		}
	}
}
