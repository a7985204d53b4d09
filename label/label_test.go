package label

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// cleanTest is one case for Clean. Every case names the character class it
// exercises and says why the expected output is right.
type cleanTest struct {
	name   string
	in     string
	want   string
	reason string
}

// checkCases panics unless every case has a unique, hand-written name and a
// reason, so a failure always says which case broke and why it matters.
func checkCases[T any](t *testing.T, cases []T, name func(T) string, reason func(T) string) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		n := name(c)
		if n == "" || strings.Contains(n, "#") || seen[n] {
			panic("label test: missing, auto-numbered or duplicate case name " + n)
		}
		if reason(c) == "" {
			panic("label test: case " + n + " has no reason")
		}
		seen[n] = true
	}
}

var cleanTests = []cleanTest{
	// Removed: C0 controls, DEL and C1 controls (general category Cc).
	{"C0/NUL", "a\x00b", "ab", "U+0000 is Cc"},
	{"C0/BEL", "a\ab", "ab", "U+0007 is Cc"},
	{"C0/BS", "abc\b\b\bxyz", "abcxyz", "backspaces could rewrite a terminal line"},
	{"C0/TAB", "a\tb", "ab", "U+0009 is Cc, even though it is whitespace"},
	{"C0/LF", "line one\nline two", "line oneline two", "a newline could forge a new line in a stub"},
	{"C0/CR", "a\rb", "ab", "U+000D is Cc"},
	{"C0/ESC", "\x1b[31mred\x1b[0m", "[31mred[0m", "ESC starts terminal escape sequences"},
	{"C0/US", "a\x1fb", "ab", "U+001F is the last C0 control"},
	{"DEL", "a\x7fb", "ab", "U+007F is Cc"},
	{"C1/PAD", "a\u0080b", "ab", "U+0080 is the first C1 control"},
	{"C1/NEL", "a\u0085b", "ab", "U+0085 NEXT LINE is Cc and a line break"},
	{"C1/CSI", "a\u009b31mb", "a31mb", "U+009B is the one-rune CSI"},
	{"C1/APC", "a\u009fb", "ab", "U+009F is the last C1 control"},

	// Removed: every Bidi_Control character.
	{"bidi/ALM", "a\u061cb", "ab", "U+061C ARABIC LETTER MARK is Bidi_Control"},
	{"bidi/LRM", "a\u200eb", "ab", "U+200E is Bidi_Control"},
	{"bidi/RLM", "a\u200fb", "ab", "U+200F is Bidi_Control"},
	{"bidi/LRE", "a\u202ab", "ab", "U+202A is Bidi_Control"},
	{"bidi/RLE", "a\u202bb", "ab", "U+202B is Bidi_Control"},
	{"bidi/PDF", "a\u202cb", "ab", "U+202C is Bidi_Control"},
	{"bidi/LRO", "a\u202db", "ab", "U+202D is Bidi_Control"},
	{"bidi/RLO", "invoice\u202efdp.exe", "invoicefdp.exe", "U+202E reorders what follows it (the classic extension spoof)"},
	{"bidi/LRI", "a\u2066b", "ab", "U+2066 is Bidi_Control"},
	{"bidi/RLI", "a\u2067b", "ab", "U+2067 is Bidi_Control"},
	{"bidi/FSI", "a\u2068b", "ab", "U+2068 is Bidi_Control"},
	{"bidi/PDI", "a\u2069b", "ab", "U+2069 is Bidi_Control"},

	// Removed: the invisible characters of rule L3.
	{"invisible/ZWSP", "pay\u200bpal", "paypal", "U+200B ZERO WIDTH SPACE hides a break"},
	{"invisible/ZWNJ", "a\u200cb", "ab", "U+200C is invisible"},
	{"invisible/ZWJ", "a\u200db", "ab", "U+200D is invisible"},
	{"invisible/WJ", "a\u2060b", "ab", "U+2060 WORD JOINER is invisible"},
	{"invisible/function-application", "a\u2061b", "ab", "U+2061 is an invisible operator"},
	{"invisible/invisible-times", "a\u2062b", "ab", "U+2062 is an invisible operator"},
	{"invisible/invisible-separator", "a\u2063b", "ab", "U+2063 is an invisible operator"},
	{"invisible/invisible-plus", "a\u2064b", "ab", "U+2064 is an invisible operator"},
	{"invisible/BOM-inside", "a\ufeffb", "ab", "U+FEFF is removed anywhere, not only at the ends"},
	{"invisible/tag-first", "a\U000e0000b", "ab", "U+E0000 starts the tag block"},
	{"invisible/tag-language", "a\U000e0001b", "ab", "U+E0001 LANGUAGE TAG"},
	{"invisible/tag-text", "ok\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065", "ok", "tag letters spell hidden ASCII (here \"ignore\")"},
	{"invisible/tag-cancel", "a\U000e007fb", "ab", "U+E007F CANCEL TAG ends the tag block"},
	{"invisible/LS", "a\u2028b", "ab", "U+2028 LINE SEPARATOR breaks lines"},
	{"invisible/PS", "a\u2029b", "ab", "U+2029 PARAGRAPH SEPARATOR breaks paragraphs"},

	// Kept: text of every direction, and characters near the removed set.
	{"kept/ASCII", "attachment.wav", "attachment.wav", "printable ASCII is kept as is"},
	{"kept/Latin", "w\u00f6rld r\u00e9sum\u00e9", "w\u00f6rld r\u00e9sum\u00e9", "Latin letters with diacritics are text"},
	{"kept/Hebrew", "\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd", "right-to-left text is kept (L2)"},
	{"kept/Arabic", "\u0645\u0631\u062d\u0628\u0627", "\u0645\u0631\u062d\u0628\u0627", "right-to-left text is kept (L2)"},
	{"kept/Arabic-sign", "\u0600\u0661", "\u0600\u0661", "Arabic number signs are Cf but not Bidi_Control"},
	{"kept/CJK", "\u65e5\u672c\u8a9e.txt", "\u65e5\u672c\u8a9e.txt", "ideographs are text"},
	{"kept/emoji", "\U0001f3b5 track", "\U0001f3b5 track", "four-byte runes are text"},
	{"kept/combining", "e\u0301", "e\u0301", "Clean does not normalize; the combining mark stays"},
	{"kept/variation-selector", "\u2764\ufe0f", "\u2764\ufe0f", "U+FE0F is a mark, not an invisible of L3"},
	{"kept/inner-space", "a  b", "a  b", "inner whitespace is kept (L4)"},
	{"kept/inner-NBSP", "a\u00a0b", "a\u00a0b", "inner no-break space is kept"},
	{"kept/inner-ideographic-space", "a\u3000b", "a\u3000b", "inner U+3000 is kept"},
	{"kept/U+00A0-neighbour", "a\u00a1b", "a\u00a1b", "U+00A1 is the first rune after C1"},
	{"kept/soft-hyphen", "a\u00adb", "a\u00adb", "U+00AD is Cf but outside the documented set"},
	{"kept/U+200A", "a\u200ab", "a\u200ab", "U+200A HAIR SPACE is whitespace, not zero-width"},
	{"kept/U+2010", "a\u2010b", "a\u2010b", "U+2010 HYPHEN follows RLM"},
	{"kept/U+2027", "a\u2027b", "a\u2027b", "U+2027 precedes LINE SEPARATOR"},
	{"kept/U+202F", "a\u202fb", "a\u202fb", "U+202F follows RLO"},
	{"kept/U+2065", "a\u2065b", "a\u2065b", "U+2065 is unassigned and outside the documented ranges"},
	{"kept/U+206A", "a\u206ab", "a\u206ab", "U+206A follows PDI and is outside the documented set"},
	{"kept/U+FEFE", "a\ufefeb", "a\ufefeb", "U+FEFE precedes the BOM"},
	{"kept/U+E0080", "a\U000e0080b", "a\U000e0080b", "U+E0080 follows the tag block"},
	{"kept/replacement", "a\ufffdb", "a\ufffdb", "a literal U+FFFD is valid text"},

	// Invalid UTF-8: each run of bad bytes becomes one U+FFFD.
	{"invalid/lone-byte", "a\xffb", "a\ufffdb", "0xFF never occurs in UTF-8"},
	{"invalid/run", "a\xff\xfe\xfdb", "a\ufffdb", "one replacement per run, so bad input cannot triple in size"},
	{"invalid/truncated", "a\xe2\x80", "a\ufffd", "a sequence cut short at the end"},
	{"invalid/truncated-before-ASCII", "\xe2\x80b", "\ufffdb", "a sequence cut short by ASCII"},
	{"invalid/surrogate", "a\xed\xa0\x80b", "a\ufffdb", "UTF-16 surrogates are not valid in UTF-8"},
	{"invalid/overlong", "a\xc0\xafb", "a\ufffdb", "an overlong '/' must not survive as '/'"},
	{"invalid/around-removed", "\xff\u200b\xff", "\ufffd\ufffd", "a removed rune between two runs leaves two replacements"},
	{"invalid/only", "\x80", "\ufffd", "a lone continuation byte"},

	// Trimming (L4).
	{"trim/spaces", "  name.txt  ", "name.txt", "ASCII spaces at both ends"},
	{"trim/NBSP", "\u00a0name\u00a0", "name", "no-break spaces at both ends"},
	{"trim/ideographic", "\u3000name\u3000", "name", "U+3000 at both ends"},
	{"trim/BOM", "\ufeffname\ufeff", "name", "a BOM at either end"},
	{"trim/controls-then-space", "\x00 \u200b name \n", "name", "spaces exposed by removal are trimmed too"},
	{"trim/empty", "", "", "nothing in, nothing out"},
	{"trim/all-space", " \t\u3000 ", "", "a label of whitespace is absent"},
	{"trim/all-removed", "\u202e\u200b\x00\ufeff", "", "a label of removed runes is absent"},
	{"trim/one-space", " ", "", "a single space is absent"},
}

