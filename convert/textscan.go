package convert

import (
	"strings"

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
//     or an array; any other text is just text;
//   - at most textScanMax bytes of a text are read;
//   - objects and arrays nested deeper than textDepthMax are skipped
//     without being read;
//   - the reading stops after textObjectMax objects;
//   - at most textObjectMax "uri" values are kept for the views;
//   - at most textMarkMax uris that no block of the content names are
//     marked from the texts of one content.
//
// A never past these bounds is not seen. Within them the reading is
// tolerant: it takes what reads as an object holding a "uri" string and a
// "disposition" of "never", and an object whose "resource" member holds
// the uri (an embedded resource), wherever the text nests it.
//
// Withholding reaches further than reading: besides the "uri" members,
// every uri a text writes out with its scheme and "://" is a place the
// views withhold a uri the content calls never or a server marked, also
// in a text that is not JSON (see withBareURIs).
const (
	textScanMax   = 4 << 20
	textDepthMax  = 64
	textObjectMax = 1 << 14
	textMarkMax   = 256
)

// withheldURI replaces, in a text the views show, the JSON string of a uri
// the content calls never or a server marked. It is itself a JSON string,
// so a JSON text stays JSON.
const withheldURI = `"[uri withheld]"`

// withheldBareURI replaces a bare uri (see withBareURIs), which stands
// inside a string or in prose, so it carries no quotes of its own.
const withheldBareURI = "[uri withheld]"

// uriSpan is one uri a text names: a "uri" string member of an object in
// the text's JSON (the byte offsets of its quoted literal, the uri it
// decodes to and that uri's canonical form), or, when bare is set, a uri
// the text writes out anywhere else (see withBareURIs).
type uriSpan struct {
	start, end int
	uri, key   string
	bare       bool
	// alts are other readings of a bare uri, with their canonical forms:
	// without the punctuation prose may close it with (a period, a
	// parenthesis), and from its "http" on when letters are glued before
	// the scheme. Either may be the uri a never names.
	alts, altKeys []string
}

// withBareURIs adds to spans, the "uri" members of a text's JSON in text
// order, a bare span for each uri the text writes out elsewhere: a
// scheme, "://" and what follows up to a space, a quote, a backslash or
// an angle bracket, wherever it stands (in prose, under another key, in
// JSON the reading does not reach). The views then withhold a never uri
// there too. It reads the first textScanMax bytes of the text and keeps
// at most textObjectMax bare spans.
func withBareURIs(text string, spans []uriSpan) []uriSpan {
	if len(text) > textScanMax {
		text = text[:textScanMax]
	}
	if !strings.Contains(text, "://") {
		return spans
	}
	var out []uriSpan
	j, from, bare := 0, 0, 0
	for bare < textObjectMax {
		k := strings.Index(text[from:], "://")
		if k < 0 {
			break
		}
		k += from
		start := k
		for start > from && isSchemeByte(text[start-1]) {
			start--
		}
		end := k + len("://")
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"'`<>\\", rune(text[end])) {
			end++
		}
		from = end
		if start == k {
			continue // no scheme before the "://"
		}
		for j < len(spans) && spans[j].end <= start {
			out = append(out, spans[j])
			j++
		}
		if j < len(spans) && spans[j].start < end {
			continue // within a "uri" member, which its own span covers
		}
		uri := text[start:end]
		sp := uriSpan{start: start, end: end, uri: uri, key: uriform.Canonical(uri), bare: true}
		for _, alt := range bareReadings(uri, k-start) {
			sp.alts = append(sp.alts, alt)
			sp.altKeys = append(sp.altKeys, uriform.Canonical(alt))
		}
		out = append(out, sp)
		bare++
	}
	return append(out, spans[j:]...)
}

// textReading is what the reading of one text found: the uris its objects
// call never, and every "uri" member, in text order.
type textReading struct {
	never []string
	spans []uriSpan
}

// readText reads the JSON a text holds within the bounds above.
func readText(text string) textReading {
	var r textReading
	i := 0
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	if i >= len(text) || (text[i] != '{' && text[i] != '[') {
		return r
	}
	if len(text) > textScanMax {
		text = text[:textScanMax]
	}
	d := []byte(text)

	type frame struct {
		obj, never bool
		// resource is set on an object that is the "resource" member of
		// its parent: its uris stay with the parent when it closes.
		resource bool
		// pending is where this object's uris start in pend.
		pending int
	}
	var (
		stack     []frame
		pend      []int // indexes into r.spans of the open objects' uris
		objects   int
		expectKey bool
		member    key // the member whose value comes next
	)
	closeObject := func(f frame) {
		if f.never {
			for _, s := range pend[f.pending:] {
				if len(r.never) < textObjectMax {
					r.never = append(r.never, r.spans[s].uri)
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
			if len(stack) == textDepthMax {
				end, ok := valueEnd(d, i)
				if !ok {
					break scan
				}
				i, member = end, keyOther
				continue
			}
			if c == '{' {
				if objects == textObjectMax {
					break scan
				}
				objects++
			}
			stack = append(stack, frame{obj: c == '{', resource: c == '{' && inObject && member == keyResource, pending: len(pend)})
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
			if len(stack) == 0 {
				break scan
			}
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
				if u, ok := decodeBounded(lit, MaxURILen); ok && len(r.spans) < textObjectMax {
					r.spans = append(r.spans, uriSpan{start: i, end: end, uri: u})
					pend = append(pend, len(r.spans)-1)
				}
				member = keyOther
			case inObject && member == keyDisposition:
				if isNever(lit) {
					stack[len(stack)-1].never = true
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
	return r
}

// bareReadings returns the other readings of the bare uri u, whose "://"
// is at offset k: u without closing punctuation, and u (so trimmed) from
// the "http" or "https" that ends its scheme when other letters come
// before it. It returns none when u reads only one way.
func bareReadings(u string, k int) []string {
	var out []string
	trimmed := strings.TrimRight(u, ".,;:!?)]}")
	if len(trimmed) <= k+len("://") {
		trimmed = u // only punctuation after "://": nothing to read
	}
	if trimmed != u {
		out = append(out, trimmed)
	}
	scheme := strings.ToLower(u[:k])
	for _, s := range []string{"https", "http"} {
		if len(scheme) > len(s) && strings.HasSuffix(scheme, s) {
			out = append(out, trimmed[k-len(s):])
			break
		}
	}
	return out
}
