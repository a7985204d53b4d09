package convert

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of the RFC-005 §8 content-block schema.
// The schema's bounds are the ones Classify applies (MaxURILen and its
// neighbours); these name the size bound's forms for the exact reader.
const (
	// schemaMaxSize is 2^53-1, the largest integer JSON readers agree on.
	schemaMaxSize uint64 = MaxSizeBytes
	// schemaMaxSizeDigits is the number of decimal digits in schemaMaxSize.
	schemaMaxSizeDigits = 16
)

// Constraint phrases carried by SchemaError.Constraint.
const (
	ruleObject      = "JSON object"
	ruleRequired    = "required"
	ruleTypeEnum    = "enum text|image|audio|resource"
	ruleString      = "type string"
	ruleInteger     = "type integer"
	ruleMinimum     = "minimum 0"
	ruleMaximum     = "maximum 9007199254740991"
	ruleDigest      = "pattern ^sha256:[A-Za-z0-9_-]{43}$"
	ruleDisposition = "enum never|ref"
	ruleBesideData  = "not allowed beside data"
	ruleUnique      = "unique property names"
)

// SchemaError is one way a content block breaks the strict RFC-005 §8
// schema. [Validate] returns it as an error; [ValidateAll] returns every
// one found.
//
// Input that is not JSON at all, and JSON that is not an object, both give
// a SchemaError whose Property is "" and whose Constraint is "JSON object";
// Value is then "not JSON" or the JSON kind found ("array", "null", ...).
type SchemaError struct {
	// Property is the wire name of the offending property, such as
	// "sizeBytes", or "" when the block as a whole is at fault.
	Property string
	// Constraint is a short phrase naming the schema rule that was broken,
	// such as "maxLength 255", "type integer", "required" or
	// "not allowed beside data".
	Constraint string
	// Value optionally describes what was found, kept short and ASCII:
	// a JSON kind, a length in code points, a clipped number literal or a
	// clipped quoted string. It may be empty.
	Value string
}

// Error reports the property and the constraint it breaks, for example
// "convert: sizeBytes breaks maximum 9007199254740991". A fault of the
// whole block is reported under the name "block". Value is not included.
func (e *SchemaError) Error() string {
	name := e.Property
	if name == "" {
		name = "block"
	}
	return "convert: " + name + " breaks " + e.Constraint
}

