package label

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/mcplrefs/refcore/internal/ascii"
)

// Display bounds, in runes, for the labels a stub shows. They are defaults:
// a host may pass any other bound to [Bound] or [Display].
const (
	// NameMax is the display bound for a name label, such as a reference's
	// name or the base name of a saved file.
	NameMax = 160
	// TypeMax is the display bound for a media-type label.
	TypeMax = 120
)

// Ellipsis is the truncation marker that [Bound] appends. It is one rune and
// counts toward the bound.
const Ellipsis = "…"

// Removed reports whether r is one of the runes that [Clean] deletes from a
// label. This predicate is the single definition of that set; nothing else in
// the module keeps its own copy. A rune is removed when it is:
//
//   - a control character (general category Cc): U+0000–U+001F, U+007F
//     DELETE and U+0080–U+009F;
//   - a format character (general category Cf). These include every
//     character that changes the direction of text (such as U+202E
//     RIGHT-TO-LEFT OVERRIDE and the isolates U+2066–U+2069), the
//     zero-width space, non-joiner and joiner (U+200B–U+200D), U+2060 WORD
//     JOINER and the invisible operators, U+FEFF wherever it occurs, the
//     soft hyphen U+00AD, the tag characters that can spell hidden ASCII,
//     and the interlinear annotation characters U+FFF9–U+FFFB. A few format
//     characters are drawn, such as the Arabic number signs U+0600–U+0605;
//     they are removed too;
//   - a default-ignorable code point (the Unicode property
//     Default_Ignorable_Code_Point), which a renderer shows as nothing:
//     among them the variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF
//     (a string of them can carry any hidden text), the Mongolian variation
//     selectors, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0,
//     U+034F COMBINING GRAPHEME JOINER, and the unassigned code points
//     Unicode sets aside as default-ignorable (U+2065, U+FFF0–U+FFF8 and
//     U+E0000–U+E0FFF);
//   - U+2028 LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR.
//
// The categories and the property are those of the Unicode version in the
// Go release the program is built with ([unicode.Version]), so a newer
// release may add runes to the set. All other whitespace is kept.
func Removed(r rune) bool {
	u := uint32(r)
	if u > unicode.MaxRune {
		return false
	}
	t := removedBits
	return t.bits[t.page[u>>8]][u>>6&3]>>(u&63)&1 != 0
}

// removedTable is the removed set, merged once from the tables of package
// unicode. Unicode derives Default_Ignorable_Code_Point from three inputs,
// Other_Default_Ignorable_Code_Point, Cf and Variation_Selector, and then
// takes out the white-space characters and a few format characters that
// stay visible. Every one of those exceptions except white space is itself
// Cf, and no white-space character is in the other two inputs, so the union
// of Cf with the three inputs is exactly the union of Cf with the derived
// property; the tests check this for every code point. Bidi_Control is a
// subset of Cf and is listed so that the set visibly holds it.
var removedTable = rangetable.Merge(
	unicode.Cc,
	unicode.Cf,
	unicode.Bidi_Control,
	unicode.Other_Default_Ignorable_Code_Point,
	unicode.Variation_Selector,
	unicode.Zl, // U+2028 LINE SEPARATOR
	unicode.Zp, // U+2029 PARAGRAPH SEPARATOR
)

// pageBits is a set of code points as a two-level bit table. The code space
// is cut into pages of 256 code points; page gives, for each page, the index
// in bits of that page's 256 bits. Pages with the same bits share an entry:
// the removed set of Unicode 15.0 has 18 distinct pages, far below the 256
// that a byte can index, and entry 0 is the empty page that almost every
// page uses.
type pageBits struct {
	page [(unicode.MaxRune + 1) >> 8]uint8
	bits [256][4]uint64
}

// removedBits is removedTable as a [pageBits], which [Removed] reads with
// three loads and no search. It is held through a pointer variable on
// purpose: the compiler then loads the pointer where [Clean] looks a rune
// up, instead of keeping the two table addresses in registers across
// Clean's whole loop and reloading them on every pass, which slowed the
// ASCII and two-byte fast paths.
var removedBits = newPageBits(removedTable)

