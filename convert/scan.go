package convert

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file reads JSON token by token, for three jobs a decoder cannot do.
// encoding/json keeps the last of a repeated property name without a word,
// and it refuses a document nested past its depth limit as a whole; the
// host needs to see the repeats, and still to read the top level of a
// block it cannot decode. It also finds the never claims in the JSON a
// text block holds. Every reader here is iterative (no recursion), reads
// each byte it is given at most a fixed number of times, and skips a value
// it has no use for by counting brackets instead of descending into it.

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string whose opening
// quote is d[i], and false when the string does not end within d. It does
// not check what the string holds; a caller that needs a valid document
// checks it apart.
func stringEnd(d []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return len(d), false
		}
		q := j + k
		// A quote ends the string unless an odd run of backslashes
		// escapes it. Each run is counted once, so the work stays linear.
		n := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// valueEnd returns the index just past the JSON value that starts at d[i],
// and false when it does not end within d. An object or array is skipped
// by counting brackets, however deep it nests.
func valueEnd(d []byte, i int) (int, bool) {
	if i >= len(d) {
		return i, false
	}
	switch d[i] {
	case '"':
		return stringEnd(d, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				end, ok := stringEnd(d, j)
				if !ok {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(d), false
	case '}', ']', ',', ':':
		return i, false
	}
	j := i
	for j < len(d) && !isSpace(d[j]) && d[j] != ',' && d[j] != '}' && d[j] != ']' && d[j] != ':' {
		j++
	}
	return j, true
}

// key names a property the host reads; keyOther is every other name.
type key uint8

const (
	keyOther key = iota
	keyType
	keyText
	keyData
	keyURI
	keyMimeType
	keySizeBytes
	keySize
	keyDigest
	keyExpiresAt
	keyName
	keyDisposition
	keyResource
	keyBlob
	keyAnnotations
	keyMeta
	keyCount
)

// maxEscapedKey is the longest quoted form a property the host reads can
// take: "disposition", every character escaped as \uXXXX.
const maxEscapedKey = 2 + 6*len("disposition")

// keyOf names the property whose quoted name is lit, comparing after
// unescaping, as a decoder does.
func keyOf(lit []byte) key {
	if len(lit) < 2 {
		return keyOther
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return keyNamed(body)
	}
	if len(lit) > maxEscapedKey {
		return keyOther
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return keyOther
	}
	return keyNamed([]byte(s))
}

// keyNamed names the property called name.
func keyNamed(name []byte) key {
	switch string(name) {
	case "type":
		return keyType
	case "text":
		return keyText
	case "data":
		return keyData
	case "uri":
		return keyURI
	case "mimeType":
		return keyMimeType
	case "sizeBytes":
		return keySizeBytes
	case "size":
		return keySize
	case "digest":
		return keyDigest
	case "expiresAt":
		return keyExpiresAt
	case "name":
		return keyName
	case "disposition":
		return keyDisposition
	case "resource":
		return keyResource
	case "blob":
		return keyBlob
	case "annotations":
		return keyAnnotations
	case "_meta":
		return keyMeta
	}
	return keyOther
}

// isNever reports whether a raw JSON value is the string "never", in any
// spelling a decoder reads as that string.
func isNever(raw []byte) bool {
	raw = schemaTrim(raw)
	if bytes.Equal(raw, []byte(`"never"`)) {
		return true
	}
	if len(raw) > 2+6*len("never") || bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	s, ok := decodeString(raw)
	return ok && s == string(DispositionNever)
}

// maxObjectURIs bounds how many occurrences of "uri", and of "resource",
// the reading of one object keeps at hand. An object that writes either
// more often has them read again from its bytes when a never governs
// them (see object.each).
const maxObjectURIs = 8

// object is the host's reading of one JSON object's top level: for each
// property the host reads, its last value (the one a decoder keeps) and
// how often it appeared, whether any "disposition" said never, and each
// "uri" value. Other properties are skipped without being read.
type object struct {
	// isObject is set when the bytes open with an object.
	isObject bool
	// complete is set when the reading reached the object's closing brace.
	// A reading cut short keeps what it read before the fault.
	complete bool
	last     [keyCount][]byte
	count    [keyCount]int
	// never is set when some occurrence of "disposition" is the string
	// "never". nestedNever is set when the object's "annotations" or
	// "_meta" says never at its top level, and nestedDisposition when it
	// holds a "disposition" at all; both when either member is written
	// twice. The schema reads neither place (revision 1 of the RFC put
	// the disposition in annotations), but every block other than a
	// resource_link counts them, failing closed.
	never, nestedNever, nestedDisposition bool
	uris                                  [maxObjectURIs][]byte
	nURIs                                 int
	// resources holds each "resource" value, so that a block rejected
	// whole still yields the uris its nested resources name.
	resources  [maxObjectURIs][]byte
	nResources int
	// doc is the object's bytes, from which the occurrences of "uri" and
	// "resource" past those kept are read again.
	doc []byte
	// plain is set for a property whose last value is a JSON string with
	// no escape and valid UTF-8: its text is the bytes between its quotes.
	// Only scanBlock sets it, having checked the string on its way.
	plain [keyCount]bool
}

// readObject reads the top level of the object d holds. It reads members
// until the closing brace or the first fault, so it reads what it can of
// a document no decoder accepts (one nested too deep, or cut short). An
// annotations, _meta or resource object cut short is read as far as it
// goes, so a never it states before the cut still counts.
func readObject(d []byte) (o object) {
	o.doc = d
	o.isObject, o.complete = members(d, func(k key, v []byte) { o.add(k, v, false) })
	return o
}

// readDisposition reads the top level of the object d holds, as
// [readObject] does, for its "disposition" members alone: has reports
// that one appeared, never that one said never. It reads nothing nested,
// so an annotations object holding annotations, however deep, costs one
// pass over d.
func readDisposition(d []byte) (never, has bool) {
	members(d, func(k key, v []byte) {
		if k == keyDisposition {
			has = true
			never = never || isNever(v)
		}
	})
	return never, has
}

// members calls f with each member of the object d holds at its top level,
// in order, until the closing brace or the first fault. A member whose
// object or array value the end of d cuts short is passed with the rest
// of d as its value, and is the last. It reports whether d opens with an
// object and whether the reading reached its closing brace.
func members(d []byte, f func(k key, v []byte)) (isObject, complete bool) {
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return false, false
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return true, true
	}
	for i < len(d) && d[i] == '"' {
		kend, ok := stringEnd(d, i)
		if !ok {
			return true, false
		}
		k := keyOf(d[i:kend])
		i = skipSpace(d, kend)
		if i >= len(d) || d[i] != ':' {
			return true, false
		}
		i = skipSpace(d, i+1)
		vend, ok := valueEnd(d, i)
		if !ok {
			if i < len(d) && vend == len(d) && (d[i] == '{' || d[i] == '[') {
				f(k, d[i:]) // cut short: read as far as it goes
			}
			return true, false
		}
		f(k, d[i:vend])
		i = skipSpace(d, vend)
		if i >= len(d) {
			return true, false
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return true, true
		default:
			return true, false
		}
	}
	return true, false
}

func (o *object) add(k key, v []byte, plain bool) {
	if k == keyOther {
		return
	}
	o.count[k]++
	o.last[k] = v
	o.plain[k] = plain
	switch k {
	case keyDisposition:
		o.never = o.never || isNever(v)
	case keyAnnotations, keyMeta:
		never, has := readDisposition(v)
		twice := o.count[k] > 1
		o.nestedNever = o.nestedNever || twice || never
		o.nestedDisposition = o.nestedDisposition || twice || has
	case keyURI:
		if o.nURIs < maxObjectURIs {
			o.uris[o.nURIs] = v
			o.nURIs++
		}
	case keyResource:
		if o.nResources < maxObjectURIs {
			o.resources[o.nResources] = v
			o.nResources++
		}
	}
}

// get returns the last value of property k, as a decoder keeps it.
func (o *object) get(k key) (json.RawMessage, bool) { return o.last[k], o.count[k] > 0 }

// str decodes the last value of property k as a JSON string, reporting
// false when k is absent or its value is not a string.
func (o *object) str(k key) (string, bool) {
	if o.plain[k] {
		// A string without escapes is its own bytes: one copy, no second
		// reading (BenchmarkRender/100blocks against /decode-only).
		raw := o.last[k]
		return string(raw[1 : len(raw)-1]), true
	}
	return decodeString(o.last[k])
}

// bounded decodes the last value of property k as a JSON string of at
// most max code points, refusing an over-long one from its encoded length
// as decodeBounded does.
func (o *object) bounded(k key, max int) (string, bool) {
	if len(o.last[k]) > 12*max+2 {
		return "", false
	}
	s, ok := o.str(k)
	if !ok || utf8.RuneCountInString(s) > max {
		return "", false
	}
	return s, true
}

// has reports whether property k appeared.
func (o *object) has(k key) bool { return o.count[k] > 0 }

// repeated reports whether property k appeared more than once.
func (o *object) repeated(k key) bool { return o.count[k] > 1 }

// neverURIs returns the uris a never of the object governs: every "uri"
// of the object, when some "disposition" of it says never (or its
// annotations or _meta does, see nestedNever), and every
// "uri" of a nested "resource" object (as far as its top level reads),
// when the object or that nested object says never. Only strings within
// the schema's bound count. An embedded resource states its never on
// either level and its uri on the inner one, so a block rejected whole
// keeps both.
func (o *object) neverURIs() []string {
	var out []string
	if o.never || o.nestedNever {
		out = appendURIs(out, o)
	}
	return o.appendNestedNever(out)
}

// appendURIs appends to out each "uri" of in that is a string within the
// schema's bound: every occurrence, also those past the ones the reading
// kept, which are read again from the object's bytes.
func appendURIs(out []string, in *object) []string {
	add := func(raw []byte) {
		if u, ok := decodeBounded(raw, MaxURILen); ok {
			out = append(out, u)
		}
	}
	in.each(keyURI, in.uris[:in.nURIs], add)
	return out
}

// each calls f with every value of property k (keyURI or keyResource),
// given kept, the values the reading kept: those alone when they are all
// of them, and otherwise each value read again from the object's bytes,
// in one pass.
func (o *object) each(k key, kept [][]byte, f func(v []byte)) {
	if o.count[k] <= len(kept) {
		for _, v := range kept {
			f(v)
		}
		return
	}
	members(o.doc, func(m key, v []byte) {
		if m == k {
			f(v)
		}
	})
}

// nestedNeverURIs is [object.neverURIs] of the nested "resource" objects
// alone, for a block whose own uri, if any, its testimony carries.
func (o *object) nestedNeverURIs() []string { return o.appendNestedNever(nil) }

// appendNestedNever appends to out each uri a nested "resource" object
// names when it, or o, calls it never.
func (o *object) appendNestedNever(out []string) []string {
	o.each(keyResource, o.resources[:o.nResources], func(raw []byte) {
		if inner := readObject(raw); o.never || o.nestedNever || inner.never || inner.nestedNever {
			out = appendURIs(out, &inner)
		}
	})
	return out
}

// duplicate is one object in a document that names a property twice: the
// top-level property it sits under (the repeated name itself when the
// repeat is at the top level) and, for a nested repeat, the repeated name.
type duplicate struct {
	top, nested string
	atTop       bool
}

// maxDuplicates bounds how many repeats findDuplicates reports.
const maxDuplicates = 16

// findDuplicates reports the objects of the valid JSON document d that
// name a property twice, comparing names after unescaping: at most one
// report for each top-level property, and at most maxDuplicates in all.
// It makes one pass, keeps one set of names for the whole document, and
// does not recurse, so its cost is linear in d however deep d nests.
func findDuplicates(d []byte) []duplicate {
	type frame struct {
		obj bool
		id  int
	}
	type seenKey struct {
		obj  int
		name string
	}
	var (
		stack     []frame
		seen      map[seenKey]struct{}
		reported  map[string]bool
		out       []duplicate
		top       string
		expectKey bool
		objects   int
	)
	for i := skipSpace(d, 0); i < len(d); {
		switch c := d[i]; c {
		case '{', '[':
			stack = append(stack, frame{obj: c == '{', id: objects})
			if c == '{' {
				objects++
			}
			expectKey = c == '{'
			i++
		case '}', ']':
			if len(stack) == 0 {
				return out
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			i++
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
			i++
		case '"':
			end, ok := stringEnd(d, i)
			if !ok {
				return out
			}
			if expectKey && len(stack) > 0 {
				name := decodeName(d[i:end])
				f := stack[len(stack)-1]
				if len(stack) == 1 {
					top = name
				}
				if seen == nil {
					seen = make(map[seenKey]struct{})
				}
				sk := seenKey{f.id, name}
				if _, dup := seen[sk]; dup && !reported[top] {
					if reported == nil {
						reported = make(map[string]bool)
					}
					reported[top] = true
					if len(stack) == 1 {
						out = append(out, duplicate{top: name, atTop: true})
					} else {
						out = append(out, duplicate{top: top, nested: name})
					}
					if len(out) == maxDuplicates {
						return out
					}
				}
				seen[sk] = struct{}{}
				expectKey = false
			}
			i = end
		default:
			i++
		}
	}
	return out
}

// decodeName decodes a quoted property name as a decoder does: escapes
// resolved and each invalid UTF-8 byte read as U+FFFD.
func decodeName(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return string(body)
	}
	return s
}
