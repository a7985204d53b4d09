package convert

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/internal/uriform"
)

// A server that returns JSON as text (a tool whose result is serialized
// into a text block) may write a reference into that text. Its never is
// still the server's testimony, so ingestion reads the text for never
// claims, and the views withhold the uri where the text names it. Only
// never is taken from text: no ref, no name, nothing that would widen what
// the model sees.
//
// The reading is bounded so that no text can make it expensive:
//
//   - a text is read only when it opens, after white space, with an object
//     or an array; any other text is just text. The values after the
//     first are read too, as in JSON lines;
//   - at most textScanMax bytes of a text are read;
//   - objects and arrays nested deeper than textDepthMax are skipped
//     without being read;
//   - the reading stops after textObjectMax objects;
//   - a content's texts keep at most textObjectMax non-empty "uri" values
//     for the views between them (each text once had that bound of its
//     own, and a content of many texts held it as many times over); past
//     it, the rest of a text is withheld from the first value left out
//     (whether it names a uri the content calls never is not known, nor
//     whether its object calls it never), and their canonical forms
//     count against the bytes of the budget below;
//   - the uris a content's texts write out bare are read while the
//     budget those texts share lasts (see readingBudget): textObjectMax
//     uris, textReadingMax readings of them, textKeyBytesMax bytes of
//     readings whose canonical form takes parsing, and as many bytes
//     of percent-encoded uris decoded;
//   - at most textMarkMax uris that no block of the content names are
//     marked from the texts of one content.
//
// A never past these bounds is not seen. Within them the reading is
// tolerant: it takes what reads as an object holding a "uri" string and a
// "disposition" of "never", either its own or one in its "annotations" or
// "_meta" object, and an object whose "resource" member holds the uri (an
// embedded resource), wherever the text nests it.
//
// Withholding reaches further than reading: besides the "uri" members,
// every uri a text writes out with its scheme and "://", or with that
// "://" percent-encoded, is a place the views withhold a uri the content
// calls never or a server marked, also in a text that is not JSON (see
// withBareURIs and encodedURIs).
const (
	textScanMax   = 4 << 20
	textDepthMax  = 64
	textObjectMax = 1 << 14
	textMarkMax   = 256
	// textReadingMax bounds the readings of bare uris (see bareReadings)
	// a content's texts take between them, and textKeyBytesMax the bytes
	// of those whose canonical form had to be made anew rather than being
	// the reading itself, which costs several times the reading's length
	// at ingestion and again in each view. A text of short uris each
	// ending in punctuation made ingesting allocate a hundred times the
	// text and take 0.9 s for 4 MiB; one of uris as long as a never can
	// name, with a character the canonical form escapes at each cut, made
	// ingesting and each view allocate a gibibyte while the bound counted
	// forms, not bytes (TestBareReadingsBounded). A listing of ordinary
	// uris, about ten readings each and nearly all canonical already,
	// takes more than ten thousand before it meets a bound.
	textReadingMax  = 1 << 17
	textKeyBytesMax = 1 << 20
)

// withheldURI replaces, in a text the views show, the JSON string of a uri
// the content calls never or a server marked. It is itself a JSON string,
// so a JSON text stays JSON.
const withheldURI = `"[uri withheld]"`

// withheldBareURI replaces a bare uri (see withBareURIs), which stands
// inside a string or in prose, so it carries no quotes of its own.
const withheldBareURI = "[uri withheld]"

// withheldRest replaces the part of a text past what the reading checks
// for uris, when that part names one.
const withheldRest = "[the rest of this text is withheld: it names more uris, or is longer, than this host checks]"

// uriSpan is one uri a text names: a "uri" string member of an object in
// the text's JSON (the byte offsets of its quoted literal, the uri it
// decodes to and that uri's canonical form), or, when bare is set, a uri
// the text writes out anywhere else (see withBareURIs).
type uriSpan struct {
	start, end int
	uri, key   string
	bare       bool
	// alts are other readings of a bare uri, with their canonical forms
	// (see bareReadings). Any of them may be the uri a never names.
	alts, altKeys []string
	// rest is set on the span that covers the part of a text past what
	// the reading checks for uris, when that part names one: always
	// withheld, since whether a never names it is not known.
	rest bool
	// always is set on a place of a spelling more uris share than the
	// span can name (see twinMax): withheld too. twins is set when the
	// other readings are only uris spelled the same but for letter case.
	always, twins bool
}

// bareCandidatesMax bounds how many cuts of one bare uri are read from its
// end, and bareFirstCuts how many from its start.
const (
	bareCandidatesMax = 16
	bareFirstCuts     = 4
)