// newPageBits builds the [pageBits] of rt, whose ranges must be sorted, as
// a merged table's are.
func newPageBits(rt *unicode.RangeTable) *pageBits {
	t := new(pageBits)
	n := 1 // t.bits[0] stays empty
	add := func(page rune, bits [4]uint64) {
		i := 1
		for i < n && t.bits[i] != bits {
			i++
		}
		if i == n {
			if n == len(t.bits) {
				panic("label: too many distinct pages in a code point set")
			}
			t.bits[n] = bits
			n++
		}
		t.page[page] = uint8(i)
	}
	// Visit yields the runes in increasing order, so a page is complete
	// when the first rune of a later page arrives.
	page, bits := rune(-1), [4]uint64{}
	rangetable.Visit(rt, func(r rune) {
		if r>>8 != page {
			if page >= 0 {
				add(page, bits)
			}
			page, bits = r>>8, [4]uint64{}
		}
		bits[r>>6&3] |= 1 << (r & 63)
	})
	if page >= 0 {
		add(page, bits)
	}
	return t
}

// Clean is the sanitizer for every untrusted display string. It deletes each
// rune for which [Removed] reports true, replaces each run of invalid UTF-8
// bytes with one U+FFFD, and trims leading and trailing whitespace (as
// defined by [unicode.IsSpace]). Inner whitespace and right-to-left text are
// kept. Clean does not normalize, fold case, or bound the length; see
// [Display] for a bounded label.
//
// An empty result means the label is absent. Clean is idempotent. It
// allocates only when a rune must be deleted or replaced, or when it
// trims away more than half of a string longer than 256 bytes; a string
// that is already clean, or needs only a little trimming, is returned
// without copying. So a result never holds more memory than 256 bytes or
// about twice its own length, whichever is more, however long s was.
func Clean(s string) string {
	// Most labels are short printable ASCII. One of 8 to 16 bytes is
	// settled here by two overlapping words and a look at both ends,
	// without the calls below (BenchmarkClean/short: 7.0-7.6 ns through
	// them, 2.8-3.3 ns this way).
	if n := len(s); n >= 8 && n <= 16 {
		a, z := load64(s, 0), load64(s, n-8)
		if !anyNotPrintable2(a, z) && byte(a) != ' ' && byte(z>>56) != ' ' {
			return s
		}
	}
	// Otherwise one pass over whole words settles a printable string
	// before the general loop, and a string that is not settled resumes
	// where the pass stopped.
	i := printablePrefix(s)
	if i == len(s) {
		return compact(trim(s), len(s))
	}
	return clean(s, i)
}

