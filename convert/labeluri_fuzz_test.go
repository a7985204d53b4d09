package convert

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/label"
)

// FuzzLabelWithoutURIs pins S2 and the label bounds for any label a server
// sends: no "scheme://" survives outside a "[uri withheld]", the block's own
// uri never survives in any ASCII letter case, and the name and type labels stay
// within their bounds (the replacement is longer than a short uri).
func FuzzLabelWithoutURIs(f *testing.F) {
	for _, s := range []string{"a://b c://d", "://", "\xff://\xfe", "take https://v.example/x?sig=S.wav",
		strings.Repeat("a://b ", 50), "x" + strings.Repeat("é", 30) + "://", strings.Repeat("://", 40)} {
		f.Add(s, "https://v.example/x?sig=S")
	}
	// Found by the fuzzer: an invalid "uri" whose lower-casing spells the
	// replacement character that cleaning put into the label.
	f.Add(strings.Repeat("0", 54)+"\xa9", "00000\x8c")
	// Found by the fuzzer: the block's own uri withheld between ":" and
	// "//" leaves no uri behind.
	f.Add(":0//", "0")
	c := &Converter{policy: Policy{NameMax: 12, TypeMax: 10}}
	f.Fuzz(func(t *testing.T, s, own string) {
		out := withoutURIs(label.Clean(s), own)
		// Each replacement is taken out as a space: taking it out as
		// nothing would join what stood on either side, and ":" before a
		// withheld "0" with "//" after it is no uri (":0//", own "0").
		if rest := strings.ReplaceAll(out, uriWithheldLabel, " "); strings.Contains(rest, "://") {
			t.Errorf("a uri survives: %q -> %q", s, out)
		}
		// A uri is valid UTF-8 (classifying decodes it) and holds no white
		// space, and one the replacement itself spells cannot be told
		// from it.
		realURI := len(own) >= 4 && utf8.ValidString(own) && !strings.ContainsFunc(own, unicode.IsSpace) &&
			!strings.Contains(uriform.LowerASCII(uriWithheldLabel), uriform.LowerASCII(own))
		if realURI && strings.Contains(uriform.LowerASCII(out), uriform.LowerASCII(own)) {
			t.Errorf("the block's own uri %q survives: %q -> %q", own, s, out)
		}
		if n := utf8.RuneCountInString(c.nameLabel(s, own)); n > 12 {
			t.Errorf("name label of %q is %d runes, over 12", s, n)
		}
		if n := utf8.RuneCountInString(typeLabel(s, 10, own)); n > 10 {
			t.Errorf("type label of %q is %d runes, over 10", s, n)
		}
	})
}