// withBareURIs adds to spans, the "uri" members of a text's JSON in text
// order, a bare span for each uri the text writes out elsewhere: a scheme
// and "://", up to white space, a double quote, a backtick, an angle
// bracket or the next scheme, wherever it stands (in prose, under another
// key, in JSON the reading does not reach). The views then withhold a
// never uri there too. It reads the first textScanMax bytes of the text
// and keeps bare spans and their readings while left, the budget the
// content's texts share, allows. When the text goes
// on past a bound and the rest names a uri, or a uri runs across the end
// of what is read, a last span covers the rest from there.
func withBareURIs(text string, spans []uriSpan, left *readingBudget) []uriSpan {
	scan := text
	if len(scan) > textScanMax {
		scan = scan[:textScanMax]
	}
	encoded := encodedURIs(text, scan, left)
	if len(text) > len(scan) {
		// A percent-encoded separator across the end of what is read, or
		// past it, starts the rest, as a plain one does below.
		if at := encodedPast(text, len(scan)); at >= 0 {
			encoded = append(encoded, restSpan(text, at))
		}
	}
	if !hasSep(text) {
		return mergeSpans(spans, encoded)
	}
	// The bare spans are merged with the "uri" members at the end: a
	// member may hold more than its uri ("see https://…", two uris), and
	// its own reading is of the whole string. A bare uri that is a
	// member's whole value is left to the member.
	bare := encoded
	j, from := 0, 0 // j: the first member that does not end before the uri
	sep := newSeps(scan)
	for {
		k, n := sep.next(from)
		if k < 0 {
			break
		}
		start := schemeStart(scan, k, from)
		end, next, shorter := bareEnd(scan, k+n)
		from = next
		if start == k {
			from = k + n
			continue // no scheme before the "://"
		}
		for j < len(spans) && spans[j].end <= start {
			j++
		}
		if j < len(spans) && spans[j].start+1 == start && spans[j].end-1 == end && !spans[j].rest &&
			!strings.Contains(spans[j].uri, `\`) && gluedWeb(scan[start:k]) == 0 {
			// A "uri" member's whole value, which the member's own
			// reading reads as well: it holds no escape left after one
			// decoding, and no word glued before its scheme.
			continue
		}
		if end == len(scan) && len(text) > len(scan) {
			// The uri goes on past what is read: what a never names is
			// not known.
			return mergeSpans(spans, append(bare, restSpan(text, start)))
		}
		uri := scan[start:end]
		// The budget is looked at before the readings are made, so a
		// content whose budget is spent pays for none of them.
		if !left.open() {
			return mergeSpans(spans, append(bare, restSpan(text, start)))
		}
		for i := range shorter {
			shorter[i] -= start
		}
		sp, ok := readBare(start, end, uri, k-start, shorter, left)
		if !ok {
			return mergeSpans(spans, append(bare, restSpan(text, start)))
		}
		bare = appendSpan(bare, sp)
	}
	if len(text) > len(scan) {
		// A separator across the end of what is read starts the rest at
		// its scheme; one past it, at the end of what is read.
		edge := len(scan) - min(sepMaxLen-1, len(scan))
		if k, _ := nextSep(text[:min(len(text), len(scan)+sepMaxLen-1)], edge); k >= 0 && k < len(scan) {
			bare = append(bare, restSpan(text, schemeStart(text, k, from)))
		} else if hasSep(text[len(scan):]) {
			bare = append(bare, restSpan(text, len(scan)))
		}
	}
	return mergeSpans(spans, bare)
}

// encodedPast returns where the part of text past its first n bytes,
// which are read, must be withheld for a percent-encoded uri: one whose
// separator (see encodedSep) runs across that end, or whose separator is
// read but whose body runs on to that end (the reading saw only its
// start), from its scheme; one whose separator comes after it, from n;
// -1 for none. A uri that ends in the part read is left to encodedURIs.
func encodedPast(text string, n int) int {
	// The last stretch before n free of what ends an encoded uri (white
	// space, a quote, a backtick, an angle bracket, "#"; "&" ends one
	// too unless its colon is raw, so it does not count here).
	lo := max(0, n-encodedMax)
	from := lo
	if b := strings.LastIndexAny(text[lo:n], " \t\n\r\v\f\"'`<>#"); b >= 0 {
		from = lo + b + 1
	}
	edge := max(from, n-encodedSepMaxLen)
	if k, m, _ := nextEncodedSep(text[:n], from); m > 0 {
		return min(n, encodedSchemeStart(text, k, from))
	}
	for k, m, _ := nextEncodedSep(text, edge); m > 0; k, m, _ = nextEncodedSep(text, k+m) {
		switch {
		case k >= n:
			return n
		case k+m > n:
			return min(n, encodedSchemeStart(text, k, from))
		}
	}
	return -1
}

// encodedSepMaxLen is the longest an encoded separator can be: a colon
// and two slashes, each encoded encodedSepMax times over, and before each
// slash sepEscMax backslashes as long.
const encodedSepMaxLen = (1 + 2*(sepEscMax+1)) * (1 + 2*encodedSepMax)

// appendSpan appends sp to spans, doubling their room when it is full.
// append grows a long slice by a quarter at a time, so the slices it left
// behind added up to some five times the spans kept, over eight times
// the text for a text of thousands of short uris
// (TestTextSpansBoundedPerContent); doubling leaves at most twice.
func appendSpan(spans []uriSpan, sp uriSpan) []uriSpan {
	if len(spans) == cap(spans) {
		spans = slices.Grow(spans, max(4, len(spans)))
	}
	return append(spans, sp)
}

// encodedSepMax bounds how many times over encodedSep takes a separator
// to be percent-encoded: a url in a redirect target's query, itself in
// another's, is three deep.
const encodedSepMax = 3

// encodedChar reads at offset j of s the character whose two hexadecimal
// digits are hex, percent-encoded once ("%3A"), twice ("%253A") or up to
// encodedSepMax times, the digits in either letter case; or the raw
// character c when raw is set. It returns the offset after it and how
// many times over it was encoded, or -1.
func encodedChar(s string, j int, c byte, hex string, raw bool) (end, depth int) {
	if j < len(s) && s[j] == c {
		if raw {
			return j + 1, 0
		}
		return -1, 0
	}
	if j >= len(s) || s[j] != '%' {
		return -1, 0
	}
	j++
	for depth = 1; depth <= encodedSepMax; depth++ {
		if j+2 <= len(s) && strings.EqualFold(s[j:j+2], hex) {
			return j + 2, depth
		}
		if j+2 > len(s) || s[j:j+2] != "25" {
			return -1, 0
		}
		j += 2 // "%25" is an encoded "%": the digits follow
	}
	return -1, 0
}

// encodedSep reports the percent-encoded "://" at offset i of s, where
// s[i] is a "%": one whose ":" is encoded there, or whose ":" is raw just
// before i and whose first "/" is encoded there. Each of its three
// characters is raw or encoded (see encodedChar), one at least encoded.
// It returns where it starts, its length and how many times over it was
// encoded (the most of its characters); a length of 0 for none.
func encodedSep(s string, i int) (start, n, depth int) {
	j, d := encodedChar(s, i, ':', "3a", false)
	start = i
	if j < 0 {
		if i == 0 || s[i-1] != ':' {
			return 0, 0, 0
		}
		j, start = i, i-1
	}
	depth = d
	for range 2 {
		// A slash JSON escaped before it was encoded (PHP's json_encode
		// escapes every slash) has encoded backslashes before it.
		for b := 0; b < sepEscMax; b++ {
			e, d := encodedChar(s, j, '\\', "5c", false)
			if e < 0 {
				break
			}
			j, depth = e, max(depth, d)
		}
		if j, d = encodedChar(s, j, '/', "2f", true); j < 0 {
			return 0, 0, 0
		}
		depth = max(depth, d)
	}
	return start, j - start, depth
}

// encodedURIs returns a bare span for each uri the text writes
// percent-encoded within its first textScanMax bytes, scan (see
// encodedSep): from its scheme up to white space, a quote, a backtick,
// an angle bracket, an "&" or a "#", which end a query parameter's value,
// or the next such separator. Its readings are those of the uri it
// decodes to, decoded as many times as its separator was encoded and
// ended at what ends a bare uri, with a cut at each "+" (a form's
// encoded space) besides; the views then withhold the span, and the uri
// around it, where one of them is a never uri. Spans are kept while the
// budget left allows, and for the first textObjectMax separators; past
// either, a last span covers the rest of text from there, as
// withBareURIs does.
func encodedURIs(text, scan string, left *readingBudget) []uriSpan {
	var out []uriSpan
	k, n, depth := nextEncodedSep(scan, 0)
	prev := 0 // a scheme starts no earlier than the previous separator
	for read := 0; n > 0; read++ {
		start := encodedSchemeStart(scan, k, prev)
		if read == textObjectMax || start < k && !left.open() {
			// More separators than are read, or no budget left: the
			// rest, from here, counts as unchecked.
			return append(out, restSpan(text, start))
		}
		prev = k + n
		nk, nn, ndepth := nextEncodedSep(scan, k+n)
		if start < k {
			// The uri runs on to the next separator encoded no deeper
			// than its own: one encoded deeper is a url in its query.
			limit := min(len(scan), start+encodedMax)
			for lk, ln, ld := nk, nn, ndepth; ln > 0 && lk < limit; lk, ln, ld = nextEncodedSep(scan, lk+ln) {
				if ld <= depth {
					limit = lk
					break
				}
			}
			sp, ok, spent := encodedSpan(scan, start, k, k+n, limit, depth, left)
			if spent {
				return append(out, restSpan(text, start))
			}
			if ok {
				out = append(out, sp)
			}
		}
		k, n, depth = nk, nn, ndepth
	}
	return out
}

// nextEncodedSep returns the first encoded separator of s at or after
// from (see encodedSep), or a length of 0.
func nextEncodedSep(s string, from int) (k, n, depth int) {
	for i := nextByte(s, from, '%'); i >= 0; i = nextByte(s, i+1, '%') {
		if k, n, depth = encodedSep(s, i); n > 0 && k >= from {
			return k, n, depth
		}
	}
	return 0, 0, 0
}

// encodedSpan reads the encoded uri of scan that starts at start and
// whose separator runs from sep to sepEnd, up to limit: ok reports a span kept,
// spent that the budget could not take its readings.
func encodedSpan(scan string, start, sep, sepEnd, limit, depth int, left *readingBudget) (sp uriSpan, ok, spent bool) {
	// A query parameter's value ends at "&"; a uri escaped as a path
	// segment (its ":" raw, as Go's url.PathEscape writes it) keeps its
	// "&" and "=" raw, and runs on past them.
	stops := " \t\n\r\v\f\"'`<>&#"
	if scan[sep] == ':' {
		stops = " \t\n\r\v\f\"'`<>#"
	}
	end := sepEnd
	for end < limit && strings.IndexByte(stops, scan[end]) < 0 {
		end++
	}
	uri, ok := percentDecodedN(scan[start:end], depth, maxURIBytes+1)
	left.decoded -= len(uri)  // counted whether or not it is read
	uk, un := nextSep(uri, 0) // "://", or with its slashes JSON-escaped
	if !ok || uk <= 0 {
		return uriSpan{}, false, false
	}
	if e, _, _ := bareEnd(uri, uk+un); e < len(uri) {
		uri = uri[:e] // an encoded space, quote or angle bracket
	}
	if sp, ok = readBare(start, end, uri, uk, plusCuts(uri, uk), left); !ok {
		return uriSpan{}, false, true
	}
	return sp, true, false
}

// readBare makes the bare span start:end of a text for the uri it reads
// there, u, whose separator is at offset k of u, with its readings (see
// bareReadings, which shorter is passed to) and their canonical forms.
// It reports false, and takes nothing, when the budget left cannot take
// a span and its readings.
func readBare(start, end int, u string, k int, shorter []int, left *readingBudget) (uriSpan, bool) {
	alts, raw := bareReadings(u, k, shorter)
	if !left.take(1 + len(alts)) { // a span, and its readings
		return uriSpan{}, false
	}
	sp := uriSpan{start: start, end: end, uri: u, bare: true, alts: alts}
	if raw && len(u) <= maxURIBytes {
		sp.key = left.key(u)
	}
	if len(alts) > 0 {
		sp.altKeys = make([]string, len(alts))
		for i, alt := range alts {
			sp.altKeys[i] = left.key(alt)
		}
	}
	return sp, true
}

// nextByte is the offset of the next c in s at or after i, or -1.
func nextByte(s string, i int, c byte) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return -1
}