// clean is [Clean]'s general loop, for s whose first i bytes are kept.
func clean(s string, i int) string {
	// The result is built in b, which stays nil, and unallocated, until a
	// change, and is returned as a string sharing b's bytes, which nothing
	// writes after that (as strings.Builder does). A byte slice rather
	// than a Builder lets a short kept span be copied as one fixed
	// 16-byte move into b's spare room, cut back to its length, instead
	// of a call to memmove per span: labels with many deletions spend
	// most of their copying on such spans (BenchmarkClean/mixed: 59 µs
	// before, 48 µs with this and removed3).
	var b []byte
	start := 0 // start of the span of kept bytes not yet copied
	for i < len(s) {
		c := s[i]
		if c-0x20 < 0x5F { // printable ASCII: skip the run it starts
			// One word is tested first, since most runs in a label end
			// within it (BenchmarkClean/mixed). A longer run goes on 16
			// bytes per test (BenchmarkClean/ascii1m: 17% less time
			// than a word per test; 32 bytes per test slowed the short
			// runs by keeping more registers busy).
			i++
			for {
				if i+8 > len(s) {
					// Fewer than eight bytes are left: finish the run
					// here rather than one pass of the outer loop each.
					for i < len(s) && s[i]-0x20 < 0x5F {
						i++
					}
					break
				}
				if m := notPrintable(load64(s, i)); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
				i += 8
				for i+16 <= len(s) && !anyNotPrintable2(load64(s, i), load64(s, i+8)) {
					i += 16
				}
			}
			// A run that stops before the end stops at a byte that is not
			// printable ASCII, which goes straight to the tests below
			// instead of the top of the loop.
			if i >= len(s) {
				break
			}
			c = s[i]
		}
		// A two-byte sequence whose lead byte starts no removed rune, and
		// the run of such sequences it starts, as in most Latin, Greek,
		// Cyrillic, Hebrew and Arabic words. (This and the step above:
		// BenchmarkClean/mixed 24.9 µs before, 23.4 µs after, medians of
		// ten interleaved runs.)
		if keptPair(s, i) {
			i += 2
			for keptPair(s, i) {
				i += 2
			}
			continue
		}
		// Find the length n of the rune at i, and whether it is kept or,
		// for a run of invalid bytes, replaced.
		n, bad := 1, false
		switch {
		case c < utf8.RuneSelf: // C0 or DEL
		case c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80:
			if !Removed(rune(c&0x1F)<<6 | rune(s[i+1]&0x3F)) {
				i += 2
				continue
			}
			n = 2
		case c&0xF0 == 0xE0 && i+2 < len(s) && valid3(c, s[i+1], s[i+2]):
			if removed3[uint(c&0x0F)<<6|uint(s[i+1]&0x3F)]>>(s[i+2]&0x3F)&1 == 0 {
				i += 3
				continue
			}
			n = 3
		default:
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			if n == 1 && r == utf8.RuneError {
				bad = true
				for i+n < len(s) { // take the whole run of invalid bytes
					if r, m := utf8.DecodeRuneInString(s[i+n:]); m != 1 || r != utf8.RuneError {
						break
					}
					n++
				}
			} else if !Removed(r) {
				i += n
				continue
			}
		}
		// s[i:i+n] is to be deleted, or replaced if bad.
		if start == 0 {
			b = make([]byte, 0, len(s))
		}
		if k := i - start; k <= 16 && start+16 <= len(s) && len(b)+16 <= cap(b) {
			// Bytes past k land in b's spare room, which later spans
			// overwrite; b never shows them.
			j := len(b)
			b = b[:j+16]
			copy(b[j:j+16], s[start:start+16])
			b = b[:j+k]
		} else if k >= longSpan {
			b = writeLong(b, s[start:i])
		} else {
			b = append(b, s[start:i]...)
		}
		if bad {
			b = append(b, replacement...)
		}
		i += n
		start = i
	}
	if start == 0 { // nothing changed: no copy
		return compact(trim(s), len(s))
	}
	b = append(b, s[start:]...)
	return compact(trim(unsafe.String(unsafe.SliceData(b), len(b))), cap(b))
}

// compact returns t, a part of a string or buffer of n bytes, as a copy
// of its own when it is less than half of that and n is over slackMax: a
// label kept for long would otherwise hold all n bytes alive
// (TestLabelsKeepNoSlack). The copy costs at most the half that was kept;
// a label that keeps most of its input, as almost all do, and a short
// one, are returned as they are.
func compact(t string, n int) string {
	if n > slackMax && 2*len(t) < n {
		return strings.Clone(t)
	}
	return t
}

// slackMax is the most memory a label may hold beyond twice its length:
// below it, a copy would cost more than it frees, and short labels that
// need only trimming stay free of allocations (TestNoAllocs).
const slackMax = 256

const replacement = "\uFFFD"

// longSpan is the length from which [clean] copies a kept span through
// [writeLong] instead of inline. Shorter spans, as in most labels, are
// copied inline, where a call would cost more than it saves
// (BenchmarkClean/mixed).
const longSpan = 256

// writeLong appends s to b. It is a call of its own, never inlined, for the
// sake of its stack check: that check is where the garbage collector can
// stop the goroutine as soon as it asks. Inside [clean] the collector can
// otherwise stop it only by signal, and a signal that arrives during the
// copy (runtime.memmove, which cannot be interrupted at that point) is
// refused and sent again a few microseconds later. On long dirty labels
// that copy is most of the time, and with the collector running often
// BenchmarkClean/ascii1m swung from about 200 to 600 µs per operation
// from one process to the next; with this call it held at 230–280 µs
// (about 15% more since the buffer is zeroed when it is made).
//
//go:noinline
func writeLong(b []byte, s string) []byte {
	return append(b, s...)
}

// keep2 has bit b set when no rune whose two-byte UTF-8 form starts with
// the byte 0xC0|b is removed, so [Clean] can pass such a sequence after
// checking only that it is well formed. It is derived from [Removed].
var keep2 = func() uint32 {
	var m uint32
	for b := rune(2); b < 32; b++ { // 0xC0 and 0xC1 start only overlong forms
		kept := true
		for r := b << 6; r < (b+1)<<6; r++ {
			kept = kept && !Removed(r)
		}
		if kept {
			m |= 1 << b
		}
	}
	return m
}()