func TestClean(t *testing.T) {
	checkCases(t, cleanTests, func(c cleanTest) string { return c.name }, func(c cleanTest) string { return c.reason })
	for _, tt := range cleanTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in); got != tt.want {
				t.Errorf("Clean(%+q) = %+q; want %+q (%s)", tt.in, got, tt.want, tt.reason)
			}
			if got := reference(tt.in); got != tt.want {
				t.Errorf("reference(%+q) = %+q; want %+q (%s)", tt.in, got, tt.want, tt.reason)
			}
		})
	}
}

// reference is a plain composition of library parts that must agree with
// Clean on every input.
func reference(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if Removed(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// l3 is rule L3's list of invisible characters, written out here apart from
// Removed so the test checks one against the other.
var l3 = []struct{ lo, hi rune }{
	{0x200B, 0x200D},
	{0x2060, 0x2064},
	{0xFEFF, 0xFEFF},
	{0xE0000, 0xE007F},
	{0x2028, 0x2029},
}

func inL3(r rune) bool {
	for _, rg := range l3 {
		if rg.lo <= r && r <= rg.hi {
			return true
		}
	}
	return false
}

// TestRemovedSet checks Removed against the Unicode tables for every code
// point: it holds exactly for Cc, Bidi_Control and the L3 list.
func TestRemovedSet(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) || inL3(r)
		if got := Removed(r); got != want {
			t.Errorf("Removed(%+q) = %v; want %v", r, got, want)
		}
	}
}

