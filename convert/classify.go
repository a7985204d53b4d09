package convert

import (
	"encoding/json"
	"unicode/utf8"
)

// Schema bounds from RFC-005 §8, counted in Unicode code points as JSON
// Schema counts string length.
const (
	MaxURILen       = 4096
	MaxMimeTypeLen  = 255
	MaxNameLen      = 255
	MaxExpiresAtLen = 64
	// MaxSizeBytes is 2^53−1, the largest claim sizeBytes may carry.
	MaxSizeBytes = 1<<53 - 1
)

// Classify reads one raw content block the way a receiving host must.
// It never fails and never panics: any JSON value, or
// bytes that are not JSON at all, yields a Block. A non-object, or an
// object with no string "type", is [KindInvalid]; a type this package does
// not know is [KindUnknown].
//
// A property named twice is not read as a decoder would read it (the last
// occurrence, silently). A "disposition" counts as never when any of its
// occurrences says never, and otherwise is set aside like any repeated
// optional field: absent, and listed among the rejected fields. A
// repeated type, uri, text, data or nested resource leaves the host unable
// to tell which one the block means, so the block is rejected whole.
//
// A block that makes no reference of its own (one rejected whole, one of
// an unknown type, or a text block) still carries a never its top level
// states: [Block.NeverURIs] lists the uris it names there, and those of
// a nested resource object, where an embedded resource keeps its uri.
// That holds for a block no decoder can read whole (nested past the
// decoder's depth limit, or cut short), as far as its top level and the
// top level of each nested resource can be read; a never stated before
// the cut counts, also one inside an annotations, _meta or resource
// object the cut leaves open. A valid resource_link maps onto testimony
// with no disposition, so its own is not read; a nested resource object
// that says never counts beside it as beside any block.
//
// Classify is pure: it registers nothing and touches no shared state.
// It reads a block in one pass, which checks the JSON and notes the
// block's top-level properties as it goes; a string property without
// escapes is then copied from the block as it stands, not decoded again.
// An over-long string property is rejected from its encoded length
// without being decoded, so a megabyte name costs that pass and nothing
// after it. Two things are read a second time: the top level of an
// embedded resource's nested object, and the top level of a block no
// decoder can read, for the never it may state.
func Classify(raw json.RawMessage) Block {
	if i := skipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return Block{Kind: KindInvalid, Invalid: InvalidNotObject}
	}
	obj, valid := scanBlock(raw)
	if !valid {
		// No decoder reads the block; its top level is read as far as it
		// can be, for the never it may state.
		obj = readObject(raw)
		return Block{Kind: KindInvalid, Invalid: InvalidUnreadable, NeverURIs: obj.neverURIs()}
	}
	typ, ok := obj.str(keyType)
	switch {
	case obj.repeated(keyType):
		return Block{Kind: KindInvalid, Invalid: InvalidRepeated, NeverURIs: obj.neverURIs()}
	case !ok:
		return Block{Kind: KindInvalid, Invalid: InvalidNoType, NeverURIs: obj.neverURIs()}
	}
	b := Block{Type: typ}
	switch typ {
	case "text":
		text, ok := obj.str(keyText)
		switch {
		case obj.repeated(keyText):
			b.Kind, b.Invalid = KindInvalid, InvalidRepeated
		case !ok:
			b.Kind, b.Invalid = KindInvalid, InvalidTextType
		default:
			b.Kind, b.Text = KindText, text
		}
	case "image", "audio":
		classifyMedia(&b, &obj)
	case "resource":
		if obj.has(keyURI) {
			classifyReference(&b, &obj, false)
		} else if obj.has(keyResource) {
			classifyEmbedded(&b, &obj)
		} else {
			b.Kind, b.Invalid = KindInvalid, InvalidURIMissing
		}
	case "resource_link":
		classifyReference(&b, &obj, true)
	default:
		b.Kind = KindUnknown
	}
	// A block that makes no reference of its own (one rejected whole, of
	// an unknown type, or text) carries the never its top level states.
	// A valid resource_link maps with no disposition, so its own is not
	// read, but the nested resources of every other block count. An
	// embedded resource reads its nested resource itself.
	switch {
	case b.NeverURIs != nil:
	case b.Kind == KindInvalid || b.Kind == KindUnknown || b.Kind == KindText:
		b.NeverURIs = obj.neverURIs()
	case b.Kind == KindEmbedded || obj.nResources == 0:
	case b.Link:
		obj.never, obj.nestedNever = false, false
		b.NeverURIs = obj.nestedNeverURIs()
	default:
		b.NeverURIs = obj.nestedNeverURIs()
	}
	return b
}