// keptPair reports whether s holds at i a well-formed two-byte sequence
// whose lead byte starts no removed rune (see keep2).
func keptPair(s string, i int) bool {
	return i+1 < len(s) && s[i]&0xE0 == 0xC0 && keep2>>(s[i]&0x1F)&1 != 0 && s[i+1]&0xC0 == 0x80
}

// removed3 is [Removed] for the runes of three-byte UTF-8 forms, with one
// load instead of Removed's three: entry (lead&0x0F)<<6 | (second&0x3F)
// has bit third&0x3F set when the rune those bytes write is removed. It is
// derived from Removed, so the two cannot differ (TestCleanEveryRune).
// Most of the world's scripts are written with such runes
// (BenchmarkClean/wide: 96 µs before, 85 µs after).
var removed3 = func() (t [1 << 10]uint64) {
	for r := rune(0x800); r <= 0xFFFF; r++ {
		if Removed(r) {
			t[r>>6] |= 1 << (r & 0x3F)
		}
	}
	return t
}()

// trim returns s without leading and trailing whitespace.
func trim(s string) string {
	if len(s) == 0 || (s[0]-0x21 < 0x5F && s[len(s)-1]-0x21 < 0x5F) {
		return s // both ends are printable ASCII other than space
	}
	return strings.TrimSpace(s)
}