// TestCleanEveryRune checks that Clean deletes a rune between two letters
// exactly when Removed says so, and keeps every other rune as it is.
func TestCleanEveryRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		in := "a" + string(r) + "b"
		want := in
		if Removed(r) {
			want = "ab"
		}
		if got := Clean(in); got != want {
			t.Fatalf("Clean(%+q) = %+q; want %+q", in, got, want)
		}
		// A leading NUL sends the rest through the rewriting path, with
		// the rune both at a word edge and after a full word.
		for _, pad := range []string{"", "01234567"} {
			in2 := "\x00" + pad + in + "\x00"
			if got := Clean(in2); got != pad+want {
				t.Fatalf("Clean(%+q) = %+q; want %+q", in2, got, pad+want)
			}
		}
	}
}

func TestCleanIdempotent(t *testing.T) {
	inputs := []string{benchShort, benchMixed(), benchASCII1M()}
	for _, tt := range cleanTests {
		inputs = append(inputs, tt.in, tt.in+tt.in, " "+tt.in+"\u202e")
	}
	for _, in := range inputs {
		once := Clean(in)
		if twice := Clean(once); twice != once {
			t.Errorf("Clean(Clean(%+q)) = %+q; want %+q", in, twice, once)
		}
		for _, max := range []int{1, 2, 5, NameMax} {
			d := Display(in, max)
			if dd := Display(d, max); dd != d {
				t.Errorf("Display(Display(%+q, %d)) = %+q; want %+q", in, max, dd, d)
			}
		}
		m := MediaType(in)
		if mm := MediaType(m); mm != m {
			t.Errorf("MediaType(MediaType(%+q)) = %+q; want %+q", in, mm, m)
		}
	}
}

