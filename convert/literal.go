package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/internal/uriform"
)

// The bare reading of a text (see withBareURIs) ends a uri at white space,
// a double quote, a backtick, an angle bracket or the next scheme. A uri a
// block of the content names may hold one of those itself: a space a
// server did not escape, or another URL in its query, which RFC 3986
// allows. A text that writes such a uri out is cut by the bare reading
// into pieces none of which is the uri, so the views would show it whole,
// credential and all, even when the content calls it never. The bare
// reading does not see a uri without "://" at all (a urn: or mailto:
// uri), with the same result. The texts are therefore also searched for
// each such uri as it is written, in ASCII letter case or another: raw,
// as the contents of a JSON string, or percent-encoded whole, as a link
// carries it in its query.

// literalMax bounds the spellings a content's texts are searched for (a
// uri has up to thirteen as JSON writes it, most three or four, and up to
// ten percent-encoded forms, which take only the room the others leave:
// see spellEncoded). The uris a content calls never, or that the
// registrar knows a server marked, take their places first, then those
// holding "://", then the rest. Past the bound, each text is withheld from
// the first place it may write out a uri the search could not take, as a
// text past the reading's bounds is (see restSpan): from its first "://",
// or, for a never uri that starts with a scheme of its own before any
// "://" (a urn: or mailto: uri), from the first place it writes that
// scheme; for a uri only whose encoded forms were left out, from the
// first place it writes one of those encoded. A uri without "://" that
// nobody calls never is left out without that: only a mark made on it
// later could need it.
const literalMax = 128

// schemeMax bounds the schemes kept of never uris with one before any
// "://"; past it, or for a never uri without "://" that has no scheme,
// any place may start one.
const schemeMax = 16

// twinMax bounds the other uris a spelling stands for: uris that differ
// only in the letter case of their paths, whose keys differ. Past it,
// every place of the spelling is withheld.
const twinMax = 8

// literal is one spelling of a splitting uri the content names, in lower
// case, with the uri and its canonical key, and the other uris (and
// their keys) spelled the same but for letter case. alts and altKeys are
// clipped, so a span that adds to them copies them. always is set when
// more uris than twinMax share the spelling.
type literal struct {
	lower, uri, key string
	alts, altKeys   []string
	pat             []byte // lower, to search with
	always          bool
}

// literals collects the spellings of the uris a content names (with their
// canonical keys) that the bare reading would split, up to literalMax.
type literals struct {
	list []literal
	// spelled maps each uri spelled, in ASCII lower case, to the places
	// of its spellings in list, so that a uri named again, in whatever
	// letter case, is not spelled again.
	spelled map[string]spelledURI
	// dropSep is set when a uri holding "://" was left out, and
	// dropScheme when a never uri with a scheme of its own before any
	// "://" was. dropEncSep and dropEncScheme are the same for uris
	// whose spellings fit but not all of whose percent-encoded forms did.
	dropSep, dropScheme       bool
	dropEncSep, dropEncScheme bool
	// encode lists, in the order added, the uris whose spellings all fit,
	// for spellEncoded to add their percent-encoded forms.
	encode []encodeURI
	// schemes holds, in lower case and each with its colon, the schemes
	// of the never uris with one before any "://", up to schemeMax;
	// anywhere is set past that, or for such a uri with no scheme (one
	// that splits() for a space it holds). They start the fallback behind
	// dropScheme, and the part of a long text past what is checked.
	schemes  []string
	anywhere bool
	// noScheme is set when a never uri with no scheme set anywhere: the
	// percent-encoded forms of such a uri need hold no encoded colon.
	noScheme bool
	// encodedBytes counts the bytes of the percent-encoded forms listed,
	// up to encodedFormsMax.
	encodedBytes int
	// found counts the places the content's texts write out a spelling,
	// up to textObjectMax between them: past it, the rest of a text from
	// its next such place is withheld.
	found int
}

// encodeURI is a uri waiting for its percent-encoded forms, with its key,
// the other uris spelled the same but for letter case (twins, up to one
// past twinMax) and whether any of them was added as never.
type encodeURI struct {
	uri, key string
	twins    [][2]string // uri, key
	never    bool
}

