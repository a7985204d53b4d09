package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

const vGoodDigest = "sha256:uM7OLD5sO8G3SeWw3LirIreZM71523d9_qXxkn8ewpM"

// vRes builds a resource block with a valid uri and extra members, which
// must each start with a comma.
func vRes(extra string) string {
	return `{"type":"resource","uri":"https://example.test/p"` + extra + `}`
}

// vMedia builds an image block from its members after type.
func vMedia(extra string) string { return `{"type":"image"` + extra + `}` }

// vStr quotes s as a JSON string.
func vStr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// vRep repeats s n times and quotes the result as a JSON string.
func vRep(s string, n int) string { return vStr(strings.Repeat(s, n)) }

type vCase struct {
	name   string
	reason string
	in     string
	// prop and constraint are the first violation expected; ok means the
	// block conforms and both are ignored.
	ok         bool
	prop       string
	constraint string
}

func vValidateCases() []vCase {
	const (
		maxLen255  = "maxLength 255"
		maxLen4096 = "maxLength 4096"
		maxLen64   = "maxLength 64"
		typeInt    = "type integer"
		typeStr    = "type string"
		maximum    = "maximum 9007199254740991"
		minimum    = "minimum 0"
		pattern    = "pattern ^sha256:[A-Za-z0-9_-]{43}$"
		dispEnum   = "enum never|ref"
		typeEnum   = "enum text|image|audio|resource"
		beside     = "not allowed beside data"
		required   = "required"
		object     = "JSON object"
	)
	return []vCase{
		// Conforming shapes.
		{name: "text", reason: "text variant needs only type and text", in: `{"type":"text","text":"hi"}`, ok: true},
		{name: "resource minimal", reason: "uri is the one required testimony property", in: vRes(""), ok: true},
		{name: "resource full", reason: "all seven testimony properties within bounds", in: vRes(`,"mimeType":"audio/wav","sizeBytes":12,"digest":"` + vGoodDigest + `","expiresAt":"2030-01-01T00:00:00Z","name":"a.wav","disposition":"never"`), ok: true},
		{name: "image data form", reason: "inline image carries data and mimeType", in: vMedia(`,"data":"AAAA","mimeType":"image/png"`), ok: true},
		{name: "audio data form", reason: "inline audio carries data and mimeType", in: `{"type":"audio","data":"AAAA","mimeType":"audio/wav"}`, ok: true},
		{name: "image uri form full", reason: "the six optional properties are allowed on the uri branch", in: vMedia(`,"uri":"https://x/p","mimeType":"image/png","sizeBytes":1,"digest":"` + vGoodDigest + `","expiresAt":"x","name":"n","disposition":"ref"`), ok: true},
		{name: "audio uri form", reason: "audio gains the same uri branch", in: `{"type":"audio","uri":"https://x/p","disposition":"never"}`, ok: true},
		{name: "unknown extra property", reason: "unknown additional properties are ignored (§8.1, vector 7)", in: vRes(`,"extension":{"unused":true,"deep":[1,[2,{"x":null}]]}`), ok: true},
		{name: "unknown property on text", reason: "text variant defines no disposition, so it is just an unknown property", in: `{"type":"text","text":"t","disposition":"bogus"}`, ok: true},
		{name: "data on resource", reason: "resource variant does not define data; additional properties are allowed", in: vRes(`,"data":5`), ok: true},
		{name: "inline mimeType unbounded", reason: "the 255 bound applies only to the uri branch", in: vMedia(`,"data":"AAAA","mimeType":` + vRep("a", 1000)), ok: true},
		{name: "whitespace around object", reason: "JSON whitespace is not content", in: " \n\t" + vRes("") + "\r\n", ok: true},
		{name: "escaped keys", reason: "object keys compare after unescaping", in: `{"\u0074ype":"resource","\u0075ri":"u"}`, ok: true},

		// uri.
		{name: "uri 4096", reason: "at the bound", in: `{"type":"resource","uri":` + vRep("a", 4096) + `}`, ok: true},
		{name: "uri 4097", reason: "one past the bound", in: `{"type":"resource","uri":` + vRep("a", 4097) + `}`, prop: "uri", constraint: maxLen4096},
		{name: "uri 4096 two-byte", reason: "length counts code points, not bytes", in: `{"type":"resource","uri":` + vRep("é", 4096) + `}`, ok: true},
		{name: "uri 4097 two-byte", reason: "length counts code points, not bytes", in: `{"type":"resource","uri":` + vRep("é", 4097) + `}`, prop: "uri", constraint: maxLen4096},
		{name: "uri not string", reason: "uri must be a string", in: `{"type":"resource","uri":42}`, prop: "uri", constraint: typeStr},
		{name: "uri null", reason: "null is present but not a string", in: `{"type":"resource","uri":null}`, prop: "uri", constraint: typeStr},
		{name: "image uri 4097", reason: "uri branch bounds uri too", in: vMedia(`,"uri":` + vRep("a", 4097)), prop: "uri", constraint: maxLen4096},

		// name.
		{name: "name 255", reason: "at the bound", in: vRes(`,"name":` + vRep("a", 255)), ok: true},
		{name: "name 256", reason: "one past the bound", in: vRes(`,"name":` + vRep("a", 256)), prop: "name", constraint: maxLen255},
		{name: "name 255 two-byte", reason: "510 bytes but 255 code points", in: vRes(`,"name":` + vRep("é", 255)), ok: true},
		{name: "name 256 two-byte", reason: "256 code points", in: vRes(`,"name":` + vRep("é", 256)), prop: "name", constraint: maxLen255},
		{name: "name 255 astral", reason: "an astral character is one code point (a surrogate pair in UTF-16)", in: vRes(`,"name":` + vRep("😀", 255)), ok: true},
		{name: "name 256 astral", reason: "256 code points", in: vRes(`,"name":` + vRep("😀", 256)), prop: "name", constraint: maxLen255},
		{name: "name 255 escaped pairs", reason: "escaped surrogate pairs decode to one code point each", in: vRes(`,"name":"` + strings.Repeat(`\ud83d\ude00`, 255) + `"`), ok: true},
		{name: "name 1 MiB", reason: "vector 17: oversized name", in: vRes(`,"name":` + vRep("x", 1<<20)), prop: "name", constraint: maxLen255},
		{name: "name number", reason: "name must be a string", in: vRes(`,"name":7`), prop: "name", constraint: typeStr},
		{name: "name 255 invalid utf-8", reason: "each invalid byte decodes to one U+FFFD", in: vRes(`,"name":"` + strings.Repeat("\xff", 255) + `"`), ok: true},
		{name: "name 256 invalid utf-8", reason: "each invalid byte decodes to one U+FFFD", in: vRes(`,"name":"` + strings.Repeat("\xff", 256) + `"`), prop: "name", constraint: maxLen255},

		// mimeType.
		{name: "mimeType 255", reason: "at the bound", in: vRes(`,"mimeType":` + vRep("a", 255)), ok: true},
		{name: "mimeType 256", reason: "one past the bound", in: vRes(`,"mimeType":` + vRep("a", 256)), prop: "mimeType", constraint: maxLen255},
		{name: "image uri mimeType 255", reason: "uri branch bound", in: vMedia(`,"uri":"u","mimeType":` + vRep("a", 255)), ok: true},
		{name: "image uri mimeType 256", reason: "uri branch bound", in: vMedia(`,"uri":"u","mimeType":` + vRep("a", 256)), prop: "mimeType", constraint: maxLen255},
		{name: "mimeType bool", reason: "mimeType must be a string", in: vRes(`,"mimeType":true`), prop: "mimeType", constraint: typeStr},

		// expiresAt.
		{name: "expiresAt 64", reason: "at the bound", in: vRes(`,"expiresAt":` + vRep("a", 64)), ok: true},
		{name: "expiresAt 65", reason: "one past the bound", in: vRes(`,"expiresAt":` + vRep("a", 65)), prop: "expiresAt", constraint: maxLen64},
		{name: "expiresAt unparseable", reason: "the schema bounds length, not format (vector 16)", in: vRes(`,"expiresAt":"not-a-date"`), ok: true},
		{name: "expiresAt object", reason: "expiresAt must be a string", in: vRes(`,"expiresAt":{}`), prop: "expiresAt", constraint: typeStr},

		// sizeBytes.
		{name: "sizeBytes -1", reason: "below minimum", in: vRes(`,"sizeBytes":-1`), prop: "sizeBytes", constraint: minimum},
		{name: "sizeBytes 0", reason: "at minimum", in: vRes(`,"sizeBytes":0`), ok: true},
		{name: "sizeBytes -0", reason: "negative zero equals zero", in: vRes(`,"sizeBytes":-0`), ok: true},
		{name: "sizeBytes -0.0", reason: "negative zero equals zero", in: vRes(`,"sizeBytes":-0.0`), ok: true},
		{name: "sizeBytes 3.5", reason: "not an integer", in: vRes(`,"sizeBytes":3.5`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes -3.5", reason: "a fraction fails the type before the minimum", in: vRes(`,"sizeBytes":-3.5`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes 12.0", reason: "zero fraction is an integer", in: vRes(`,"sizeBytes":12.0`), ok: true},
		{name: "sizeBytes 1e2", reason: "exponent form of an integer", in: vRes(`,"sizeBytes":1e2`), ok: true},
		{name: "sizeBytes 1E+2", reason: "upper-case exponent with sign", in: vRes(`,"sizeBytes":1E+2`), ok: true},
		{name: "sizeBytes 1200e-2", reason: "negative exponent that still leaves an integer", in: vRes(`,"sizeBytes":1200e-2`), ok: true},
		{name: "sizeBytes 1234e-2", reason: "negative exponent leaving a fraction", in: vRes(`,"sizeBytes":1234e-2`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes max", reason: "2^53-1 is the maximum", in: vRes(`,"sizeBytes":9007199254740991`), ok: true},
		{name: "sizeBytes max+1", reason: "2^53 is past the maximum", in: vRes(`,"sizeBytes":9007199254740992`), prop: "sizeBytes", constraint: maximum},
		{name: "sizeBytes max+2", reason: "float64 would round 2^53+1 down; exact comparison must not", in: vRes(`,"sizeBytes":9007199254740993`), prop: "sizeBytes", constraint: maximum},
		{name: "sizeBytes max.0", reason: "2^53-1 written with a zero fraction", in: vRes(`,"sizeBytes":9007199254740991.0`), ok: true},
		{name: "sizeBytes max shifted", reason: "2^53-1 written with a fraction and exponent", in: vRes(`,"sizeBytes":900719925474099.1e1`), ok: true},
		{name: "sizeBytes near max fraction", reason: "float64 would round this to 2^53-1; exact reading sees a fraction", in: vRes(`,"sizeBytes":9007199254740990.9`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes tiny", reason: "float64 would read 1e-400 as 0", in: vRes(`,"sizeBytes":1e-400`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes 1e400", reason: "huge integer", in: vRes(`,"sizeBytes":1e400`), prop: "sizeBytes", constraint: maximum},
		{name: "sizeBytes -1e400", reason: "huge negative integer", in: vRes(`,"sizeBytes":-1e400`), prop: "sizeBytes", constraint: minimum},
		{name: "sizeBytes huge exponent", reason: "an exponent past int64 must saturate, not overflow or allocate", in: vRes(`,"sizeBytes":1e999999999999999999999999`), prop: "sizeBytes", constraint: maximum},
		{name: "sizeBytes huge negative exponent", reason: "an exponent past int64 must saturate", in: vRes(`,"sizeBytes":5e-999999999999999999999999`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes zero huge exponent", reason: "zero times anything is zero", in: vRes(`,"sizeBytes":0e999999999999`), ok: true},
		{name: "sizeBytes long digits", reason: "many digits past the maximum", in: vRes(`,"sizeBytes":` + strings.Repeat("9", 400)), prop: "sizeBytes", constraint: maximum},
		{name: "sizeBytes string", reason: "a numeric string is not an integer", in: vRes(`,"sizeBytes":"12"`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes null", reason: "null is present but not an integer", in: vRes(`,"sizeBytes":null`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes bool", reason: "not an integer", in: vRes(`,"sizeBytes":true`), prop: "sizeBytes", constraint: typeInt},
		{name: "sizeBytes array", reason: "not an integer", in: vRes(`,"sizeBytes":[1]`), prop: "sizeBytes", constraint: typeInt},

		// digest.
		{name: "digest good", reason: "sha256: and 43 base64url characters", in: vRes(`,"digest":"` + vGoodDigest + `"`), ok: true},
		{name: "digest short", reason: "42 characters", in: vRes(`,"digest":"sha256:` + strings.Repeat("A", 42) + `"`), prop: "digest", constraint: pattern},
		{name: "digest long", reason: "44 characters", in: vRes(`,"digest":"sha256:` + strings.Repeat("A", 44) + `"`), prop: "digest", constraint: pattern},
		{name: "digest padded", reason: "'=' padding is outside the alphabet", in: vRes(`,"digest":"sha256:` + strings.Repeat("A", 42) + `="`), prop: "digest", constraint: pattern},
		{name: "digest std alphabet", reason: "'+' belongs to standard base64, not base64url", in: vRes(`,"digest":"sha256:` + strings.Repeat("A", 42) + `+"`), prop: "digest", constraint: pattern},
		{name: "digest non-ascii", reason: "a multi-byte letter is outside the alphabet", in: vRes(`,"digest":"sha256:` + strings.Repeat("A", 42) + `é"`), prop: "digest", constraint: pattern},
		{name: "digest wrong prefix", reason: "only sha256 is defined", in: vRes(`,"digest":"sha512:` + strings.Repeat("A", 43) + `"`), prop: "digest", constraint: pattern},
		{name: "digest upper prefix", reason: "the prefix is case-sensitive", in: vRes(`,"digest":"SHA256:` + strings.Repeat("A", 43) + `"`), prop: "digest", constraint: pattern},
		{name: "digest trailing newline", reason: "$ anchors at the very end", in: vRes(`,"digest":"` + vGoodDigest + `\n"`), prop: "digest", constraint: pattern},
		{name: "digest number", reason: "digest must be a string", in: vRes(`,"digest":1`), prop: "digest", constraint: typeStr},

		// disposition.
		{name: "disposition never", reason: "enum member", in: vRes(`,"disposition":"never"`), ok: true},
		{name: "disposition ref", reason: "enum member", in: vRes(`,"disposition":"ref"`), ok: true},
		{name: "disposition other", reason: "not an enum member", in: vRes(`,"disposition":"always"`), prop: "disposition", constraint: dispEnum},
		{name: "disposition case", reason: "enum compares exactly", in: vRes(`,"disposition":"Never"`), prop: "disposition", constraint: dispEnum},
		{name: "disposition null", reason: "null is not an enum member", in: vRes(`,"disposition":null`), prop: "disposition", constraint: dispEnum},
		{name: "disposition number", reason: "not an enum member", in: vRes(`,"disposition":1`), prop: "disposition", constraint: dispEnum},

		// Image and audio branch rules.
		{name: "data and uri", reason: "oneOf: uri is forbidden beside data", in: vMedia(`,"data":"AAAA","mimeType":"image/png","uri":"u"`), prop: "uri", constraint: beside},
		{name: "data and disposition", reason: "§8: disposition beside inline data is schema-invalid (vector 2)", in: vMedia(`,"data":"AAAA","mimeType":"image/png","disposition":"never"`), prop: "disposition", constraint: beside},
		{name: "audio data and disposition", reason: "same rule for audio", in: `{"type":"audio","data":"AAAA","mimeType":"audio/wav","disposition":"ref"}`, prop: "disposition", constraint: beside},
		{name: "data and sizeBytes", reason: "testimony belongs to the uri branch only", in: vMedia(`,"data":"AAAA","mimeType":"image/png","sizeBytes":4`), prop: "sizeBytes", constraint: beside},
		{name: "data and digest", reason: "testimony belongs to the uri branch only", in: vMedia(`,"data":"AAAA","mimeType":"image/png","digest":"` + vGoodDigest + `"`), prop: "digest", constraint: beside},
		{name: "data and expiresAt", reason: "testimony belongs to the uri branch only", in: vMedia(`,"data":"AAAA","mimeType":"image/png","expiresAt":"x"`), prop: "expiresAt", constraint: beside},
		{name: "data and name", reason: "testimony belongs to the uri branch only", in: vMedia(`,"data":"AAAA","mimeType":"image/png","name":"n"`), prop: "name", constraint: beside},
		{name: "data without mimeType", reason: "data branch requires mimeType", in: vMedia(`,"data":"AAAA"`), prop: "mimeType", constraint: required},
		{name: "data not string", reason: "data must be a string", in: vMedia(`,"data":5,"mimeType":"image/png"`), prop: "data", constraint: typeStr},
		{name: "data null", reason: "data present as null still selects the data branch", in: vMedia(`,"data":null,"mimeType":"image/png"`), prop: "data", constraint: typeStr},
		{name: "data mimeType not string", reason: "data branch mimeType must still be a string", in: vMedia(`,"data":"AAAA","mimeType":1`), prop: "mimeType", constraint: typeStr},
		{name: "image neither", reason: "no data and no uri: the data branch is missing data", in: vMedia(`,"mimeType":"image/png"`), prop: "data", constraint: required},
		{name: "image only type", reason: "data branch needs data first", in: vMedia(""), prop: "data", constraint: required},
		{name: "image testimony without uri", reason: "testimony points at the uri branch, which needs uri", in: vMedia(`,"name":"n","disposition":"never"`), prop: "uri", constraint: required},

		// Text and resource requirements.
		{name: "text missing", reason: "text variant requires text", in: `{"type":"text"}`, prop: "text", constraint: required},
		{name: "text not string", reason: "text must be a string", in: `{"type":"text","text":1}`, prop: "text", constraint: typeStr},
		{name: "text 1 MiB", reason: "text is unbounded", in: `{"type":"text","text":` + vRep("x", 1<<20) + `}`, ok: true},
		{name: "resource without uri", reason: "resource variant requires uri", in: `{"type":"resource","name":"n"}`, prop: "uri", constraint: required},

		// Type.
		{name: "unknown type", reason: "fails every branch", in: `{"type":"video","uri":"u"}`, prop: "type", constraint: typeEnum},
		{name: "type case", reason: "const compares exactly", in: `{"type":"Text","text":"t"}`, prop: "type", constraint: typeEnum},
		{name: "type number", reason: "fails every branch", in: `{"type":1}`, prop: "type", constraint: typeEnum},
		{name: "type null", reason: "fails every branch", in: `{"type":null,"text":"t"}`, prop: "type", constraint: typeEnum},
		{name: "missing type", reason: "every branch requires type", in: `{"text":"t"}`, prop: "type", constraint: required},
		{name: "empty object", reason: "every branch requires type", in: `{}`, prop: "type", constraint: required},

		// Not objects.
		{name: "null", reason: "not an object", in: `null`, constraint: object},
		{name: "array", reason: "not an object", in: `[{"type":"text","text":"t"}]`, constraint: object},
		{name: "number", reason: "not an object", in: `12`, constraint: object},
		{name: "string", reason: "not an object", in: `"text"`, constraint: object},
		{name: "bool", reason: "not an object", in: `true`, constraint: object},
		{name: "empty input", reason: "not JSON", in: ``, constraint: object},
		{name: "truncated", reason: "not JSON", in: `{"type":"text",`, constraint: object},
		{name: "trailing garbage", reason: "not JSON", in: `{"type":"text","text":"t"} x`, constraint: object},
		{name: "two objects", reason: "not one JSON value", in: `{"type":"text","text":"t"}{}`, constraint: object},
		{name: "nbsp before object", reason: "U+00A0 is not JSON whitespace", in: "\u00a0" + `{"type":"text","text":"t"}`, constraint: object},

		// Order of reporting.
		{name: "required before properties", reason: "required is reported before property constraints", in: `{"type":"resource","name":` + vRep("a", 300) + `}`, prop: "uri", constraint: required},
		{name: "uri before name", reason: "properties follow RFC order", in: `{"type":"resource","name":1,"uri":1}`, prop: "uri", constraint: typeStr},
		{name: "sizeBytes before disposition", reason: "properties follow RFC order", in: vRes(`,"disposition":"x","sizeBytes":-1`), prop: "sizeBytes", constraint: minimum},
		{name: "property before branch rule", reason: "branch rules come last", in: vMedia(`,"data":"AAAA","mimeType":"image/png","disposition":"x"`), prop: "disposition", constraint: dispEnum},
	}
}

func TestValidateTable(t *testing.T) {
	for _, tc := range vValidateCases() {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(json.RawMessage(tc.in))
			all := ValidateAll(json.RawMessage(tc.in))
			if tc.ok {
				if err != nil {
					t.Fatalf("Validate = %v, want nil (%s)", err, tc.reason)
				}
				if all != nil {
					t.Fatalf("ValidateAll = %v, want nil (%s)", all, tc.reason)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Validate = %v (%T), want *SchemaError (%s)", err, err, tc.reason)
			}
			if se.Property != tc.prop || se.Constraint != tc.constraint {
				t.Errorf("Validate: Property, Constraint = %q, %q; want %q, %q (%s)",
					se.Property, se.Constraint, tc.prop, tc.constraint, tc.reason)
			}
			if len(se.Value) > 64 {
				t.Errorf("Value is %d bytes, want a short description", len(se.Value))
			}
		})
	}
}

func TestValidateAllListsEveryViolation(t *testing.T) {
	type pc struct{ Property, Constraint string }
	tests := []struct {
		name   string
		reason string
		in     string
		want   []pc
	}{
		{
			name:   "resource with every field wrong",
			reason: "required first, then each property in RFC order",
			in: `{"type":"resource","disposition":"x","name":` + vRep("n", 256) + `,"expiresAt":` + vRep("e", 65) +
				`,"digest":"md5:x","sizeBytes":-2,"mimeType":` + vRep("m", 256) + `}`,
			want: []pc{
				{"uri", "required"},
				{"mimeType", "maxLength 255"},
				{"sizeBytes", "minimum 0"},
				{"digest", "pattern ^sha256:[A-Za-z0-9_-]{43}$"},
				{"expiresAt", "maxLength 64"},
				{"name", "maxLength 255"},
				{"disposition", "enum never|ref"},
			},
		},
		{
			name:   "inline image carrying reference testimony",
			reason: "property constraints, then the branch rule for each forbidden property",
			in:     vMedia(`,"data":"AAAA","name":"n","uri":5,"disposition":"never"`),
			want: []pc{
				{"mimeType", "required"},
				{"uri", "type string"},
				{"uri", "not allowed beside data"},
				{"name", "not allowed beside data"},
				{"disposition", "not allowed beside data"},
			},
		},
		{
			name:   "non-object",
			reason: "a single whole-block violation",
			in:     `[]`,
			want:   []pc{{"", "JSON object"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []pc
			for _, e := range ValidateAll(json.RawMessage(tt.in)) {
				got = append(got, pc{e.Property, e.Constraint})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateAll mismatch (-want +got) (%s):\n%s", tt.reason, diff)
			}
		})
	}
}

func TestValidateErrorFormat(t *testing.T) {
	err := Validate(json.RawMessage(vRes(`,"sizeBytes":9007199254740992`)))
	if got, want := fmt.Sprint(err), "convert: sizeBytes breaks maximum 9007199254740991"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	err = Validate(json.RawMessage(`null`))
	if got, want := fmt.Sprint(err), "convert: block breaks JSON object"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestValidateValueDescriptions(t *testing.T) {
	tests := []struct {
		name, reason, in, want string
	}{
		{"not JSON", "unparseable input is told apart from non-objects", `{`, "not JSON"},
		{"array kind", "non-object names its JSON kind", `[]`, "array"},
		{"length", "maxLength reports the code-point count", vRes(`,"name":` + vRep("é", 300)), "300 code points"},
		{"number literal", "range failures echo the literal", vRes(`,"sizeBytes":9007199254740992`), "9007199254740992"},
		{"clipped literal", "long literals are clipped", vRes(`,"sizeBytes":` + strings.Repeat("9", 400)), strings.Repeat("9", 40) + "..."},
		{"quoted ascii", "strings are quoted in ASCII", vRes(`,"disposition":"nev\u202eer"`), `"nev\u202eer"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var se *SchemaError
			if !errors.As(Validate(json.RawMessage(tt.in)), &se) {
				t.Fatalf("want *SchemaError (%s)", tt.reason)
			}
			if se.Value != tt.want {
				t.Errorf("Value = %q, want %q (%s)", se.Value, tt.want, tt.reason)
			}
		})
	}
}

func TestValidateDeepNesting(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		depth  int
		ok     bool
	}{
		{"moderate", "unknown properties are never inspected, however nested", 1000, true},
		{"extreme", "beyond the JSON decoder's depth limit the input is refused, without panicking", 200000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := vRes(`,"x":` + strings.Repeat("[", tt.depth) + strings.Repeat("]", tt.depth))
			err := Validate(json.RawMessage(in))
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok=%v (%s)", err, tt.ok, tt.reason)
			}
			if err != nil {
				var se *SchemaError
				if !errors.As(err, &se) || se.Property != "" || se.Constraint != "JSON object" {
					t.Errorf("Validate = %#v, want the JSON object error (%s)", err, tt.reason)
				}
			}
		})
	}
}

// vLoadVectors loads the bundled RFC-005 vectors with every block already
// expanded the way the conformance runner expands them.
func vLoadVectors(t testing.TB) []vectors.Case {
	t.Helper()
	vf, err := vectors.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]vectors.Case, len(vf.Cases))
	for i, c := range vf.Cases {
		if out[i], err = c.Expand("http://127.0.0.1:9"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestValidateRFCVectors(t *testing.T) {
	checked := 0
	cases := vLoadVectors(t)
	for _, c := range cases {
		for i, block := range c.Blocks {
			err := Validate(block)
			if got := err == nil; got != c.SchemaValid[i] {
				t.Errorf("%s block %d: Validate valid=%v (err %v), want schemaValid=%v", c.ID, i, got, err, c.SchemaValid[i])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no vector blocks were loaded, so nothing was checked")
	}
}

func FuzzValidate(f *testing.F) {
	for _, tc := range vValidateCases() {
		if len(tc.in) <= 8192 {
			f.Add([]byte(tc.in))
		}
	}
	for _, c := range vLoadVectors(f) {
		for _, block := range c.Blocks {
			if len(block) <= 8192 {
				f.Add([]byte(block))
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		all := ValidateAll(json.RawMessage(in))
		for _, e := range all {
			if e.Constraint == "" || len(e.Value) > 64 {
				t.Fatalf("malformed violation %#v", e)
			}
		}
		if len(all) > 0 {
			return
		}
		// ValidateAll (the emitter's check) and Classify (the host's
		// reading) are separate code paths. A block the strict schema
		// accepts meets every field constraint, so the host must neither
		// reject it whole (P4) nor set a field aside (P3) nor find an
		// inline contradiction (P5) in it.
		b := Classify(json.RawMessage(in))
		switch {
		case b.Kind != KindText && b.Kind != KindInline && b.Kind != KindReference:
			t.Fatalf("schema-valid block classified %s (%s): %s", b.Kind, b.Invalid, in)
		case b.Testimony.Rejected != 0:
			t.Fatalf("schema-valid block had fields rejected %v: %s", b.Testimony.RejectedNames(), in)
		case b.Contradiction:
			t.Fatalf("schema-valid block read as an inline contradiction: %s", in)
		}
	})
}