// TestCleanBench checks the benchmark inputs against the reference, so the
// fast paths the benchmarks measure are the right ones.
func TestCleanBench(t *testing.T) {
	for name, in := range map[string]string{"short": benchShort, "mixed": benchMixed(), "ascii1m": benchASCII1M(), "wide": benchWide()} {
		if got, want := Clean(in), reference(in); got != want {
			t.Errorf("%s: Clean differs from reference (got %d bytes, want %d)", name, len(got), len(want))
		}
	}
	if got, want := Clean(benchASCII1M()), strings.Repeat("a", 1023*1024); got != want {
		t.Errorf("ascii1m: Clean kept %d bytes; want %d", len(got), len(want))
	}
	if got, want := Clean(benchWide()), strings.TrimSpace(benchWide()); got != want {
		t.Errorf("wide: Clean changed %d bytes into %d; want only the final space trimmed", len(benchWide()), len(got))
	}
}

type boundTest struct {
	name   string
	in     string
	max    int
	want   string
	reason string
}

var boundTests = []boundTest{
	{"fits", "abc", 3, "abc", "exactly max runes is not truncated"},
	{"fits-multibyte", "\u65e5\u672c\u8a9e", 3, "\u65e5\u672c\u8a9e", "the bound counts runes, not bytes"},
	{"fits-emoji", "\U0001f3b5\U0001f3b6", 2, "\U0001f3b5\U0001f3b6", "four-byte runes count once each"},
	{"cut-ascii", "abcdef", 4, "abc…", "the marker counts toward max"},
	{"cut-multibyte", "\u65e5\u672c\u8a9e\u6587", 3, "\u65e5\u672c…", "a cut never splits a three-byte rune"},
	{"cut-emoji", "\U0001f3b5\U0001f3b6\U0001f3b7", 2, "\U0001f3b5…", "a cut never splits a four-byte rune"},
	{"max-one", "abc", 1, "…", "only the marker fits"},
	{"max-zero", "abc", 0, "", "max <= 0 gives nothing"},
	{"max-negative", "abc", -1, "", "max <= 0 gives nothing"},
	{"empty", "", 5, "", "nothing to bound"},
	{"name-255", strings.Repeat("a", 255), NameMax, strings.Repeat("a", NameMax-1) + "…", "the 255-character boundary case needs the marker"},
	{"name-160", strings.Repeat("a", 160), NameMax, strings.Repeat("a", 160), "a name of exactly NameMax fits"},
	{"name-161", strings.Repeat("a", 161), NameMax, strings.Repeat("a", 159) + "…", "one rune over NameMax is truncated"},
	{"combining-kept-whole", "abe\u0301cd", 5, "abe\u0301…", "e and U+0301 fit before the marker"},
	{"combining-not-split", "abe\u0301cd", 4, "ab…", "the cut would fall between e and U+0301, so e goes too"},
	{"combining-stack", "xa\u0301\u0302\u0303\u0304yz", 4, "x…", "a base with a stack of marks is dropped whole"},
	{"combining-long-first", "a" + strings.Repeat("\u0301", 50), 10, "…", "a first cluster longer than max leaves only the marker"},
	{"leading-marks", strings.Repeat("\u0301", 5), 3, "…", "marks with no base are one cluster"},
	{"enclosing-mark", "ab1\u20e3cd", 4, "ab…", "U+20E3 (Me) stays with its base"},
	{"spacing-mark", "\u0915\u093e\u0916\u093e", 3, "\u0915\u093e…", "U+093E (Mc) stays with its base"},
	{"spacing-mark-cut", "\u0915\u093e\u0916\u093e", 2, "…", "the cut would separate U+0915 from U+093E"},
	{"space-before-marker", "abc def", 5, "abc…", "whitespace at the cut is dropped before the marker"},
	{"all-space-before-marker", "a   bcd", 4, "a…", "several spaces at the cut are dropped"},
	{"hebrew", "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd", 5, "\u05e9\u05dc\u05d5\u05dd…", "right-to-left text is cut the same way"},
}

func TestBound(t *testing.T) {
	checkCases(t, boundTests, func(c boundTest) string { return c.name }, func(c boundTest) string { return c.reason })
	for _, tt := range boundTests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Bound(%+q, %d) = %+q; want %+q (%s)", tt.in, tt.max, got, tt.want, tt.reason)
			}
			if n := utf8.RuneCountInString(got); tt.max > 0 && n > tt.max {
				t.Errorf("Bound(%+q, %d) has %d runes", tt.in, tt.max, n)
			}
			if again := Bound(got, tt.max); again != got {
				t.Errorf("Bound(Bound(%+q, %d)) = %+q; want %+q", tt.in, tt.max, again, got)
			}
		})
	}
}

type displayTest struct {
	name   string
	in     string
	max    int
	want   string
	reason string
}