// spelledURI is where a uri's spellings are in literals.list, and its
// place in literals.encode; short is set when not all of them fit.
type spelledURI struct {
	at    []int
	enc   int
	short bool
}

// literalCandidate returns uri without the white space and invisible
// characters around it, which its key leaves out, and whether the search
// takes it (see add).
func literalCandidate(uri string) (string, bool) {
	uri = uriform.Trim(uri)
	return uri, uri != "" && len(uri) <= maxURIBytes && splits(uri)
}

// add takes uri, with canonical key key, when the bare reading would not
// read it whole; never says whether the content calls it never or the
// registrar knows it marked. It is spelled as literalCandidate trims it.
func (l *literals) add(uri, key string, never bool) {
	uri, ok := literalCandidate(uri)
	if !ok {
		return
	}
	if never {
		l.neverScheme(uri)
	}
	lu := uriform.LowerASCII(uri)
	if sp, ok := l.spelled[lu]; ok {
		// Spelled before, in this letter case or another: its lower-case
		// spellings are the same.
		for _, i := range sp.at {
			l.list[i].twin(uri, key)
		}
		if sp.short {
			l.drop(uri, never)
		} else {
			l.encode[sp.enc].twin(uri, key, never)
		}
		return
	}
	if len(l.list) == literalMax {
		l.drop(uri, never)
		return
	}
	var sp spelledURI
	for _, s := range spellings(uri) {
		i, ok := l.spell(s, uri, key)
		if !ok {
			sp.short = true
			l.drop(uri, never)
			break
		}
		sp.at = append(sp.at, i)
	}
	if !sp.short {
		sp.enc = len(l.encode)
		l.encode = append(l.encode, encodeURI{uri: uri, key: key, never: never})
	}
	if l.spelled == nil {
		l.spelled = make(map[string]spelledURI)
	}
	l.spelled[lu] = sp
}

// spell adds s, a spelling of uri (whose key is key), to the list, or
// records uri as a twin of the spelling already there, and returns its
// place; false when the list is full.
func (l *literals) spell(s, uri, key string) (int, bool) {
	lower := uriform.LowerASCII(s)
	if i := slices.IndexFunc(l.list, func(x literal) bool { return x.lower == lower }); i >= 0 {
		l.list[i].twin(uri, key)
		return i, true
	}
	if len(l.list) == literalMax {
		return 0, false
	}
	l.list = append(l.list, literal{lower: lower, uri: uri, key: key, pat: []byte(lower)})
	return len(l.list) - 1, true
}

// spellEncoded adds the percent-encoded forms (see encodedForms) of the
// uris whose other spellings all fit, in the order they were added, in
// the room those leave, and while they take no more than encodedFormsMax
// bytes between them: so a content's uris take the same places as they
// would without these forms, and a uri left out of them only has its
// encoded forms looked for by the fallback (dropEncSep, dropEncScheme).
// Call it once, after the last add.
func (l *literals) spellEncoded() {
	for _, e := range l.encode {
		fits := encodedForms(e.uri, func(n int, form func() string) bool {
			if len(l.list) == literalMax || l.encodedBytes+n > encodedFormsMax {
				return false
			}
			l.encodedBytes += n
			i, ok := l.spell(form(), e.uri, e.key)
			if ok {
				for _, t := range e.twins {
					l.list[i].twin(t[0], t[1])
				}
			}
			return ok
		})
		if !fits {
			if strings.Contains(e.uri, "://") {
				l.dropEncSep = true
			}
			if e.never && ownScheme(e.uri) {
				l.dropEncScheme = true
			}
		}
	}
	l.encode = nil
}

// encodedFormsMax bounds the bytes of the percent-encoded forms a
// content's texts are searched for: each form of a long uri full of
// characters the encoders write apart can be several times its length,
// and is copied once more into the list (TestLiteralSpellingsBounded).
const encodedFormsMax = 64 << 10