// encodedSchemeStart is schemeStart for an encoded separator at k: a run
// of scheme characters right after a "%" begins with that escape's
// digits ("%3Dwss" is an encoded "=" before "wss"), which are no part of
// the scheme.
func encodedSchemeStart(s string, k, from int) int {
	start := schemeStart(s, k, from)
	if start == 0 || s[start-1] != '%' {
		return start
	}
	j := start
	for j+2 <= k && s[j:j+2] == "25" {
		j += 2
	}
	if j+2 <= k && hexDigit(s[j]) >= 0 && hexDigit(s[j+1]) >= 0 {
		return j + 2
	}
	return start
}

// plusCuts returns where the decoded uri u, whose "://" is at offset k,
// may end at a "+" that a form wrote for a space: the first and the last
// few.
func plusCuts(u string, k int) []int {
	var cuts []int
	for p := k + len("://"); p < len(u) && len(cuts) < bareFirstCuts; p++ {
		if u[p] == '+' {
			cuts = append(cuts, p)
		}
	}
	for p, n := len(u)-1, 0; p > k+len("://") && n < bareFirstCuts; p-- {
		if u[p] == '+' && !slices.Contains(cuts, p) {
			cuts = append(cuts, p)
			n++
		}
	}
	return cuts
}

// encodedMax bounds the bytes of an encoded uri encodedURIs reads: a
// never names no longer one, encoded three times (seven bytes a byte).
const encodedMax = 7 * maxURIBytes