// printablePrefix returns the length of the longest prefix of s that is
// printable ASCII (0x20–0x7E), reading eight bytes at a time. The last
// word of a string of eight bytes or more overlaps the one before it
// rather than going byte by byte.
func printablePrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := notPrintable(load64(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i == len(s) {
		return i
	}
	if len(s) >= 8 {
		// The bytes of the last word before i are printable, so its
		// first miss is at i or later.
		j := len(s) - 8
		if m := notPrintable(load64(s, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		return len(s)
	}
	for i < len(s) && s[i]-0x20 < 0x5F {
		i++
	}
	return i
}

// load64 returns the eight bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// Constants of the word tests: a one and a high bit in each byte.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// notPrintable returns x with the high bit of each byte set where the byte
// is below 0x20 or at or above 0x7F, meaning not printable ASCII. In a byte
// b of x, b-0x20 has its high bit set if b is below 0x20 or at or above
// 0xA0, and b+1 if b is from 0x7F to 0xFE; 0xFF is caught by the first
// term. A borrow or a carry crosses into a byte only from a hit below it,
// so bits above a true hit may be set but never below the lowest one: the
// lowest set bit marks the first such byte.
func notPrintable(x uint64) uint64 {
	return ((x - 0x20*ones) | (x + ones)) & highs
}

// anyNotPrintable2 reports whether any byte of the two words is not
// printable ASCII. It merges the terms of [notPrintable] of both words
// before the one test, which is exact, since each word's terms are
// computed on that word alone; merging the words themselves would not be
// (a control byte or-ed with a letter reads as printable).
func anyNotPrintable2(a, b uint64) bool {
	return ((a-0x20*ones)|(a+ones)|(b-0x20*ones)|(b+ones))&highs != 0
}

// valid3 reports whether c, c1, c2 is a well-formed three-byte UTF-8
// sequence: no overlong form and no surrogate. c must be in 0xE0–0xEF.
func valid3(c, c1, c2 byte) bool {
	lo, hi := byte(0x80), byte(0xBF)
	if c == 0xE0 {
		lo = 0xA0
	} else if c == 0xED {
		hi = 0x9F
	}
	return lo <= c1 && c1 <= hi && c2&0xC0 == 0x80
}

// Bound returns s bounded to at most max runes. A string that fits is
// returned unchanged, without allocating. A longer one is cut and marked
// with [Ellipsis], which counts toward max; whitespace left at the end of the
// kept part is dropped before the marker. The cut never splits a UTF-8
// sequence and never separates a base character from the marks that follow
// it (runes of category M, or with a nonzero canonical combining class), so
// a long cluster at the cut is dropped whole. If max is zero or negative,
// Bound returns "".
//
// Bound counts runes, not bytes, and does not clean s; give it the result of
// [Clean], or use [Display].
func Bound(s string, max int) string {
	if max <= 0 {
		return ""
	}
	keep, cut := cutAt(s, max)
	if !cut {
		return s
	}
	return s[:keep] + Ellipsis
}

// cutAt reports whether s must be cut to fit in max runes and, if so, how
// many of its bytes come before [Ellipsis]. max must be positive.
func cutAt(s string, max int) (keep int, cut bool) {
	if len(s) <= max { // never more runes than bytes
		return 0, false
	}
	n := 0 // index of the rune starting at byte i
	for i := range s {
		if n == max-1 {
			keep = i
		} else if n == max {
			return backOff(s, keep), true
		}
		n++
	}
	return 0, false
}

// backOff moves a cut at keep back so that it does not fall inside a
// cluster of a base and its marks, and drops the whitespace before it.
func backOff(s string, keep int) int {
	for keep > 0 && attached(s[keep:]) {
		_, n := utf8.DecodeLastRuneInString(s[:keep])
		keep -= n
	}
	return len(strings.TrimRightFunc(s[:keep], unicode.IsSpace))
}

// attached reports whether the first rune of s belongs with the rune before
// it: a combining mark (Mn, Me or Mc) or any rune with a nonzero canonical
// combining class, which Unicode normalization groups with the preceding
// starter (see [norm.Iter]).
func attached(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	if r < 0x300 { // no marks and no non-starters below U+0300
		return false
	}
	return unicode.Is(unicode.M, r) || norm.NFD.PropertiesString(s).CCC() != 0
}

// Display returns Bound(Clean(s), max): the label to show for an untrusted
// string, at most max runes long. An empty result means there is nothing to
// show, and callers leave that segment out rather than print it empty.
func Display(s string, max int) string {
	return Bound(Clean(s), max)
}

// AppendDisplay appends Display(s, max) to dst and returns the extended
// buffer, so a caller that renders many labels can reuse one buffer. For a
// string that is already clean it allocates nothing beyond growing dst;
// an empty label appends nothing.
func AppendDisplay(dst []byte, s string, max int) []byte {
	if max <= 0 {
		return dst
	}
	c := Clean(s)
	keep, cut := cutAt(c, max)
	if !cut {
		return append(dst, c...)
	}
	return append(append(dst, c[:keep]...), Ellipsis...)
}

// MediaType returns the label for a media type that a server claimed or a
// response declared: s cleaned as by [Clean], with ASCII letters lower-cased,
// and bounded to [TypeMax] runes. Parameters are kept, since the result is a
// label and not a parsed value; use [MediaTypeEssence] to compare types. An
// empty result means the media type is absent.
func MediaType(s string) string { return MediaTypeMax(s, TypeMax) }

// MediaTypeMax is [MediaType] bounded to max runes instead of [TypeMax],
// for a host that shows longer (or shorter) media-type labels.
func MediaTypeMax(s string, max int) string {
	// Lower-casing ASCII changes no rune count, so bounding first is the
	// same and never copies more than max runes.
	return ascii.Lower(Bound(Clean(s), max))
}

// essenceMax is the longest essence [MediaTypeEssence] accepts: RFC 6838
// limits a type name and a subtype name to 127 characters each.
const essenceMax = 127 + 1 + 127

// MediaTypeEssence returns the "type/subtype" part of a media type, for
// comparisons: s is cleaned as by [Clean], cut before the first ';', trimmed
// of whitespace and lower-cased. The result is "" unless it is a type and a
// subtype made of RFC 9110 token characters, joined by one '/', and at most
// 255 bytes long; so "" means absent or unusable, and any non-empty result is
// printable ASCII with no spaces.
func MediaTypeEssence(s string) string {
	t := Clean(s)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if len(t) > essenceMax {
		return ""
	}
	slash := strings.IndexByte(t, '/')
	if slash <= 0 || slash == len(t)-1 {
		return ""
	}
	for i := 0; i < len(t); i++ {
		if i != slash && !isTokenChar(t[i]) {
			return ""
		}
	}
	// t may be a small part of a long s, such as a response's
	// Content-Type header, which a result kept for long would hold.
	return ascii.Lower(compact(t, len(s)))
}

// isTokenChar reports whether c is a tchar of RFC 9110 section 5.6.2.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