// twin records uri, with key key, as spelled as e.uri is but for letter
// case. Past twinMax other keys it keeps one more, enough for
// literal.twin to mark the forms always withheld.
func (e *encodeURI) twin(uri, key string, never bool) {
	e.never = e.never || never
	if key == e.key || len(e.twins) > twinMax || slices.ContainsFunc(e.twins, func(t [2]string) bool { return t[1] == key }) {
		return
	}
	e.twins = append(e.twins, [2]string{uri, key})
}

// twin records that uri, with key key, has the spelling x has too.
func (x *literal) twin(uri, key string) {
	switch {
	case key == x.key || slices.Contains(x.altKeys, key):
	case len(x.altKeys) == twinMax:
		x.always = true
	default:
		x.alts = slices.Clip(append(x.alts, uri))
		x.altKeys = slices.Clip(append(x.altKeys, key))
	}
}

// drop records that uri, left out of the search, may be written anywhere.
// Only a uri holding "://" or a never one needs that.
func (l *literals) drop(uri string, never bool) {
	if strings.Contains(uri, "://") {
		l.dropSep = true
	}
	if never && ownScheme(uri) {
		l.dropScheme = true
	}
}

// neverScheme keeps the scheme of never uri when one comes before any
// "://" in it.
func (l *literals) neverScheme(uri string) {
	if ownScheme(uri) {
		l.addScheme(uri)
	}
}

// ownScheme reports whether uri does not start at its first "://", so
// that neither the bare reading nor withoutURIs starts where it does: it
// has none, or more than a scheme comes before it (as in "jar:https://").
func ownScheme(uri string) bool {
	i := strings.Index(uri, "://")
	return i < 0 || schemeStart(uri, i, 0) != 0
}

// addScheme keeps the scheme of uri.
func (l *literals) addScheme(uri string) {
	if !hasScheme(uri) {
		l.anywhere, l.noScheme = true, true
		return
	}
	s := uriform.LowerASCII(uri[:uriform.SchemeEnd(uri)+1])
	switch {
	case slices.Contains(l.schemes, s):
	case len(l.schemes) == schemeMax:
		l.anywhere = true
	default:
		l.schemes = append(l.schemes, s)
	}
}

// active reports whether a text may hold a place the search withholds.
func (l *literals) active() bool {
	return len(l.list) > 0 || l.dropSep || l.dropScheme || l.dropEncSep || l.dropEncScheme
}

// hasScheme reports whether uri starts with a scheme and its colon, and
// goes on past them.
func hasScheme(uri string) bool {
	i := uriform.SchemeEnd(uri)
	return i > 0 && i+1 < len(uri)
}

// splits reports whether the bare reading would not take uri whole: it
// has a scheme but no "://" (as a urn: or mailto: uri has), or holds
// white space, a double quote, a backtick, an angle bracket, a backslash
// (which the reading may take for a JSON escape), or a second "://", or
// its first "://" follows more than a scheme (as in "jar:https://"),
// where the reading would start late. A never on a string with no scheme
// (as "/") names no uri a text could write out.
func splits(uri string) bool {
	i := strings.Index(uri, "://")
	if i < 0 && hasScheme(uri) || i >= 0 && (schemeStart(uri, i, 0) != 0 || strings.Contains(uri[i+len("://"):], "://")) {
		return true
	}
	return strings.ContainsFunc(uri, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"`<>\\", r) })
}

// spellings returns uri as a text may write it: raw; as the contents of
// a JSON string the way common encoders write one: with or without
// escapes of <, > and & (Go's), of those and of = and ' (Gson's), of every
// non-ASCII character (Python's default) and of every slash (PHP's
// default), in each combination. Its percent-encoded forms are listed
// apart (see encodedForms), after every uri's spellings.
func spellings(uri string) []string {
	out := []string{uri}
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var escaped []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(uri) != nil {
			return out
		}
		s := strings.TrimSuffix(b.String(), "\n")
		escaped = append(escaped, s[1:len(s)-1])
	}
	escaped = append(escaped, gsonEscapes.Replace(escaped[1]))
	for _, s := range escaped {
		for _, t := range []string{s, asciiEscaped(s)} {
			add(t)
			add(strings.ReplaceAll(t, "/", `\/`))
		}
	}
	return out
}