// Validate reports whether raw is a content block that the strict schema of
// MCPL Appendix B.1, as amended by RFC-005 §8, accepts. It
// returns nil for a conforming block and otherwise a *[SchemaError]
// describing the first violation, in this order: the block's shape (a
// JSON object in which no object names a property twice), its type, then
// missing required properties, then property constraints in the
// RFC order uri, mimeType, sizeBytes, digest, expiresAt, name, disposition
// (a variant's own text or data property comes before them), then the
// image and audio branch rules.
//
// A property named twice, in the block itself or in any object nested in
// it (names compare after unescaping), breaks the constraint
// "unique property names". The violation's Property is the block's
// top-level property concerned, and its Value is empty for a repeat at the
// top level and the quoted repeated name for a nested one. A JSON decoder
// would keep the last occurrence silently; other readers may keep the
// first, so an emitter must not send either. The remaining constraints are
// checked against the last occurrence.
//
// Validate is the emitter's check: it is stricter than the way a host
// treats a block (see [Classify]), where a bad optional field is merely
// dropped. Numbers are compared exactly, strings are measured in Unicode
// code points (an invalid UTF-8 byte counts as one, as the U+FFFD it
// decodes to), and unknown additional properties are allowed. Input that
// is not a JSON object is rejected with Property "" and Constraint
// "JSON object". Validate never panics.
func Validate(raw json.RawMessage) error {
	if errs := ValidateAll(raw); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ValidateAll is like [Validate] but returns every violation found, in
// the same order, or nil when the block conforms. The first element is
// the error Validate returns. Repeated property names are reported once
// for each top-level property concerned, at most 16 of them.
func ValidateAll(raw json.RawMessage) []*SchemaError {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		found := "not JSON"
		if json.Valid(raw) {
			found = schemaKind(trimmed)
		}
		return []*SchemaError{{Constraint: ruleObject, Value: found}}
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil {
		return []*SchemaError{{Constraint: ruleObject, Value: "not JSON"}}
	}
	c := schemaChecker{props: props}
	for _, d := range findDuplicates(raw) {
		if d.atTop {
			c.fail(schemaName(d.top), ruleUnique, "")
		} else {
			c.fail(schemaName(d.top), ruleUnique, schemaQuote(d.nested))
		}
	}
	c.block()
	return c.errs
}

// schemaName is a property name as a SchemaError carries it: ASCII, with
// anything else escaped, and clipped like a quoted value.
func schemaName(name string) string {
	q := schemaQuote(name)
	if strings.HasSuffix(q, `"...`) {
		return q[1:len(q)-4] + "..."
	}
	return q[1 : len(q)-1]
}

// schemaChecker collects the violations of one decoded block.
type schemaChecker struct {
	props map[string]json.RawMessage
	errs  []*SchemaError
}

func (c *schemaChecker) fail(prop, constraint, value string) {
	c.errs = append(c.errs, &SchemaError{Property: prop, Constraint: constraint, Value: value})
}

func (c *schemaChecker) has(prop string) bool {
	_, ok := c.props[prop]
	return ok
}

// block dispatches on the type property; the four variants' type constants
// differ, so at most one branch of the schema's oneOf can ever match.
func (c *schemaChecker) block() {
	raw, ok := c.props["type"]
	if !ok {
		c.fail("type", ruleRequired, "")
		return
	}
	typ, isString := decodeString(raw)
	if !isString {
		c.fail("type", ruleTypeEnum, schemaKind(raw))
		return
	}
	switch typ {
	case "text":
		c.text()
	case "image", "audio":
		c.media()
	case "resource":
		c.resource()
	default:
		c.fail("type", ruleTypeEnum, schemaQuote(typ))
	}
}

func (c *schemaChecker) text() {
	if !c.has("text") {
		c.fail("text", ruleRequired, "")
		return
	}
	c.checkString("text", 0)
}

func (c *schemaChecker) resource() {
	if !c.has("uri") {
		c.fail("uri", ruleRequired, "")
	}
	c.testimony(MaxMimeTypeLen)
}

// mediaReferenceOnly lists, in RFC order, the properties an image or audio block
// may carry only in its uri form.
var mediaReferenceOnly = [...]string{"uri", "sizeBytes", "digest", "expiresAt", "name", "disposition"}

// media checks an image or audio block. Its schema is a oneOf of a data
// form (type, data and mimeType required; none of mediaReferenceOnly allowed)
// and a uri form (type and uri required; data not allowed; mimeType at most
// 255 code points). The two are exclusive on uri, so the block is held to
// the data form when it carries data, to the uri form when it carries uri
// without data, and otherwise to whichever its other properties suggest.
func (c *schemaChecker) media() {
	hasData, hasURI := c.has("data"), c.has("uri")
	dataForm := hasData
	if !hasData && !hasURI {
		dataForm = true
		for _, p := range mediaReferenceOnly[1:] {
			if c.has(p) {
				dataForm = false
				break
			}
		}
	}

	if dataForm {
		if !hasData {
			c.fail("data", ruleRequired, "")
		}
		if !c.has("mimeType") {
			c.fail("mimeType", ruleRequired, "")
		}
	} else if !hasURI {
		c.fail("uri", ruleRequired, "")
	}

	c.checkString("data", 0)
	mimeBound := 0
	if !dataForm {
		mimeBound = MaxMimeTypeLen
	}
	c.testimony(mimeBound)

	if dataForm {
		for _, p := range mediaReferenceOnly {
			if c.has(p) {
				c.fail(p, ruleBesideData, "")
			}
		}
	}
}

// testimony checks the seven testimony properties that are present, in RFC
// order. mimeBound is the mimeType length bound, 0 for none.
func (c *schemaChecker) testimony(mimeBound int) {
	c.checkString("uri", MaxURILen)
	c.checkString("mimeType", mimeBound)
	c.checkSizeBytes()
	c.checkDigest()
	c.checkString("expiresAt", MaxExpiresAtLen)
	c.checkString("name", MaxNameLen)
	c.checkDisposition()
}

// checkString checks that prop, when present, is a string of at most max
// code points (any length when max is 0).
func (c *schemaChecker) checkString(prop string, max int) {
	raw, ok := c.props[prop]
	if !ok {
		return
	}
	s, isString := decodeString(raw)
	if !isString {
		c.fail(prop, ruleString, schemaKind(raw))
		return
	}
	if max <= 0 || len(s) <= max {
		return
	}
	if n := utf8.RuneCountInString(s); n > max {
		c.fail(prop, "maxLength "+strconv.Itoa(max), strconv.Itoa(n)+" code points")
	}
}

func (c *schemaChecker) checkSizeBytes() {
	raw, ok := c.props["sizeBytes"]
	if !ok {
		return
	}
	lit := schemaTrim(raw)
	if schemaKind(lit) != "number" {
		c.fail("sizeBytes", ruleInteger, schemaKind(lit))
		return
	}
	switch _, class := schemaClassifySize(lit); class {
	case schemaSizeFraction:
		c.fail("sizeBytes", ruleInteger, "number "+schemaClip(string(lit)))
	case schemaSizeNegative:
		c.fail("sizeBytes", ruleMinimum, schemaClip(string(lit)))
	case schemaSizeTooLarge:
		c.fail("sizeBytes", ruleMaximum, schemaClip(string(lit)))
	}
}

func (c *schemaChecker) checkDigest() {
	raw, ok := c.props["digest"]
	if !ok {
		return
	}
	s, isString := decodeString(raw)
	if !isString {
		c.fail("digest", ruleString, schemaKind(raw))
		return
	}
	if !validDigest(s) {
		c.fail("digest", ruleDigest, schemaQuote(s))
	}
}

func (c *schemaChecker) checkDisposition() {
	raw, ok := c.props["disposition"]
	if !ok {
		return
	}
	s, isString := decodeString(raw)
	switch {
	case !isString:
		c.fail("disposition", ruleDisposition, schemaKind(raw))
	case s != string(DispositionNever) && s != string(DispositionRef):
		c.fail("disposition", ruleDisposition, schemaQuote(s))
	}
}

// schemaSizeClass is the exact verdict on a sizeBytes number literal.
type schemaSizeClass int

const (
	schemaSizeOK       schemaSizeClass = iota // an integer in [0, 2^53-1]
	schemaSizeFraction                        // not an integer
	schemaSizeNegative                        // an integer below 0
	schemaSizeTooLarge                        // an integer above 2^53-1
)

// schemaClassifySize classifies a JSON number literal exactly, without rounding
// through float64 and without materializing huge exponents: 1e2 and 12.0
// are integers, 1e-400 is not, and 1e999999999 is too large.
func schemaClassifySize(lit []byte) (uint64, schemaSizeClass) {
	i := 0
	negative := false
	if i < len(lit) && lit[i] == '-' {
		negative = true
		i++
	}
	start := i
	for i < len(lit) && schemaIsDigit(lit[i]) {
		i++
	}
	intPart := lit[start:i]
	var fracPart []byte
	if i < len(lit) && lit[i] == '.' {
		i++
		start = i
		for i < len(lit) && schemaIsDigit(lit[i]) {
			i++
		}
		fracPart = lit[start:i]
	}
	var exp int64
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		expNegative := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			expNegative = lit[i] == '-'
			i++
		}
		// Saturate: any exponent beyond a billion decides the verdict
		// on its own, whatever the digits.
		const expLimit = 1_000_000_000
		for ; i < len(lit) && schemaIsDigit(lit[i]); i++ {
			if exp < expLimit {
				exp = exp*10 + int64(lit[i]-'0')
			}
		}
		if exp > expLimit {
			exp = expLimit
		}
		if expNegative {
			exp = -exp
		}
	}
	if i != len(lit) || len(intPart) == 0 {
		return 0, schemaSizeFraction // not a well-formed number; json.Valid prevents this
	}

	// The value is digits × 10^exp, with digits free of leading and
	// trailing zeros.
	digits := make([]byte, 0, len(intPart)+len(fracPart))
	digits = append(digits, intPart...)
	digits = append(digits, fracPart...)
	exp -= int64(len(fracPart))
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return 0, schemaSizeOK // zero, including -0 and 0e5
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if exp < 0 {
		// digits does not end in 0, so no negative power of ten
		// leaves it whole.
		return 0, schemaSizeFraction
	}
	if negative {
		return 0, schemaSizeNegative
	}
	if int64(len(digits))+exp > schemaMaxSizeDigits {
		return 0, schemaSizeTooLarge
	}
	var n uint64
	for _, d := range digits {
		n = n*10 + uint64(d-'0')
	}
	for ; exp > 0; exp-- {
		n *= 10
	}
	if n > schemaMaxSize {
		return 0, schemaSizeTooLarge
	}
	return n, schemaSizeOK
}

func schemaIsDigit(b byte) bool { return '0' <= b && b <= '9' }

// schemaTrim strips JSON whitespace around a value.
func schemaTrim(raw []byte) []byte {
	return bytes.Trim(raw, " \t\r\n")
}

// schemaKind names the JSON kind of a syntactically valid value.
func schemaKind(raw []byte) string {
	raw = schemaTrim(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// schemaClipLength bounds the descriptions kept in SchemaError.Value.
const schemaClipLength = 40

// schemaClip shortens an ASCII literal for SchemaError.Value.
func schemaClip(s string) string {
	if len(s) <= schemaClipLength {
		return s
	}
	return s[:schemaClipLength] + "..."
}

// schemaQuote quotes s in ASCII, clipped so that the quoted text stays
// within schemaClipLength bytes.
func schemaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.QuoteToASCII(s[i : i+size])
		q = q[1 : len(q)-1]
		if b.Len()-1+len(q) > schemaClipLength {
			b.WriteString(`"...`)
			return b.String()
		}
		b.WriteString(q)
		i += size
	}
	b.WriteByte('"')
	return b.String()
}