func TestDisplay(t *testing.T) {
	tests := []displayTest{
		{"name-255", strings.Repeat("a", 255), NameMax, strings.Repeat("a", 159) + "…", "other packages rely on this marker"},
		{"clean-then-bound", "\u202e" + strings.Repeat("b", 10), 5, "bbbb…", "removed runes do not count toward the bound"},
		{"nothing-left", " \u200b\x00 ", NameMax, "", "an empty label is absent (L4)"},
		{"trim-before-bound", "   abc   ", 3, "abc", "trimmed whitespace does not count toward the bound"},
		{"invalid", "\xff\xfe" + strings.Repeat("z", 10), 3, "\ufffdz…", "a replaced run counts as one rune"},
	}
	checkCases(t, tests, func(c displayTest) string { return c.name }, func(c displayTest) string { return c.reason })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Display(tt.in, tt.max); got != tt.want {
				t.Errorf("Display(%+q, %d) = %+q; want %+q (%s)", tt.in, tt.max, got, tt.want, tt.reason)
			}
		})
	}
}

type mediaTypeTest struct {
	name, in, want, essence, reason string
}

func TestMediaType(t *testing.T) {
	tests := []mediaTypeTest{
		{"plain", "audio/wav", "audio/wav", "audio/wav", "already a clean lower-case type"},
		{"upper", "Text/HTML; Charset=UTF-8", "text/html; charset=utf-8", "text/html", "lower-cased; parameters stay in the label"},
		{"spaces", "  image/png ;q=1 ", "image/png ;q=1", "image/png", "trimmed around the essence"},
		{"bidi", "\u202eimage/png", "image/png", "image/png", "removed runes are cleaned first"},
		{"zwsp-inside", "text/pl\u200bain", "text/plain", "text/plain", "a zero-width space cannot make two types differ"},
		{"empty", "", "", "", "no type"},
		{"only-removed", "\u200b\x00", "", "", "a type that sanitizes to nothing is absent (L6)"},
		{"no-slash", "text", "text", "", "not type/subtype"},
		{"no-type", "/plain", "/plain", "", "empty type"},
		{"no-subtype", "text/", "text/", "", "empty subtype"},
		{"two-slashes", "a/b/c", "a/b/c", "", "'/' is not a token character"},
		{"inner-space", "te xt/plain", "te xt/plain", "", "space is not a token character"},
		{"non-ASCII", "text/pl\u00c4in", "text/pl\u00c4in", "", "non-ASCII is kept in the label but is no token; only ASCII is lower-cased"},
		{"path", "../../etc/passwd", "../../etc/passwd", "", "a path is not a media type"},
		{"vendor", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "long vendor types are valid"},
		{"overlong", "x/" + strings.Repeat("Y", 300), "x/" + strings.Repeat("y", TypeMax-3) + "…", "", "label bounded to TypeMax; essence over 255 bytes refused"},
	}
	checkCases(t, tests, func(c mediaTypeTest) string { return c.name }, func(c mediaTypeTest) string { return c.reason })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MediaType(tt.in); got != tt.want {
				t.Errorf("MediaType(%+q) = %+q; want %+q (%s)", tt.in, got, tt.want, tt.reason)
			}
			if got := MediaTypeEssence(tt.in); got != tt.essence {
				t.Errorf("MediaTypeEssence(%+q) = %+q; want %+q (%s)", tt.in, got, tt.essence, tt.reason)
			}
		})
	}
}

// TestNoAllocs pins the zero-allocation paths: an already-clean label costs
// a scan and nothing else.
func TestNoAllocs(t *testing.T) {
	tests := []struct {
		name string
		f    func() string
	}{
		{"Clean/ascii", func() string { return Clean("attachment.wav") }},
		{"Clean/ascii-trim", func() string { return Clean("  attachment.wav  ") }},
		{"Clean/non-ASCII", func() string { return Clean("r\u00e9sum\u00e9 \u05e9\u05dc\u05d5\u05dd.pdf") }},
		{"Clean/non-ASCII-trim", func() string { return Clean("\u3000r\u00e9sum\u00e9\u00a0") }},
		{"Clean/wide", func() string { return Clean("\u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \U0001f3b5") }},
		{"Bound/fits", func() string { return Bound("\u65e5\u672c\u8a9e", 3) }},
		{"Display/ascii", func() string { return Display("attachment.wav", NameMax) }},
		{"MediaType", func() string { return MediaType("audio/wav") }},
		{"MediaTypeEssence", func() string { return MediaTypeEssence("audio/wav; rate=44100") }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(100, func() { sink = tt.f() }); n != 0 {
			t.Errorf("%s: %v allocs per run; want 0", tt.name, n)
		}
	}
}

var sink string