// encodedForms calls add with the length of each form of uri
// percent-encoded whole, as a text may write it when a link carries it in
// its query, and a function that makes the form (in ASCII lower case, as
// the search holds it), until add returns false; it returns false then.
// add must call form when it returns true. The forms are those of each of
// percentEncoders (an encoder that would write what an earlier one does
// is left out), and, as a uri in the query of a uri that is itself in
// another's query is encoded once more at each level (the bare reading
// decodes a separator up to encodedSepMax times over), the first
// encoder's form encoded again, up to that depth.
func encodedForms(uri string, add func(n int, form func() string) bool) bool {
	first := percentEncoders[0]
	var level string // the form last made by the first encoder
	if !add(first.encodedLen(uri), func() string { level = first.write(uri, true); return level }) {
		return false
	}
	for i, e := range percentEncoders[1:] {
		// An encoder that would write what an earlier one did is left out.
		if slices.ContainsFunc(percentEncoders[:i+1], func(d percentEncoder) bool { return !e.differsFrom(d, uri) }) {
			continue
		}
		if !add(e.encodedLen(uri), func() string { return e.write(uri, true) }) {
			return false
		}
	}
	for range encodedSepMax - 1 {
		prev := level
		if !add(first.encodedLen(prev), func() string { level = first.write(prev, true); return level }) {
			return false
		}
	}
	return true
}

// encodedSpellings returns every form encodedForms makes of uri.
func encodedSpellings(uri string) []string {
	var out []string
	encodedForms(uri, func(_ int, form func() string) bool {
		out = append(out, form())
		return true
	})
	return out
}

// encodedLen returns the length of s as e writes it.
func (e percentEncoder) encodedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if !e.keeps(s[i]) && (s[i] != ' ' || !e.plus) {
			n += 2
		}
	}
	return n
}

// keeps reports whether e writes c as it is.
func (e percentEncoder) keeps(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' ||
		c < utf8.RuneSelf && strings.IndexByte(e.keep, c) >= 0
}

// differsFrom reports whether e writes s otherwise than d does.
func (e percentEncoder) differsFrom(d percentEncoder, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if e.keeps(c) != d.keeps(c) || c == ' ' && !e.keeps(c) && e.plus != d.plus {
			return true
		}
	}
	return false
}

// A percentEncoder writes a string percent-encoded as a whole, the way a
// common URL encoder does when one uri is put in another's query: every
// byte outside ASCII letters, digits, "-", "_", "." and keep becomes "%"
// and two hex digits, and a space becomes "+" when plus is set. The
// search ignores letter case, so the case of the hex digits does not
// matter.
type percentEncoder struct {
	keep string
	plus bool
}

// percentEncoders are the encoders whose output encodedForms offers.
// For most uris they write the same string, which is offered once.
var percentEncoders = []percentEncoder{
	{keep: "~"},                  // RFC 3986's unreserved set: Python's quote(s, safe=""), PHP's rawurlencode
	{keep: "~!*'()"},             // JavaScript's encodeURIComponent
	{keep: "~/"},                 // Python's quote(s), which keeps "/" by default
	{keep: "~", plus: true},      // Go's url.QueryEscape, Python's quote_plus
	{plus: true},                 // PHP's urlencode
	{keep: "*", plus: true},      // Java's URLEncoder
	{keep: "!*()", plus: true},   // .NET's WebUtility.UrlEncode and HttpUtility.UrlEncode
	{keep: "~!*'()", plus: true}, // encodeURIComponent with "+" for a space, as form posts write it
}

// encode returns s as e writes it.
func (e percentEncoder) encode(s string) string { return e.write(s, false) }