// classifyMedia reads an image or audio block: inline when it carries
// data, a reference in uri form otherwise. Data beside a uri or a
// disposition is the inline contradiction: data beside reference fields.
func classifyMedia(b *Block, obj *object) {
	if obj.repeated(keyData) || obj.repeated(keyURI) {
		b.Kind, b.Invalid = KindInvalid, InvalidRepeated
		return
	}
	if !obj.has(keyData) {
		classifyReference(b, obj, false)
		return
	}
	data, ok := obj.str(keyData)
	if !ok {
		b.Kind, b.Invalid = KindInvalid, InvalidDataType
		return
	}
	b.Kind, b.Data = KindInline, data
	if !obj.repeated(keyMimeType) {
		b.MimeType, _ = obj.str(keyMimeType)
	}
	// A disposition in annotations or _meta (see object) is data beside
	// reference fields too.
	if obj.has(keyURI) || obj.has(keyDisposition) || obj.nestedDisposition {
		b.Contradiction = true
		// The testimony is read only so that a never it carries still
		// counts as a claim on its uri; the block itself makes no
		// stub and registers nothing.
		if uri, ok := obj.bounded(keyURI, MaxURILen); ok {
			b.Testimony = readFields(obj, false)
			b.Testimony.URI = uri
			b.Testimony.Present |= FieldURI
			if obj.nestedNever { // a never in annotations or _meta claims the uri too
				b.Testimony.Disposition = DispositionNever
				b.Testimony.Present |= FieldDisposition
			}
		}
	}
}

// classifyReference reads a reference block's testimony. A bad or
// repeated uri rejects the block whole; a bad or repeated optional field
// is rejected as a field. A resource_link maps onto testimony field for
// field, with no disposition (RFC-005 §8.1).
func classifyReference(b *Block, obj *object, link bool) {
	rawURI, has := obj.get(keyURI)
	switch {
	case !has:
		b.Kind, b.Invalid = KindInvalid, InvalidURIMissing
		return
	case obj.repeated(keyURI):
		b.Kind, b.Invalid = KindInvalid, InvalidRepeated
		return
	}
	uri, ok := obj.str(keyURI)
	if !ok {
		if len(rawURI) > 0 && rawURI[0] == '"' {
			// A string too long to decode cheaply is still a string.
			b.Kind, b.Invalid = KindInvalid, InvalidURITooLong
			return
		}
		b.Kind, b.Invalid = KindInvalid, InvalidURIType
		return
	}
	if utf8.RuneCountInString(uri) > MaxURILen {
		b.Kind, b.Invalid = KindInvalid, InvalidURITooLong
		return
	}
	b.Kind, b.Link = KindReference, link
	b.Testimony = readFields(obj, link)
	b.Testimony.URI = uri
	b.Testimony.Present |= FieldURI
	// A never in annotations or _meta (see object), where the RFC's first
	// revision put the disposition, is still the server saying never:
	// the reference is read as never, whatever its top level says. A
	// resource_link reads no disposition of its own, here or there.
	if !link && obj.nestedNever {
		b.Testimony.Disposition = DispositionNever
		b.Testimony.Present |= FieldDisposition
	}
}

// classifyEmbedded reads MCP's embedded resource. Its uri and type are kept
// as testimony so never claims can reach it; a disposition may sit on
// the outer block or on the nested resource. A nested resource that names
// its uri, text or blob twice is rejected whole, keeping any never.
func classifyEmbedded(b *Block, outer *object) {
	b.Kind = KindEmbedded
	if outer.repeated(keyResource) {
		b.Kind, b.Invalid = KindInvalid, InvalidRepeated
		return
	}
	nested, _ := outer.get(keyResource)
	inner := readObject(nested)
	if inner.repeated(keyURI) || inner.repeated(keyText) || inner.repeated(keyBlob) {
		b.Kind, b.Invalid = KindInvalid, InvalidRepeated
		inner.never = inner.never || outer.never || outer.nestedNever
		b.NeverURIs = inner.neverURIs()
		return
	}
	for _, src := range []*object{outer, &inner} {
		has := src.has(keyDisposition)
		switch {
		case src.never, src.nestedNever: // see object for the nested never
			b.Testimony.Disposition = DispositionNever
			b.Testimony.Present |= FieldDisposition
		case has && !src.repeated(keyDisposition) && b.Testimony.Disposition != DispositionNever:
			if d, ok := src.str(keyDisposition); ok && d == string(DispositionRef) {
				b.Testimony.Disposition = DispositionRef
				b.Testimony.Present |= FieldDisposition
			}
		}
	}
	if !inner.isObject {
		return
	}
	if raw, ok := inner.get(keyURI); ok {
		if uri, ok := decodeBounded(raw, MaxURILen); ok {
			b.Testimony.URI = uri
			b.Testimony.Present |= FieldURI
		}
	}
	if raw, ok := inner.get(keyMimeType); ok && !inner.repeated(keyMimeType) {
		if mt, ok := decodeBounded(raw, MaxMimeTypeLen); ok {
			b.Testimony.MimeType = mt
			b.Testimony.Present |= FieldMimeType
			b.MimeType = mt
		}
	}
	if raw, ok := inner.get(keyName); ok && !inner.repeated(keyName) {
		if name, ok := decodeBounded(raw, MaxNameLen); ok {
			b.Testimony.Name = name
			b.Testimony.Present |= FieldName
		}
	}
	rawText, _ := inner.get(keyText)
	b.Text, _ = decodeString(rawText)
	rawBlob, _ := inner.get(keyBlob)
	b.Data, _ = decodeString(rawBlob)
}

