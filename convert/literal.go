package convert

import (
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
// each such uri as it is written, in ASCII letter case or another, raw or
// as the contents of a JSON string.

// literalMax bounds the spellings a content's texts are searched for (a
// uri has up to thirteen; most have three or four). A
// content that names more splitting uris than their spellings fill has
// the part of each text from its first uri on withheld, as a text past the
// reading's bounds has (see restSpan): from its first "://", or from the
// first place it writes the scheme of one of those uris that lack "://".
const literalMax = 128

// schemeMax bounds the schemes of uris without "://" kept for that
// fallback; a content naming such uris of more schemes, or one with no
// scheme, has every text past literalMax withheld whole.
const schemeMax = 16

// literal is one spelling of a splitting uri the content names, in lower
// case, with the uri and its canonical key.
type literal struct {
	lower, uri, key string
}

// literals collects the spellings of the uris a content names (with their
// canonical keys) that the bare reading would split. over is set when
// there are more than literalMax.
type literals struct {
	list []literal
	over bool
	// schemes holds the schemes of the uris without "://" the content
	// names, in lower case and each with its colon, up to schemeMax;
	// anywhere is set past that, or for such a uri with no scheme (one
	// that splits(), holding a space). They mark where a text may start
	// writing one out, once over is set.
	schemes  []string
	anywhere bool
	// found counts the places the content's texts write out a spelling,
	// up to textObjectMax between them: past it, the rest of a text from
	// its next such place is withheld.
	found int
}

// add takes uri, with canonical key key, when the bare reading would not
// read it whole.
func (l *literals) add(uri, key string) {
	if uri == "" || len(uri) > maxURIBytes || !splits(uri) {
		return
	}
	if !strings.Contains(uri, "://") {
		l.addScheme(uri)
	}
	for _, s := range spellings(uri) {
		lower := uriform.LowerASCII(s)
		if slices.ContainsFunc(l.list, func(x literal) bool { return x.lower == lower }) {
			continue
		}
		if len(l.list) == literalMax {
			l.over = true
			return
		}
		l.list = append(l.list, literal{lower: lower, uri: uri, key: key})
	}
}

// addScheme keeps the scheme of uri, a uri without "://".
func (l *literals) addScheme(uri string) {
	if !hasScheme(uri) {
		l.anywhere = true
		return
	}
	s := uriform.LowerASCII(uri[:strings.IndexByte(uri, ':')+1])
	switch {
	case slices.Contains(l.schemes, s):
	case len(l.schemes) == schemeMax:
		l.anywhere = true
	default:
		l.schemes = append(l.schemes, s)
	}
}

// hasScheme reports whether uri starts with a scheme and its colon, and
// goes on past them.
func hasScheme(uri string) bool {
	i := strings.IndexByte(uri, ':')
	return i > 0 && i+1 < len(uri) && isLetter(uri[0]) && schemeStart(uri, i, 0) == 0
}

// isLetter reports whether c is an ASCII letter, with which a scheme
// starts.
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

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

// spellings returns uri as a text may write it: raw, and as the contents
// of a JSON string the way common encoders write one: with or without
// escapes of <, > and & (Go's), of those and of = and ' (Gson's), of every
// non-ASCII character (Python's default) and of every slash (PHP's
// default), in each combination.
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

// gsonEscapes are the characters Gson, Java's common encoder, escapes in a
// JSON string by default, beyond those every encoder escapes.
var gsonEscapes = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "=", `\u003d`, "'", `\u0027`)

// asciiEscaped writes each non-ASCII character of the JSON string
// contents s as a \u escape (two for one past the Basic Multilingual
// Plane), in lower-case hex; the search ignores letter case.
func asciiEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
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
func (l *literals) withLiterals(text string, spans []uriSpan) []uriSpan {
	scan := text
	if len(scan) > textScanMax {
		scan = scan[:textScanMax]
	}
	if l.over {
		if k := l.firstPlace(text, scan); k >= 0 {
			return mergeSpans(spans, []uriSpan{restSpan(text, k)})
		}
		return spans
	}
	// A spelling that starts within the checked part is found whole, even
	// when it runs past its end.
	longest := 0
	for _, lit := range l.list {
		longest = max(longest, len(lit.lower))
	}
	reach := text[:min(len(text), len(scan)+longest-1)]
	var found []uriSpan
	var lower string // reach in lower case, made at the first need
	for x, lit := range l.list {
		if lower == "" {
			lower = uriform.LowerASCII(reach)
		}
		for from := 0; ; {
			k := strings.Index(lower[from:], lit.lower)
			if k < 0 || k+from >= len(scan) {
				break
			}
			k += from
			if l.found == textObjectMax {
				// Past the count, the rest is withheld from the first
				// place of this spelling or of one not looked for yet.
				for _, later := range l.list[x+1:] {
					// One that starts before k, even if it ends past it.
					if i := strings.Index(lower[:min(len(lower), k+len(later.lower)-1)], later.lower); i >= 0 {
						k = i
					}
				}
				return mergeSpans(spans, append(found, restSpan(text, k)))
			}
			l.found++
			found = append(found, uriSpan{start: k, end: k + len(lit.lower), uri: lit.uri, key: lit.key, bare: true})
			from = k + 1
		}
	}
	if len(found) == 0 {
		return spans
	}
	return mergeSpans(spans, found)
}

// firstPlace returns where the checked part scan of text may first write
// out a uri the content names, for a content past literalMax: its first
// "://", or the first place it writes one of l.schemes (also across the
// end of scan), or its start when l.anywhere is set; -1 when it writes
// none of those.
func (l *literals) firstPlace(text, scan string) int {
	if l.anywhere {
		if scan == "" {
			return -1
		}
		return 0
	}
	first := -1
	if k, _ := nextSep(scan, 0); k >= 0 {
		first = schemeStart(scan, k, 0)
	}
	if len(l.schemes) == 0 {
		return first
	}
	longest := 0
	for _, s := range l.schemes {
		longest = max(longest, len(s))
	}
	lower := uriform.LowerASCII(text[:min(len(text), len(scan)+longest-1)])
	for _, s := range l.schemes {
		if i := strings.Index(lower, s); i >= 0 && i < len(scan) && (first < 0 || i < first) {
			first = i
		}
	}
	return first
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
	g := uriSpan{start: members[0].start, end: end, bare: true}
	// seen holds the readings kept, once they are many: a group of
	// thousands of glued uris has as many readings, and looking each up
	// in the list took time growing with their square.
	var seen map[string]bool
	for _, m := range members {
		if !m.bare && !m.rest && m.start == g.start && m.end == end {
			g.bare = false
		}
		g.rest = g.rest || m.rest
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
