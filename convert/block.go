package convert

import "strconv"

// Kind is how the host reads one content block.
type Kind string

// The kinds [Classify] reports.
const (
	// KindText is a text block: context-sized by construction.
	KindText Kind = "text"
	// KindInline is an image or audio block carrying base64 data.
	KindInline Kind = "inline"
	// KindReference is a resource block with a top-level uri, an image or
	// audio block in uri form, or an MCP resource_link mapped onto testimony.
	KindReference Kind = "reference"
	// KindEmbedded is MCP's embedded resource: a resource block whose
	// contents sit in a nested "resource" object.
	KindEmbedded Kind = "embedded"
	// KindInvalid is a block rejected whole: not an object, no type, a
	// property the host must read named more than once, or a reference
	// whose uri is missing, not a string or too long.
	KindInvalid Kind = "invalid"
	// KindUnknown is an object whose type this library does not know. Hosts
	// pass it on under their own default policy.
	KindUnknown Kind = "unknown"
)

// Disposition is the context disposition a server requested (RFC-005 §3.1).
type Disposition string

// The dispositions a block may carry. The zero value means no testimony.
const (
	DispositionAbsent Disposition = ""
	DispositionNever  Disposition = "never"
	DispositionRef    Disposition = "ref"
)

// Field names one property of a reference's testimony. Fields form a bit
// set: [Testimony.Present] records which optional fields the block carried
// with a valid value.
type Field uint8

// The testimony fields, in the order RFC-005 §3 lists them.
const (
	FieldURI Field = 1 << iota
	FieldMimeType
	FieldSizeBytes
	FieldDigest
	FieldExpiresAt
	FieldName
	FieldDisposition
)

// fieldOrder is the canonical order used for rejected-field lists.
var fieldOrder = [...]Field{FieldURI, FieldMimeType, FieldSizeBytes, FieldDigest, FieldExpiresAt, FieldName, FieldDisposition}

// String returns the field's wire property name, such as "sizeBytes".
func (f Field) String() string {
	switch f {
	case FieldURI:
		return "uri"
	case FieldMimeType:
		return "mimeType"
	case FieldSizeBytes:
		return "sizeBytes"
	case FieldDigest:
		return "digest"
	case FieldExpiresAt:
		return "expiresAt"
	case FieldName:
		return "name"
	case FieldDisposition:
		return "disposition"
	}
	return "Field(" + strconv.Itoa(int(f)) + ")"
}

// Testimony is what a reference block claims (RFC-005 §3). Every value is a
// claim, not a fact. A field the block did not carry, or carried with a value
// that broke its constraint, is absent: its bit is clear in Present and
// its value is the zero value. Values are kept exactly as sent (never
// truncated, never coerced); they are not display-safe until they pass
// through package label.
type Testimony struct {
	URI         string
	MimeType    string
	SizeBytes   int64
	Digest      string
	ExpiresAt   string
	Name        string
	Disposition Disposition
	// Present holds a bit for every field above that the block carried
	// with a valid value. FieldURI is set for every reference.
	Present Field
	// Rejected holds a bit for every optional field the block carried with
	// a value that broke its constraint. Such a field is absent.
	Rejected Field
}

// RejectedNames lists the rejected fields by wire name in RFC order, or
// nil when none was rejected.
func (t Testimony) RejectedNames() []string {
	if t.Rejected == 0 {
		return nil
	}
	var out []string
	for _, f := range fieldOrder {
		if t.Rejected&f != 0 {
			out = append(out, f.String())
		}
	}
	return out
}

// Has reports whether the testimony carries field f.
func (t Testimony) Has(f Field) bool { return t.Present&f != 0 }

// Never reports whether the testimony asks that the payload and uri never
// reach the model.
func (t Testimony) Never() bool { return t.Disposition == DispositionNever }

// Block is the host's reading of one raw content block.
type Block struct {
	// Kind is how the host treats the block.
	Kind Kind
	// Type is the block's wire "type" when it was a string (unsanitized).
	Type string
	// Testimony is the reference's testimony (KindReference), or the uri and
	// type an embedded resource names (KindEmbedded). Zero otherwise.
	Testimony Testimony
	// Text is a text block's text, or an embedded resource's text contents.
	Text string
	// Data is an inline block's base64 data or an embedded resource's blob.
	// Views never show it when Withheld is true.
	Data string
	// MimeType is an inline block's or embedded resource's claimed type
	// (unsanitized, unbounded by the schema for inline data).
	MimeType string
	// Contradiction is set on an image or audio block that carries data
	// together with a disposition (at the top level, or inside its
	// annotations or _meta) or a uri: its data must be withheld.
	Contradiction bool
	// Link is set when the block was an MCP resource_link.
	Link bool
	// Invalid says why a KindInvalid block was rejected whole.
	Invalid InvalidReason
	// NeverURIs lists the uris a block calls never beyond its own
	// testimony. For a block rejected whole, of a type this library does
	// not know, or of type text, whose top level says never (its
	// "disposition", or one in its "annotations" or "_meta"), it holds
	// each "uri" the block names at that level. For every block but an
	// embedded resource (which reads its own) it holds each "uri" its
	// nested "resource" objects name when the block or that object says
	// never; a valid resource_link maps with no disposition, so there
	// only the nested object's own never counts. Only strings within the
	// schema's bound count. A never in a server's content marks these
	// uris as it marks a reference's; serverless content withholds them
	// within itself.
	NeverURIs []string
}

// InvalidReason says why a block was rejected whole.
type InvalidReason string

// The reasons a block is [KindInvalid].
const (
	InvalidNone      InvalidReason = ""
	InvalidNotObject InvalidReason = "not a JSON object"
	// InvalidUnreadable: the block opens as an object but no JSON decoder
	// reads it whole (it is cut short, has trailing bytes, or nests past
	// the decoder's depth limit).
	InvalidUnreadable InvalidReason = "not readable as JSON"
	InvalidNoType     InvalidReason = "no string type"
	InvalidURIMissing InvalidReason = "uri missing"
	InvalidURIType    InvalidReason = "uri not a string"
	InvalidURITooLong InvalidReason = "uri longer than 4096 characters"
	InvalidTextType   InvalidReason = "text not a string"
	InvalidDataType   InvalidReason = "data not a string"
	// InvalidRepeated: the block names its type, its uri, its text or data,
	// or its nested resource more than once, so which one counts cannot be
	// known.
	InvalidRepeated InvalidReason = "a property named more than once"
)

// IsReference reports whether the block registers a record: a reference.
func (b Block) IsReference() bool { return b.Kind == KindReference }

// URI returns the uri the block names, for a reference or an embedded
// resource, and "" otherwise.
func (b Block) URI() string { return b.Testimony.URI }