// percentDecodedN returns s with each "%" and two hexadecimal digits
// decoded, depth times over, in one buffer: at most max bytes of it, up
// to the first byte that is not UTF-8 (text in another encoding, or
// bytes, may follow a uri in the same value). ok is false when s holds
// no escape.
func percentDecodedN(s string, depth, max int) (string, bool) {
	b := make([]byte, 0, min(len(s), max))
	n := 0
	for i := 0; i < len(s) && len(b) < max; i++ {
		if s[i] == '%' && i+2 < len(s) && hexDigit(s[i+1]) >= 0 && hexDigit(s[i+2]) >= 0 {
			b = append(b, byte(hexDigit(s[i+1])<<4|hexDigit(s[i+2])))
			i += 2
			n++
			continue
		}
		b = append(b, s[i])
	}
	if n == 0 {
		return "", false
	}
	for range depth - 1 { // the further levels, decoded in place
		j := 0
		for i := 0; i < len(b); i++ {
			c := b[i]
			if c == '%' && i+2 < len(b) && hexDigit(b[i+1]) >= 0 && hexDigit(b[i+2]) >= 0 {
				c = byte(hexDigit(b[i+1])<<4 | hexDigit(b[i+2]))
				i += 2
			}
			b[j] = c
			j++
		}
		b = b[:j]
	}
	valid := 0
	for valid < len(b) {
		r, size := utf8.DecodeRune(b[valid:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		valid += size
	}
	return string(b[:valid]), true
}

// gluedWeb returns the length of the "http" or "https" that scheme ends
// in after other characters (a word glued before a uri), from which
// bareReadings reads a shorter uri; 0 when it does not.
func gluedWeb(scheme string) int {
	scheme = strings.ToLower(scheme)
	for _, s := range []string{"https", "http"} {
		if len(scheme) > len(s) && strings.HasSuffix(scheme, s) {
			return len(s)
		}
	}
	return 0
}

// readingBudget is what is left of the bare uris a content's texts may
// keep (textObjectMax between them: each costs a span of some hundred
// bytes, and a content of many texts of short uris made ingesting
// allocate 26 times its texts while each text had a bound of its own), of
// their readings (textReadingMax), and of the bytes of readings whose
// canonical form had to be made by parsing them (textKeyBytesMax), and
// of the bytes percent-encoded uris decode to (textKeyBytesMax too: each
// is read as a bare uri is, and spans encoded at several depths overlap,
// so one stretch of text may be decoded more than once).
type readingBudget struct{ spans, readings, keyBytes, decoded int }

func newReadingBudget() readingBudget {
	return readingBudget{spans: textObjectMax, readings: textReadingMax, keyBytes: textKeyBytesMax, decoded: textKeyBytesMax}
}

// open reports whether another bare uri may be read.
func (b *readingBudget) open() bool {
	return b.spans > 0 && b.readings > 0 && b.keyBytes > 0 && b.decoded > 0
}

// take reports whether a bare uri with n readings in all fits, and takes
// it if so. The readings of one uri may overrun the bytes left by their
// own cost: at most about sixty readings of maxURIBytes each.
func (b *readingBudget) take(n int) bool {
	if b.spans == 0 || n > b.readings || b.keyBytes <= 0 {
		return false
	}
	b.spans--
	b.readings -= n
	return true
}

// key returns the canonical form of reading r, counting the bytes of r or
// of the form, the longer, and parseCost, when making it parsed r (the
// work grows with both, and escaping makes the form up to three times as
// long), and the form's bytes when it is a copy of r rather than a part.
func (b *readingBudget) key(r string) string {
	key, parsed := uriform.Key(r)
	switch {
	case parsed:
		b.keyBytes -= max(len(r), len(key)) + parseCost
	case key != r && !strings.HasPrefix(r, key):
		b.keyBytes -= len(key) // a copy, not a part of r
	}
	return key
}

// parseCost is what making a canonical form costs beyond the bytes of the
// uri, in bytes of the budget: parsing a URL allocates some hundreds of
// bytes however short it is (170-520 for short ones, measured), and
// sixteen thousand short uris of a form that needs parsing made ingesting
// allocate nine times their text. It was 32 until "uri" members that
// repeat a uri were keyed once: the budget they then left let the bare
// reading parse more (TestTextSpansBoundedPerContent/uri-members-parsed:
// 8.8 times the text at 32, 6.9 at most at 128).
const parseCost = 128

// maxURIBytes is the longest a uri within the schema's bound can be in
// UTF-8: no never can name a longer one.
const maxURIBytes = 4 * MaxURILen

// restSpan covers text from offset start (moved back to a rune's start)
// to its end, as the part the reading did not check.
func restSpan(text string, start int) uriSpan {
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	return uriSpan{start: start, end: len(text), rest: true}
}

// A separator is "://", or ":" and two slashes each escaped by a run of
// backslashes, as JSON writes "://" with its slashes escaped (PHP's
// json_encode does so by default), once or nested in another JSON string.
// The bare reading takes it for "://", and its readings decode the
// escapes.

// sepEscMax bounds the backslashes before each slash of an escaped
// separator: three levels of nested JSON take seven.
const sepEscMax = 15

// sepMaxLen is the longest a separator can be.
const sepMaxLen = 1 + 2*(sepEscMax+1)

// sepLen returns the length of the separator at offset i of s, or 0 when
// none starts there.
func sepLen(s string, i int) int {
	if i >= len(s) || s[i] != ':' {
		return 0
	}
	j := i + 1
	for range 2 {
		n := 0
		for j < len(s) && s[j] == '\\' && n <= sepEscMax {
			j++
			n++
		}
		if n > sepEscMax || j >= len(s) || s[j] != '/' {
			return 0
		}
		j++
	}
	return j - i
}

// seps finds the separators of a text in order. It remembers where the
// next of each kind (plain, escaped) is, so that walking a text from start
// to end costs one pass for each kind, not one per uri.
type seps struct {
	s          string
	plain, esc int    // offsets of the next of each kind at or after at; len(s) for none
	starts     [2]int // offsets of the next ":\" and ":/\", the ways an escaped one starts
	at         int    // the last from
	scanned    int    // bytes the searches so far went through (TestSepsLinear)
}

// index is strings.Index(f.s[i:], sep) as an offset in f.s, or len(f.s),
// counting the bytes it goes through.
func (f *seps) index(i int, sep string) int {
	if j := strings.Index(f.s[i:], sep); j >= 0 {
		f.scanned += j + len(sep)
		return i + j
	}
	f.scanned += len(f.s) - i
	return len(f.s)
}

func newSeps(s string) *seps { return &seps{s: s, plain: -1, esc: -1, starts: [2]int{-1, -1}} }

// next returns the offset, at or after from, of the first separator, and
// its length; -1 when there is none. Successive calls must not go back.
func (f *seps) next(from int) (k, n int) {
	fresh := func(cached int) bool {
		return cached >= from && (cached < len(f.s) || f.at <= from)
	}
	if !fresh(f.plain) {
		f.plain = f.index(from, "://")
	}
	if !fresh(f.esc) {
		// An escaped separator starts ":\" or, escaping its second slash
		// only, ":/\"; both are rare outside one. Where each occurs next
		// is remembered too, so each is searched for once per text.
		starts := [2]string{`:\`, `:/\`}
		seek := func(x, i int) { f.starts[x] = f.index(i, starts[x]) }
		for x := range starts {
			if !fresh(f.starts[x]) {
				seek(x, from)
			}
		}
		for {
			c := min(f.starts[0], f.starts[1])
			if c == len(f.s) || sepLen(f.s, c) > 0 {
				f.esc = c
				break
			}
			for x := range starts {
				if f.starts[x] == c {
					seek(x, c+1)
				}
			}
		}
	}
	f.at = from
	switch {
	case f.plain == len(f.s) && f.esc == len(f.s):
		return -1, 0
	case f.esc < f.plain:
		return f.esc, sepLen(f.s, f.esc)
	}
	return f.plain, len("://")
}

// nextSep is one call of [seps.next], for a single search.
func nextSep(s string, from int) (k, n int) { return newSeps(s).next(from) }

// hasSep reports whether s holds a separator.
func hasSep(s string) bool {
	k, _ := nextSep(s, 0)
	return k >= 0
}

// bareEnd returns where a bare uri whose "://" ends at i stops: at white
// space (Unicode's included), a double quote, a backtick, an angle
// bracket, or the scheme of a uri written right after it; and where the
// next uri may start, which is end but for such a scheme. A scheme may
// hold ".", "-" and "+", so the scheme of a uri glued to this one
// ("…sig=AB.https://", "…sig=AB-svn+ssh://") takes, as read, the end of
// this uri: this one is read up to the last place it may end (see
// gluedEnds), and the next from its scheme's start, the two overlapping
// (the views treat them as one); shorter are the other places it may end.
func bareEnd(text string, i int) (end, next int, shorter []int) {
	for i < len(text) {
		c := text[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				return i, i, nil
			}
			i += n
			continue
		}
		if strings.IndexByte(" \t\n\r\v\f\"`<>", c) >= 0 {
			return i, i, nil
		}
		if c == ':' && sepLen(text, i) > 0 {
			// Another uri begins: this one ends before its scheme, at
			// one of the places gluedEnds gives, the last of them.
			s := schemeStart(text, i, 0)
			ends := gluedEnds(text, s, i)
			return ends[0], s, ends[1:]
		}
		i++
	}
	return i, i, nil
}

// gluedEnds returns the places, last first, where a uri may end that the
// run s:i of scheme characters before the next "://" follows: the run's
// start, each ".", "+" or "-" in the run's last gluedSchemeMax bytes, and
// the start of an "http" or "https" the run ends in.
func gluedEnds(text string, s, i int) []int {
	ends := []int{s}
	for p := max(s, i-gluedSchemeMax); p < i; p++ {
		if strings.IndexByte(".+-", text[p]) >= 0 {
			ends = append(ends, p)
		}
	}
	if n := gluedWeb(text[s:i]); n > 0 {
		ends = append(ends, i-n)
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	slices.Reverse(ends)
	return ends
}

// gluedSchemeMax bounds how far into a run of scheme characters before a
// "://" the places a glued uri may start are looked for: schemes are
// short.
const gluedSchemeMax = 32

// bareReadings returns the other readings of the bare uri u, whose "://"
// is at offset k. Prose, markup and escaping put characters right after
// a uri that a uri may also hold (a period, a parenthesis, "**", "&gt;",
// an apostrophe, a backslash of an escape), so besides u itself it reads
// u up to some of those characters (see bareCuts); each of these with
// JSON's escapes decoded, up to three times over, when it holds one; and
// each reading from the "http" or "https" that ends its scheme, when
// other letters come before it. Readings longer than any uri a never can
// name are left out. raw reports whether u itself is to be read as it
// stands, rather than only as its escapes decode.
func bareReadings(u string, k int, shorter []int) (_ []string, raw bool) {
	// The readings are gathered on the stack and returned in a slice of
	// their own count: growing the result by appending allocated about
	// three times the space it kept (TestBareReadingsBounded/quote-ended).
	var buf [readingsBuf]string
	out := buf[:0]
	// add keeps reading r, whose scheme is k bytes long, when more than its
	// scheme and "://" and no longer than a never can name.
	add := func(r string, k int) {
		if len(r) > k+len("://") && len(r) <= maxURIBytes && r != u && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	cuts := bareCuts(u, k)
	for _, p := range shorter {
		if p > k+len("://") && p < len(u) {
			cuts = append(cuts, p)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// Each reading with JSON's escapes decoded, as often as a string
	// nested in JSON strings was escaped, up to three times. The uri is
	// decoded once a level, a piece between two cuts at a time, and the
	// decoded readings are prefixes of the result: the work is the uri's
	// length per level, whatever the number of cuts, so a text's decoding
	// costs a few times the text at most (TestBareReadingsBounded). No
	// more than sixteen times the longest uri a never names is decoded:
	// the escapes encoders write (of a slash, a quote, an ampersand, a
	// non-ASCII character), nested three deep, shrink none that much.
	type level struct {
		s       string
		ends    []int  // where the readings of s end
		decodes []bool // s[:ends[j]] decodes a level further
	}
	ends := append(slices.Clip(cuts), len(u))
	if n, _ := slices.BinarySearch(ends, 16*maxURIBytes+1); n < len(ends) {
		ends = ends[:n]
	}
	s0 := "" // what is decoded: none of u when no cut is within the bound
	if len(ends) > 0 {
		s0 = u[:ends[len(ends)-1]]
	}
	levels := []level{{s: s0, ends: ends}}
	for {
		cur := &levels[len(levels)-1]
		cur.decodes = make([]bool, len(cur.ends))
		if len(levels) == 4 || len(cur.ends) == 0 || !strings.Contains(cur.s, `\`) {
			break
		}
		var b strings.Builder
		b.Grow(len(cur.s)) // decoding valid UTF-8 only shortens it
		var next []int
		from := 0
		for j, e := range cur.ends {
			seg := cur.s[from:e]
			if e < len(cur.s) && highSurrogateEnd(seg) {
				continue // decoded with the next piece, as one character
			}
			if !appendUnescaped(&b, seg) {
				break
			}
			next = append(next, b.Len())
			cur.decodes[j] = true
			from = e
		}
		dec := b.String()
		if len(next) == 0 {
			break
		}
		dec = dec[:next[len(next)-1]] // not what a failed piece left
		// The decoded text has cuts of its own where the escaped one had
		// none: an escaped non-ASCII character after the uri, as PHP
		// writes prose.
		if len(dec) > k && strings.HasPrefix(dec[k:], "://") {
			next = append(next, bareCuts(dec, k)...)
			slices.Sort(next)
			next = slices.Compact(next)
		}
		levels = append(levels, level{s: dec, ends: next})
	}
	// A reading whose escapes are all ones an encoder writes (of a slash,
	// a backslash, a quote, a character by its code) is read only as what
	// it decodes to: a uri holds no backslash of its own, as a rule. One
	// that holds another escape, as a Windows path does ("\temp"), is read
	// as it stands too, and so is one that does not decode. A uri whose
	// own backslashes look like an encoder's escapes is looked for as
	// written, like one holding a space (see splits).
	for _, l := range levels {
		esc := newEscapeBounds(l.s) // once a level, not once a reading
		for j, e := range l.ends {
			if r := l.s[:e]; len(r) <= maxURIBytes && (!l.decodes[j] || !esc.prefix(e)) {
				add(r, k)
			}
		}
	}
	raw = len(s0) < len(u) || !levels[0].decodes[len(ends)-1] || !encoderEscaped(u)
	// A uri written into HTML or XML has its "&" (and any quote or angle
	// bracket) written as a character reference: the longest reading of
	// the raw level and of the most decoded one is read decoded as well,
	// up to what ends a bare uri, with the decoded text's own cuts, which
	// are substrings of it and cost nothing more to make.
	for x, l := range levels {
		if l.s == "" || x > 0 && x < len(levels)-1 {
			continue // the raw level and the most decoded one only
		}
		if d, ok := htmlUnescaped(l.s); ok && len(d) > k && strings.HasPrefix(d[k:], "://") {
			if e, _, _ := bareEnd(d, k+len("://")); e < len(d) {
				d = d[:e] // a quote or an angle bracket written as a reference
			}
			add(d, k)
			for _, c := range bareCuts(d, k) {
				add(d[:c], k)
			}
		}
	}
	// The glued forms below start from u, when it is read raw, and from
	// the readings so far (out[:m] stays the same as add appends).
	m := len(out)
	each := func(f func(r string)) {
		if raw {
			f(u)
		}
		for _, r := range out[:m] {
			f(r)
		}
	}
	if n := gluedWeb(u[:k]); n > 0 {
		each(func(r string) { add(r[k-n:], n) })
	}
	// And from the letter after each of the last two ".", "+" or "-" of
	// the scheme (within its last gluedSchemeMax bytes): a uri whose own
	// scheme holds one ("svn+ssh", "x-custom") written right after a word
	// ("x.svn+ssh://").
	for q, found := k-1, 0; q > max(0, k-gluedSchemeMax) && found < 2; q-- {
		if c := u[q]; strings.IndexByte(".+-", u[q-1]) >= 0 && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			found++
			each(func(r string) { add(r[q:], k-q) })
		}
	}
	if len(out) == 0 {
		return nil, raw
	}
	return slices.Clone(out), raw
}

// readingsBuf is how many readings of a bare uri [bareReadings] gathers
// before it needs the heap: the cuts it reads, and some more.
const readingsBuf = 2 * (bareCandidatesMax + bareFirstCuts)

// htmlUnescaped returns s with the character references an HTML or XML
// writer puts in an attribute or an element decoded: "&amp;", "&lt;",
// "&gt;", "&quot;", "&apos;" and numeric ones ("&#38;", "&#x26;"), each
// with its closing ";". ok is false, and s is returned, when s holds
// none.
func htmlUnescaped(s string) (string, bool) {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	last := 0 // s[:last] is written to b
	for ; i >= 0; i = nextByte(s, i+1, '&') {
		r, n := charRef(s[i:])
		if n == 0 {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteRune(r)
		last = i + n
		i += n - 1
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// charRef reads the character reference s starts with, returning its
// character and length, or a length of 0 when s starts with none that
// htmlUnescaped decodes.
func charRef(s string) (rune, int) {
	for _, e := range [...]struct {
		name string
		r    rune
	}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}} {
		if len(s) >= len(e.name) && strings.EqualFold(s[:len(e.name)], e.name) {
			return e.r, len(e.name)
		}
	}
	if len(s) < 4 || s[1] != '#' {
		return 0, 0
	}
	j, base := 2, 10
	if s[2] == 'x' || s[2] == 'X' {
		j, base = 3, 16
	}
	var r rune
	start := j
	for ; j < len(s) && j-start < 8; j++ {
		d := hexDigit(s[j])
		if d < 0 || d >= base {
			break
		}
		r = r*rune(base) + rune(d)
	}
	if j == start || j >= len(s) || s[j] != ';' || r == 0 || r > unicode.MaxRune || utf16.IsSurrogate(r) {
		return 0, 0
	}
	return r, j + 1
}

// hexDigit is the value of the hexadecimal digit c, or -1.
func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// bareCuts returns where the bare uri u, whose "://" is at offset k, may
// end short of its end, sorted: the last bareCandidatesMax places, the
// first bareFirstCuts, the first change from ASCII to another script and
// the first place at each kind of mark.
func bareCuts(u string, k int) []int {
	const marks = ".,;:!?'*_|()[]{}&#\\"
	// isCut reports whether u may end before offset p: at a mark or a
	// non-ASCII character that follows an ASCII character other than the
	// same mark. A uri may end in a mark itself (a signature ending in
	// "_", a title in parentheses) with prose going on in another ("_.",
	// ")."); a run of one mark ("**") ends a uri only at its start, but
	// for closing brackets, which may close the uri's own (a title in
	// parentheses in a Markdown link, "…(b))").
	isCut := func(p int) bool {
		c, prev := u[p], u[p-1]
		if !(c >= utf8.RuneSelf && utf8.RuneStart(c) || strings.IndexByte(marks, c) >= 0) {
			return false
		}
		return prev < utf8.RuneSelf && (prev != c || strings.IndexByte(")]}", c) >= 0)
	}
	// The last cuts, and the first few: prose with no spaces (Chinese,
	// Japanese) runs on past a uri with a cut at every change of script.
	// They are gathered on the stack and returned in a slice of their own
	// count, as bareReadings does its readings.
	var buf [cutsBuf]int
	cuts := buf[:0]
	for p := len(u) - 1; p > k+len("://") && len(cuts) < bareCandidatesMax; p-- {
		if isCut(p) {
			cuts = append(cuts, p)
		}
	}
	for p, first := k+len("://")+1, 0; p < len(u) && first < bareFirstCuts; p++ {
		if isCut(p) {
			first++
			if !slices.Contains(cuts, p) {
				cuts = append(cuts, p)
			}
		}
	}
	// And the first change from ASCII to another script, where such prose
	// most likely meets the uri.
	for p := k + len("://") + 1; p < len(u); p++ {
		if u[p] >= utf8.RuneSelf {
			if isCut(p) && !slices.Contains(cuts, p) {
				cuts = append(cuts, p)
			}
			break
		}
	}
	// And the first cut at each mark: a row of values (CSV, a list joined
	// by ";" or "|") runs on past a uri with a cut at every separator, and
	// the uri ends at the first of them, however many other marks it
	// holds. Only cuts a never could name are looked for.
	var seen [len(marks)]bool
	for p := k + len("://") + 1; p < min(len(u), maxURIBytes+1); p++ {
		if m := strings.IndexByte(marks, u[p]); m >= 0 && !seen[m] && isCut(p) {
			seen[m] = true
			if !slices.Contains(cuts, p) {
				cuts = append(cuts, p)
			}
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	slices.Sort(cuts)
	return slices.Clone(cuts)
}

// cutsBuf is how many cuts [bareCuts] gathers before it needs the heap:
// those from the end and from the start, and the first at a few marks.
const cutsBuf = bareCandidatesMax + bareFirstCuts + 8

// encoderEscaped reports whether s holds a backslash, and every backslash
// in it starts an escape that JSON encoders write in a string: of a
// slash, a backslash, a double quote, or a character by its code.
func encoderEscaped(s string) bool { return newEscapeBounds(s).prefix(len(s)) }

// escapeBounds is what one scan of s tells of the escapes encoderEscaped
// looks at: first is the offset of the first backslash (-1 for none), and
// bad that of the first backslash that does not start an escape an
// encoder writes, whole, within s (len(s)+1 for none).
type escapeBounds struct{ first, bad int }

func newEscapeBounds(s string) escapeBounds {
	first := strings.IndexByte(s, '\\')
	for i := first; i >= 0; {
		if i+1 == len(s) {
			return escapeBounds{first, i}
		}
		switch s[i+1] {
		case '/', '\\', '"':
			i += 2
		case 'u':
			if hex4(s[i+2:]) < 0 {
				return escapeBounds{first, i}
			}
			i += 6
		default:
			return escapeBounds{first, i}
		}
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	return escapeBounds{first, len(s) + 1}
}

// prefix is encoderEscaped(s[:e]) for a prefix that ends between two
// escapes, as every reading of a bare uri does (no cut falls inside an
// escape: see bareCuts), without reading it again (FuzzEscapeBounds).
func (b escapeBounds) prefix(e int) bool { return b.first >= 0 && b.first < e && e <= b.bad }

// highSurrogateEnd reports whether the JSON string contents s end with a
// \u escape of a high surrogate, the first half of a character that needs
// two escapes.
func highSurrogateEnd(s string) bool {
	if len(s) < 6 || !strings.HasPrefix(s[len(s)-6:], `\u`) {
		return false
	}
	r := hex4(s[len(s)-4:])
	return r >= 0xD800 && r < 0xDC00
}

// unescapeJSON decodes the escapes of JSON string contents in s, as
// encoding/json decodes a string literal holding s (FuzzUnescapeJSON), and
// reports whether that succeeds. A double quote, which such a literal
// could not hold, stands for itself.
func unescapeJSON(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	if !appendUnescaped(&b, s) {
		return "", false
	}
	return b.String(), true
}

// appendUnescaped writes the JSON string contents s to b with their
// escapes decoded, and reports whether s was well formed: no escape other
// than JSON's, no control character. Like encoding/json it decodes a
// surrogate pair escaped as two \u escapes to one character, and writes
// U+FFFD for a lone surrogate and for each byte of invalid UTF-8. A double
// quote stands for itself. For valid UTF-8, as a text's is, it writes at
// most len(s) bytes.
func appendUnescaped(b *strings.Builder, s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 == len(s) {
				return false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					return false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if strings.HasPrefix(s[i:], `\u`) {
						if d := utf16.DecodeRune(r, hex4(s[i+2:])); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default:
				return false
			}
			i += 2
		case c < ' ':
			return false
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
		}
	}
	return true
}

// hex4 returns the value of the four hexadecimal digits s starts with, or
// -1.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for i := range 4 {
		d := hexDigit(s[i])
		if d < 0 {
			return -1
		}
		r = r<<4 | rune(d)
	}
	return r
}

// textReading is what the reading of one text found: the uris its objects
// call never, and every "uri" member kept, in text order. unread is the
// offset of the first non-empty "uri" member left out for want of
// budget, or -1.
type textReading struct {
	never  []string
	spans  []uriSpan
	unread int
}

// memberURI decodes lit, a JSON string literal, as a uri of at most
// MaxURILen code points. A string with no escape and no control byte that
// is valid UTF-8 decodes to its own bytes, so it is taken as a part of
// lit, neither copied nor decoded (TestTextSpansBoundedPerContent: a
// decoder's state for each of some thousands of members cost more than
// the members).
func memberURI(lit string) (string, bool) {
	u := lit[1 : len(lit)-1]
	for j := 0; j < len(u); j++ {
		if c := u[j]; c == '\\' || c < 0x20 {
			return decodeBounded(json.RawMessage(lit), MaxURILen)
		}
	}
	if !utf8.ValidString(u) || utf8.RuneCountInString(u) > MaxURILen {
		return decodeBounded(json.RawMessage(lit), MaxURILen)
	}
	return u, true
}

// pendingURI is a "uri" member of an open object: the offsets of its JSON
// literal in the text, and whether an object has been read as calling it
// never. It is kept small, since one object may hold a great many.
type pendingURI struct {
	start, end int32
	read       bool
}

// textCounts is what is left of the counts a content's texts share as
// readText reads them: the "uri" members kept for the views, and the
// uris read as called never.
type textCounts struct{ members, nevers int }

func newTextCounts() textCounts { return textCounts{members: textObjectMax, nevers: textObjectMax} }

// readText reads the JSON a text holds within the bounds above. It keeps
// a non-empty "uri" member for the views while left allows, and reads a
// never of the member's object while left allows, past the members too:
// the views withhold the rest of the text from the first member not kept,
// but another block or text may name the uri that the object calls never.
func readText(text string, left *textCounts) textReading {
	r := textReading{unread: -1}
	i := 0
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	if i >= len(text) || (text[i] != '{' && text[i] != '[') {
		return r
	}
	whole := text
	if len(text) > textScanMax {
		text = text[:textScanMax]
	}
	d := []byte(text)
	// unreadFrom marks text from i on as not read when it may hold a
	// "uri" member: a part skipped for its depth, or what follows where
	// the reading stopped. Whether such a member names a uri the content
	// calls never is not known, so the rest of the text is withheld from
	// there (TestMembersPastReadingWithheld).
	unreadFrom := func(i int, part string) {
		if r.unread < 0 && mayNameMember(part) {
			r.unread = i
		}
	}

	type frame struct {
		obj, never bool
		// resource is set on an object that is the "resource" member of
		// its parent: its uris stay with the parent when it closes.
		resource bool
		// nested is set on an object that is the "annotations" or
		// "_meta" member of its parent, where the RFC's first revision
		// put the disposition: its never is its parent's too.
		nested bool
		// pending is where this object's uris start in pend.
		pending int
	}
	var (
		stack []frame
		pend  []pendingURI // the open objects' uris
		// calledNever holds the literals the text's objects called never.
		calledNever map[string]bool
		objects     int
		expectKey   bool
		member      key // the member whose value comes next
	)
	// readNever reads the member text[start:end] as called never. A
	// member is decoded only here, so that one past the count of those
	// kept costs nothing unless its object calls it never, and once:
	// objects nested as one another's "resource" hand the same members
	// up, and each may call them never (TestNeverNestCountsEachMemberOnce,
	// TestNeverNestBounded). A literal the text's objects already called
	// never costs the count nothing more. Once the count is spent, a never
	// is not read, and the rest of the text is withheld from its member,
	// as from a member not kept.
	readNever := func(start, end int) {
		lit := text[start:end]
		if calledNever[lit] {
			return
		}
		if left.nevers == 0 {
			if r.unread < 0 || start < r.unread {
				r.unread = start
			}
			return
		}
		if u, ok := memberURI(lit); ok {
			left.nevers--
			// u may be a part of the text, and a never uri outlives it:
			// in the registry's record and marks, and in the content's
			// claims (TestMarksKeepNoTexts). The copies come to at most
			// the text's length: the literals of one reading never
			// overlap, and each is read as never once at most.
			r.never = append(r.never, strings.Clone(u))
			if calledNever == nil {
				calledNever = make(map[string]bool)
			}
			calledNever[lit] = true
		}
	}
	closeObject := func(f frame) {
		if f.never {
			for j := range pend[f.pending:] {
				if p := &pend[f.pending+j]; !p.read {
					p.read = true
					readNever(int(p.start), int(p.end))
				}
			}
		}
		if !f.resource {
			pend = pend[:f.pending]
		}
	}
scan:
	for i < len(d) {
		inObject := len(stack) > 0 && stack[len(stack)-1].obj
		switch c := d[i]; {
		case c == '{' || c == '[':
			// An object that is the "annotations" or "_meta" member of
			// an object (see frame.nested).
			nested := c == '{' && inObject && (member == keyAnnotations || member == keyMeta)
			if len(stack) == textDepthMax {
				end, ok := valueEnd(d, i)
				if nested {
					// The skipped object may say never for its parent
					// (see frame.nested); what it says is not known, so
					// the parent is read as never when it may.
					part := text[i:]
					if ok {
						part = text[i:end]
					}
					if mayNameNever(part) {
						stack[len(stack)-1].never = true
					}
				}
				if !ok {
					break scan
				}
				unreadFrom(i, text[i:end])
				i, member = end, keyOther
				continue
			}
			if c == '{' {
				if objects == textObjectMax {
					break scan
				}
				objects++
			}
			stack = append(stack, frame{obj: c == '{', resource: c == '{' && inObject && member == keyResource, nested: nested, pending: len(pend)})
			expectKey, member = c == '{', keyOther
			i++
		case c == '}' || c == ']':
			if len(stack) == 0 {
				break scan
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.obj {
				closeObject(f)
			}
			expectKey, member = false, keyOther
			i++
			// A text may hold more than one value (JSON lines): the
			// reading goes on to the next, whose never governs the
			// values before it too (TestWithheldRestCutsNoURI).
		case c == '"':
			end, ok := stringEnd(d, i)
			if !ok {
				break scan
			}
			lit := d[i:end]
			switch {
			case inObject && expectKey:
				member, expectKey = keyOf(lit), false
			case inObject && member == keyURI:
				if raw := text[i:end]; len(raw) > 2 { // "" names no uri
					switch {
					case left.members > 0:
						if u, ok := memberURI(raw); ok {
							left.members--
							r.spans = appendSpan(r.spans, uriSpan{start: i, end: end, uri: u})
						}
					case r.unread < 0:
						r.unread = i
					}
					if stack[len(stack)-1].never {
						// Its object has called it never already: read
						// now, it need not wait for the object to close.
						readNever(i, end)
					} else {
						if len(pend) == cap(pend) {
							// Room for every "uri" key left in the text,
							// made once: one object may hold hundreds of
							// thousands, and growing the list by append
							// took several times their size
							// (TestNeverNestBounded/never-last).
							pend = slices.Grow(pend, max(4, len(pend), strings.Count(text[i:], `"uri"`)))
						}
						pend = append(pend, pendingURI{start: int32(i), end: int32(end)})
					}
				}
				member = keyOther
			case inObject && member == keyDisposition:
				if isNever(lit) {
					stack[len(stack)-1].never = true
					if stack[len(stack)-1].nested {
						// The parent's "uri" members read so far wait in
						// pend for it to close; those after are read as
						// they come.
						stack[len(stack)-2].never = true
					}
				}
				member = keyOther
			default:
				member = keyOther
			}
			i = end
		case c == ',':
			expectKey, member = inObject, keyOther
			i++
		case c == ':' || isSpace(c):
			i++
		default:
			end, _ := valueEnd(d, i)
			if end == i {
				end++
			}
			i, member = end, keyOther
		}
	}
	// A text cut short by a bound still testifies with what it said.
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.obj {
			closeObject(f)
		}
	}
	if i < len(whole) {
		unreadFrom(i, whole[i:])
	}
	return r
}

// mayNameNever reports whether s may hold the string "never": as it
// stands, or with one of its letters escaped.
func mayNameNever(s string) bool {
	return containsAny(s, "never", `\u006e`, `\u006E`, `\u0065`, `\u0076`, `\u0072`)
}

// mayNameMember reports whether s may hold a "uri" member: the key as it
// stands, or with one of its letters escaped.
func mayNameMember(s string) bool {
	return containsAny(s, `"uri"`, `\u0075`, `\u0072`, `\u0069`)
}

// containsAny reports whether s holds any of subs.
func containsAny(s string, subs ...string) bool {
	for _, k := range subs {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}
