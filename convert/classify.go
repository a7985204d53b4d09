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

// Classify reads one raw content block the way a receiving host must
// (behaviors P1–P8). It never fails and never panics: any JSON value, or
// bytes that are not JSON at all, yields a Block. A non-object, or an
// object with no string "type", is [KindInvalid]; a type this package does
// not know is [KindUnknown].
//
// Classify is pure (P9): it registers nothing and touches no shared state.
// Its cost is one pass over the block's top-level properties; an over-long
// string property is rejected from its encoded length without being
// decoded, so a megabyte name costs the parse and nothing after it.
func Classify(raw json.RawMessage) Block {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Block{Kind: KindInvalid, Invalid: InvalidNotObject}
	}
	typ, ok := decodeString(obj["type"])
	if !ok {
		return Block{Kind: KindInvalid, Invalid: InvalidNoType}
	}
	b := Block{Type: typ}
	switch typ {
	case "text":
		text, ok := decodeString(obj["text"])
		if !ok {
			b.Kind, b.Invalid = KindInvalid, InvalidTextType
			return b
		}
		b.Kind, b.Text = KindText, text
	case "image", "audio":
		classifyMedia(&b, obj)
	case "resource":
		if _, hasURI := obj["uri"]; hasURI {
			classifyReference(&b, obj, false)
		} else if nested, ok := obj["resource"]; ok {
			classifyEmbedded(&b, obj, nested)
		} else {
			b.Kind, b.Invalid = KindInvalid, InvalidURIMissing
		}
	case "resource_link":
		classifyReference(&b, obj, true)
	default:
		b.Kind = KindUnknown
	}
	return b
}

// classifyMedia reads an image or audio block: inline when it carries
// data, a reference in uri form otherwise. Data beside a uri or a
// disposition is the inline contradiction of P5.
func classifyMedia(b *Block, obj map[string]json.RawMessage) {
	rawData, hasData := obj["data"]
	if !hasData {
		classifyReference(b, obj, false)
		return
	}
	data, ok := decodeString(rawData)
	if !ok {
		b.Kind, b.Invalid = KindInvalid, InvalidDataType
		return
	}
	b.Kind, b.Data = KindInline, data
	b.MimeType, _ = decodeString(obj["mimeType"])
	_, hasURI := obj["uri"]
	_, hasDisp := obj["disposition"]
	if hasURI || hasDisp {
		b.Contradiction = true
		// The testimony is read only so that a never it carries still
		// counts as a claim on its uri (N1); the block itself makes no
		// stub and registers nothing.
		if uri, ok := decodeBounded(obj["uri"], MaxURILen); ok {
			b.Testimony = readFields(obj, false)
			b.Testimony.URI = uri
			b.Testimony.Present |= FieldURI
		}
	}
}

// classifyReference reads a reference block's testimony. A bad uri rejects
// the block whole (P4); a bad optional field is rejected as a field (P3).
// A resource_link maps onto testimony field for field, with no disposition
// (RFC-005 §8.1).
func classifyReference(b *Block, obj map[string]json.RawMessage, link bool) {
	rawURI, has := obj["uri"]
	if !has {
		b.Kind, b.Invalid = KindInvalid, InvalidURIMissing
		return
	}
	uri, ok := decodeString(rawURI)
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
}

// classifyEmbedded reads MCP's embedded resource. Its uri and type are kept
// as testimony so never claims can reach it (N6); a disposition may sit on
// the outer block or on the nested resource.
func classifyEmbedded(b *Block, outer map[string]json.RawMessage, nested json.RawMessage) {
	b.Kind = KindEmbedded
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(nested, &inner); err != nil || inner == nil {
		return
	}
	if uri, ok := decodeBounded(inner["uri"], MaxURILen); ok {
		b.Testimony.URI = uri
		b.Testimony.Present |= FieldURI
	}
	if mt, ok := decodeBounded(inner["mimeType"], MaxMimeTypeLen); ok {
		b.Testimony.MimeType = mt
		b.Testimony.Present |= FieldMimeType
		b.MimeType = mt
	}
	if name, ok := decodeBounded(inner["name"], MaxNameLen); ok {
		b.Testimony.Name = name
		b.Testimony.Present |= FieldName
	}
	for _, src := range []map[string]json.RawMessage{outer, inner} {
		if d, ok := decodeString(src["disposition"]); ok && (d == string(DispositionNever) || d == string(DispositionRef)) {
			if b.Testimony.Disposition != DispositionNever {
				b.Testimony.Disposition = Disposition(d)
				b.Testimony.Present |= FieldDisposition
			}
		}
	}
	b.Text, _ = decodeString(inner["text"])
	b.Data, _ = decodeString(inner["blob"])
}

// readFields applies the one invalid-field rule (P3) to every optional
// testimony field of obj.
func readFields(obj map[string]json.RawMessage, link bool) Testimony {
	var t Testimony
	str := func(key string, f Field, max int, dst *string) {
		raw, has := obj[key]
		if !has {
			return
		}
		if s, ok := decodeBounded(raw, max); ok {
			*dst = s
			t.Present |= f
		} else {
			t.Rejected |= f
		}
	}
	str("mimeType", FieldMimeType, MaxMimeTypeLen, &t.MimeType)
	str("name", FieldName, MaxNameLen, &t.Name)
	sizeKey := "sizeBytes"
	if link {
		sizeKey = "size"
	}
	if raw, has := obj[sizeKey]; has {
		if n, ok := parseSize(raw); ok {
			t.SizeBytes = n
			t.Present |= FieldSizeBytes
		} else {
			t.Rejected |= FieldSizeBytes
		}
	}
	if link {
		// A ResourceLink carries no digest, expiry or disposition: any
		// such property on it is an unknown property and is ignored (P6).
		return t
	}
	if raw, has := obj["digest"]; has {
		if d, ok := decodeString(raw); ok && validDigest(d) {
			t.Digest = d
			t.Present |= FieldDigest
		} else {
			t.Rejected |= FieldDigest
		}
	}
	str("expiresAt", FieldExpiresAt, MaxExpiresAtLen, &t.ExpiresAt)
	if raw, has := obj["disposition"]; has {
		d, ok := decodeString(raw)
		switch {
		case ok && d == string(DispositionNever):
			t.Disposition = DispositionNever
			t.Present |= FieldDisposition
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