// readFields applies the one invalid-field rule to every optional
// testimony field of obj. A field named twice is rejected as a field,
// except that a never in any occurrence of disposition holds.
func readFields(obj *object, link bool) Testimony {
	var t Testimony
	str := func(k key, f Field, max int, dst *string) {
		if !obj.has(k) {
			return
		}
		if s, ok := obj.bounded(k, max); ok && !obj.repeated(k) {
			*dst = s
			t.Present |= f
		} else {
			t.Rejected |= f
		}
	}
	str(keyMimeType, FieldMimeType, MaxMimeTypeLen, &t.MimeType)
	str(keyName, FieldName, MaxNameLen, &t.Name)
	sizeKey := keySizeBytes
	if link {
		sizeKey = keySize
	}
	if raw, has := obj.get(sizeKey); has {
		if n, ok := parseSize(raw); ok && !obj.repeated(sizeKey) {
			t.SizeBytes = n
			t.Present |= FieldSizeBytes
		} else {
			t.Rejected |= FieldSizeBytes
		}
	}
	if link {
		// A ResourceLink carries no digest, expiry or disposition: any
		// such property on it is an unknown property and is ignored.
		return t
	}
	if obj.has(keyDigest) {
		if d, ok := obj.str(keyDigest); ok && validDigest(d) && !obj.repeated(keyDigest) {
			t.Digest = d
			t.Present |= FieldDigest
		} else {
			t.Rejected |= FieldDigest
		}
	}
	str(keyExpiresAt, FieldExpiresAt, MaxExpiresAtLen, &t.ExpiresAt)
	if obj.has(keyDisposition) {
		d, ok := obj.str(keyDisposition)
		switch {
		case obj.never:
			t.Disposition = DispositionNever
			t.Present |= FieldDisposition
		case obj.repeated(keyDisposition):
			t.Rejected |= FieldDisposition
		case ok && d == string(DispositionRef):
			t.Disposition = DispositionRef
			t.Present |= FieldDisposition
		default:
			t.Rejected |= FieldDisposition
		}
	}
	return t
}

// decodeString decodes raw as a JSON string. It reports false for an
// absent value, a non-string, or malformed JSON. Invalid UTF-8 decodes to
// U+FFFD, one per bad byte, and is measured as such.
func decodeString(raw json.RawMessage) (string, bool) {
	raw = schemaTrim(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// decodeBounded decodes raw as a JSON string of at most max code points.
// An encoded form too long to hold max code points is refused without
// decoding: one code point takes at most 12 encoded bytes (a surrogate
// pair escaped as two \uXXXX sequences).
func decodeBounded(raw json.RawMessage, max int) (string, bool) {
	if len(raw) > 12*max+2 {
		return "", false
	}
	s, ok := decodeString(raw)
	if !ok || utf8.RuneCountInString(s) > max {
		return "", false
	}
	return s, true
}

// validDigest reports whether d matches ^sha256:[A-Za-z0-9_-]{43}$.
func validDigest(d string) bool {
	const prefix = "sha256:"
	if len(d) != len(prefix)+43 || d[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(d); i++ {
		c := d[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parseSize reads a sizeBytes value: a JSON number that is an integer (in
// JSON Schema's sense, so 12.0 and 1.2e1 qualify) within 0…2^53−1. It
// shares the strict check's exact reading of the number's text, so no
// value is rounded through a float and a huge exponent costs nothing.
func parseSize(raw json.RawMessage) (int64, bool) {
	lit := schemaTrim(raw)
	if schemaKind(lit) != "number" {
		return 0, false
	}
	n, class := schemaClassifySize(lit)
	if class != schemaSizeOK {
		return 0, false
	}
	return int64(n), true
}