// write returns s as e writes it, or that in ASCII lower case, as the
// search holds it, when lower is set.
func (e percentEncoder) write(s string, lower bool) string {
	hex := "0123456789ABCDEF"
	if lower {
		hex = "0123456789abcdef"
	}
	var b strings.Builder
	b.Grow(e.encodedLen(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case e.keeps(c):
			if lower {
				c = asciiLower(c)
			}
			b.WriteByte(c)
		case c == ' ' && e.plus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// gsonEscapes are the characters Gson, Java's common encoder, escapes in a
// JSON string by default, beyond those every encoder escapes.
var gsonEscapes = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "=", `\u003d`, "'", `\u0027`)

// asciiEscaped writes each non-ASCII character of the JSON string
// contents s, and DEL, as a \u escape (two for one past the Basic
// Multilingual Plane), in lower-case hex, as Python's json.dumps does by
// default; the search ignores letter case.
func asciiEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && r != 0x7f {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

// withLiterals adds to spans, a text's spans in order, a span for each
// place within the text's first textScanMax bytes that writes out one of
// the spellings in l, and merges the spans that overlap (see mergeSpans).
// The rest of the text is withheld from the first place that may write
// out a uri left out of the search, and from the end of the checked part
// when the part past it may write out one of the uris without "://"
// listed.
func (l *literals) withLiterals(text string, spans []uriSpan) []uriSpan {
	scan := text[:min(len(text), textScanMax)]
	rest := l.firstDropped(text, scan)
	if rest < 0 && len(text) > len(scan) && l.mayName(text[len(scan):]) {
		rest = len(scan)
	}
	limit := len(scan) // places are looked for before it
	if rest >= 0 {
		limit = min(limit, rest)
	}
	// A spelling that starts before the limit is found whole, even when
	// it runs past it.
	longest := 0
	for _, lit := range l.list {
		longest = max(longest, len(lit.pat))
	}
	reach := text[:min(len(text), limit+longest-1)]
	var found []uriSpan
	var win []byte // the part of reach searched, in lower case
	for off := 0; off < limit && len(l.list) > 0; off += litWindow {
		end := min(limit, off+litWindow) // places in this part start before end
		win = lowerInto(win[:0], reach[off:min(len(reach), end+longest-1)])
		for x, lit := range l.list {
			for from := 0; ; {
				k := bytes.Index(win[from:], lit.pat)
				if k < 0 || off+from+k >= end {
					break
				}
				k += from
				if l.found == textObjectMax {
					// Past the count, the rest is withheld from the first
					// place of this spelling or of one not looked for yet
					// in this part (the parts before are searched).
					for _, later := range l.list[x+1:] {
						// One that starts before k, even if it ends past it.
						if i := bytes.Index(win[:min(len(win), k+len(later.pat)-1)], later.pat); i >= 0 {
							k = i
						}
					}
					return mergeSpans(spans, append(found, restSpan(text, off+k)))
				}
				l.found++
				found = appendSpan(found, uriSpan{start: off + k, end: off + k + len(lit.pat), uri: lit.uri, key: lit.key,
					alts: lit.alts, altKeys: lit.altKeys, bare: true, always: lit.always, twins: true})
				from = k + 1
			}
		}
	}
	if rest >= 0 {
		found = append(found, restSpan(text, rest))
	}
	if len(found) == 0 {
		return spans
	}
	return mergeSpans(spans, found)
}

// litWindow is how much of a text the search puts in lower case at a
// time: a copy of a whole long text took as much again as the text
// (TestTextSpansBoundedPerContent, literal-urn-members).
const litWindow = 64 << 10

// lowerInto appends s to dst in ASCII lower case.
func lowerInto(dst []byte, s string) []byte {
	n := len(dst)
	dst = append(dst, s...)
	for i := n; i < len(dst); i++ {
		dst[i] = asciiLower(dst[i])
	}
	return dst
}

// firstDropped returns where the checked part scan of text may first
// write out a uri left out of the search: its first "://" (dropSep) or
// percent-encoded one (dropEncSep), or the first place it writes one of
// l.schemes, also across the end of scan, with its colon raw or encoded
// (dropScheme) or encoded (dropEncScheme), or its start when l.anywhere
// is set; -1 when none.
func (l *literals) firstDropped(text, scan string) int {
	first := -1
	if l.dropSep {
		if k, _ := nextSep(scan, 0); k >= 0 {
			first = schemeStart(scan, k, 0)
		}
	}
	if l.dropEncSep {
		if k, n, _ := nextEncodedSep(scan, 0); n > 0 {
			if i := encodedSchemeStart(scan, k, 0); first < 0 || i < first {
				first = i
			}
		}
	}
	if !l.dropScheme && !l.dropEncScheme || scan == "" {
		return first
	}
	if l.anywhere {
		if l.dropScheme || l.noScheme {
			return 0
		}
		// Only encoded forms were left out, each of a uri with a scheme,
		// so each writes its colon encoded: the first encoded colon of
		// any scheme stands for them.
		if i := encodedColonPlace(text[:min(len(text), len(scan)+len(encodedColons[encodedSepMax])-1)]); i >= 0 && i < len(scan) && (first < 0 || i < first) {
			first = i
		}
		return first
	}
	from := 0 // the colon's depths looked for: raw ones too unless only encoded forms were left out
	if !l.dropScheme {
		from = 1
	}
	reach := schemeReach(l.schemes, from)
	if i := schemePlace(text[:min(len(text), len(scan)+reach-1)], l.schemes, from); i >= 0 && i < len(scan) && (first < 0 || i < first) {
		first = i
	}
	return first
}

// mayName reports whether part, the part of a text past what is checked,
// may write out one of the never uris with a scheme before any "://".
func (l *literals) mayName(part string) bool {
	if l.anywhere && l.noScheme {
		return part != ""
	}
	if l.anywhere {
		// Too many schemes to list: any place with a colon, raw or
		// encoded, may start one.
		return strings.IndexByte(part, ':') >= 0 || encodedColonPlace(part) >= 0
	}
	return len(l.schemes) > 0 && schemePlace(part, l.schemes, 0) >= 0
}

// schemePlace returns where s first writes one of schemes (each in lower
// case, with its colon) in any ASCII letter case, or -1: written raw
// (depth 0) or percent-encoded once, twice or three times over, as a uri
// put in another's query is ("%3A", "%253A"; a "+" in the scheme as
// "%2B", "%252B"), at each depth from from on. It reads s once from colon
// to colon and, when from is at most encodedSepMax, once from "%" to "%"
// (encodedChar reads each encoded colon's depth), and copies nothing but
// the encoded scheme names.
func schemePlace(s string, schemes []string, from int) int {
	// names[d] are the schemes' names as written before a colon encoded d
	// times over; nil below from.
	var names [encodedSepMax + 1][]string
	for d := from; d <= encodedSepMax; d++ {
		for _, sc := range schemes {
			f := encodedScheme(sc, d)
			names[d] = append(names[d], f[:len(f)-len(encodedColons[d])])
		}
	}
	first := -1
	if from == 0 {
		first = schemeBefore(s, ':', &names)
	}
	if i := schemeBefore(s, '%', &names); i >= 0 && (first < 0 || i < first) {
		first = i
	}
	return first
}

// encodedColons and encodedPluses are a colon and a plus sign encoded
// zero to encodedSepMax times over, in lower case.
var (
	encodedColons = [encodedSepMax + 1]string{":", "%3a", "%253a", "%25253a"}
	encodedPluses = [encodedSepMax + 1]string{"+", "%2b", "%252b", "%25252b"}
)

// encodedColonPlace returns where s first writes a colon percent-encoded
// once to encodedSepMax times over, in any letter case, moved back to the
// start of the scheme before it; -1 when none.
func encodedColonPlace(s string) int {
	for i := nextByte(s, 0, '%'); i >= 0; i = nextByte(s, i+1, '%') {
		if end, _ := encodedChar(s, i, ':', "3a", false); end >= 0 {
			return schemeStart(s, i, 0)
		}
	}
	return -1
}

// encodedScheme returns the scheme sc (lower case, with its colon)
// percent-encoded depth times over.
func encodedScheme(sc string, depth int) string {
	name := strings.ReplaceAll(sc[:len(sc)-1], "+", encodedPluses[depth])
	return name + encodedColons[depth]
}

// schemeReach returns the length of the longest of schemes encoded at a
// depth from from on: a place that starts before the end of a part can
// run that far past it.
func schemeReach(schemes []string, from int) int {
	n := 0
	for _, sc := range schemes {
		for depth := from; depth <= encodedSepMax; depth++ {
			n = max(n, len(encodedScheme(sc, depth)))
		}
	}
	return n
}

// schemeBefore returns where s first writes one of the names[d] right
// before a colon written d times encoded, going from pivot to pivot: from
// ":" for the raw colon (depth 0), or from "%" for an encoded one, whose
// depth encodedChar reads; -1 for none.
func schemeBefore(s string, pivot byte, names *[encodedSepMax + 1][]string) int {
	for c := nextByte(s, 0, pivot); c >= 0; c = nextByte(s, c+1, pivot) {
		depth := 0
		if pivot == '%' {
			end, d := encodedChar(s, c, ':', "3a", false)
			if end < 0 {
				continue
			}
			depth = d
		}
		first := -1
		for _, name := range names[depth] {
			// A longer scheme that ends at this colon starts earlier; no
			// scheme ending at a later colon can (a scheme holds no colon,
			// raw or encoded).
			if i := c - len(name); i >= 0 && (first < 0 || i < first) && asciiLower(s[i]) == name[0] && strings.EqualFold(s[i:c], name) {
				first = i
			}
		}
		if first >= 0 {
			return first
		}
	}
	return -1
}

// asciiLower returns c in lower case if it is an ASCII letter.
func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// mergeSpans returns the spans of a and b in text order, each group that
// overlaps made one span over all of it. A merged span keeps every
// reading of its members, so it is withheld when any of them is; it is
// bare unless a "uri" member alone spans the whole of it, whose quotes the
// replacement then keeps.
//
// a is already in that form (no two of its spans overlap) and is returned
// as it is when b is empty. Otherwise the result is one new slice, merged
// in place: each group is read before its span is written, at or before
// the group's first member (TestTextSpansBoundedPerContent: cloning a,
// appending b and building the result anew took several times the spans).
func mergeSpans(a, b []uriSpan) []uriSpan {
	if len(b) == 0 {
		return a
	}
	all := make([]uriSpan, 0, len(a)+len(b))
	all = append(append(all, a...), b...)
	slices.SortStableFunc(all, func(x, y uriSpan) int { return x.start - y.start })
	w := 0
	for i := 0; i < len(all); {
		g := all[i]
		j := i + 1
		for ; j < len(all) && all[j].start < g.end; j++ {
			g.end = max(g.end, all[j].end)
		}
		if j > i+1 {
			g = merged(all[i:j], g.end)
		}
		all[w] = g
		w++
		i = j
	}
	return all[:w]
}

// mergeListMax is how many readings a merged span looks through as a
// list before it keeps a set of them.
const mergeListMax = 64

// merged is one span over members, which overlap, ending at end.
func merged(members []uriSpan, end int) uriSpan {
	g := uriSpan{start: members[0].start, end: end, bare: true, twins: true}
	// seen holds the readings kept, once they are many: a group of
	// thousands of glued uris has as many readings, and looking each up
	// in the list took time growing with their square.
	var seen map[string]bool
	for _, m := range members {
		if !m.bare && !m.rest && m.start == g.start && m.end == end {
			g.bare = false
		}
		g.rest = g.rest || m.rest
		g.always = g.always || m.always
		g.twins = g.twins && m.twins
		for i, u := range append([]string{m.uri}, m.alts...) {
			key := m.key
			if i > 0 {
				key = m.altKeys[i-1]
			}
			if u == "" || key == "" {
				// Not read: a uri too long for a never to name, or one
				// read only as its escapes decode. Another member may
				// read the same uri as written.
				continue
			}
			switch {
			case g.uri == "":
				g.uri, g.key = u, key
			case u == g.uri:
			case seen == nil && len(g.alts) < mergeListMax:
				if !slices.Contains(g.alts, u) {
					g.alts = append(g.alts, u)
					g.altKeys = append(g.altKeys, key)
				}
			default:
				if seen == nil {
					seen = make(map[string]bool, 2*len(g.alts))
					for _, a := range g.alts {
						seen[a] = true
					}
				}
				if !seen[u] {
					seen[u] = true
					g.alts = append(g.alts, u)
					g.altKeys = append(g.altKeys, key)
				}
			}
		}
	}
	return g
}
