package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClassifyDuplicateKeys pins how the host reads a block that names a
// property twice (N8, P3, P4). A JSON decoder keeps the last occurrence
// silently; the host must not: a never in any occurrence holds, a repeated
// optional field is set aside, and a repeated uri, type or payload leaves
// the block unreadable.
func TestClassifyDuplicateKeys(t *testing.T) {
	const u = `"uri":"https://s.example/p"`
	tests := []struct {
		name, raw, reason string
		kind              Kind
		never             bool
		rejected          []string
	}{
		{"never-then-ref", `{"type":"resource",` + u + `,"disposition":"never","disposition":"ref"}`, "N8 a never in any occurrence holds", KindReference, true, nil},
		{"ref-then-never", `{"type":"resource",` + u + `,"disposition":"ref","disposition":"never"}`, "N8 whatever the order", KindReference, true, nil},
		{"escaped-repeat", `{"type":"resource",` + u + `,"disposition":"never","dispositio\u006e":"ref"}`, "N8 keys compare after unescaping", KindReference, true, nil},
		{"ref-twice", `{"type":"resource",` + u + `,"disposition":"ref","disposition":"ref"}`, "N8/P3 a repeated disposition without never is set aside", KindReference, false, []string{"disposition"}},
		{"ref-and-bad", `{"type":"resource",` + u + `,"disposition":"ref","disposition":"maybe"}`, "N8/P3 set aside", KindReference, false, []string{"disposition"}},
		{"name-twice", `{"type":"resource",` + u + `,"name":"a","name":"b","disposition":"never"}`, "N8/P3 a repeated name is no testimony", KindReference, true, []string{"name"}},
		{"mime-twice", `{"type":"resource",` + u + `,"mimeType":"a/b","mimeType":"a/b"}`, "N8/P3 even when both agree", KindReference, false, []string{"mimeType"}},
		{"size-twice", `{"type":"resource",` + u + `,"sizeBytes":1,"sizeBytes":2}`, "N8/P3 sizeBytes", KindReference, false, []string{"sizeBytes"}},
		{"digest-twice", `{"type":"resource",` + u + `,"digest":"sha256:` + strings.Repeat("A", 43) + `","digest":"sha256:` + strings.Repeat("B", 43) + `"}`, "N8/P3 digest", KindReference, false, []string{"digest"}},
		{"expiry-twice", `{"type":"resource",` + u + `,"expiresAt":"2030-01-01","expiresAt":"2031-01-01"}`, "N8/P3/E1 expiresAt, which then fails closed", KindReference, false, []string{"expiresAt"}},
		{"link-size-twice", `{"type":"resource_link",` + u + `,"size":1,"size":2}`, "N8/P8 a link's size maps onto sizeBytes", KindReference, false, []string{"sizeBytes"}},
		{"uri-twice", `{"type":"resource","uri":"https://s.example/a","uri":"https://s.example/b","disposition":"never"}`, "N8/P4 the host cannot tell which resource is meant", KindInvalid, false, nil},
		{"image-uri-twice", `{"type":"image","uri":"https://s.example/a","uri":"https://s.example/a"}`, "N8/P4 also in uri form", KindInvalid, false, nil},
		{"type-twice", `{"type":"text","type":"resource",` + u + `}`, "N8 the kind itself is unknown", KindInvalid, false, nil},
		{"text-twice", `{"type":"text","text":"a","text":"b"}`, "N8 which text would be shown is unknown", KindInvalid, false, nil},
		{"data-twice", `{"type":"image","data":"AAAA","data":"BBBB","mimeType":"image/png"}`, "N8 which payload is unknown", KindInvalid, false, nil},
		{"nested-repeat-ignored", `{"type":"resource",` + u + `,"ext":{"a":1,"a":2}}`, "P6 a repeat inside an unknown property is not read by the host", KindReference, false, nil},
		{"same-key-in-siblings", `{"type":"resource",` + u + `,"x":{"name":1},"y":{"name":2},"name":"n"}`, "one key in two objects is no repeat", KindReference, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Classify(json.RawMessage(tt.raw))
			if b.Kind != tt.kind {
				t.Fatalf("kind = %q (%q), want %q (%s)", b.Kind, b.Invalid, tt.kind, tt.reason)
			}
			if got := b.Testimony.Never(); got != tt.never {
				t.Errorf("never = %v, want %v (%s)", got, tt.never, tt.reason)
			}
			got := b.Testimony.RejectedNames()
			if strings.Join(got, ",") != strings.Join(tt.rejected, ",") {
				t.Errorf("rejected = %v, want %v (%s)", got, tt.rejected, tt.reason)
			}
			if b.Testimony.Rejected&FieldName != 0 && b.Testimony.Name != "" {
				t.Errorf("P3: a repeated name kept the value %q", b.Testimony.Name)
			}
		})
	}
}

// TestValidateDuplicateKeys pins the strict check's side (N8, P7): a
// property named twice, at the top level or in any object nested in the
// block, breaks the schema. One key in two different objects does not.
func TestValidateDuplicateKeys(t *testing.T) {
	tests := []struct {
		name, raw, reason string
		prop, value       string // "" prop with ok set means valid
		ok                bool
	}{
		{"disposition", vRes(`,"disposition":"never","disposition":"ref"`), "N8 the seed's duplicated disposition", "disposition", "", false},
		{"escaped", `{"type":"resource","uri":"a","\u0075ri":"b"}`, "N8 keys compare after unescaping", "uri", "", false},
		{"unknown-top", vRes(`,"x":1,"x":1`), "N8 any property, known or not", "x", "", false},
		{"nested-object", vRes(`,"ext":{"a":1,"b":{"c":1,"c":2}}`), "N8 inside a nested object", "ext", `"c"`, false},
		{"nested-array", vRes(`,"ext":[{"a":1},{"b":1,"b":2}]`), "N8 inside an object in an array", "ext", `"b"`, false},
		{"embedded", `{"type":"resource","resource":{"uri":"a","uri":"b"},"uri":"c"}`, "N8 inside an embedded resource", "resource", `"uri"`, false},
		{"siblings", vRes(`,"x":{"a":1},"y":{"a":1},"z":[{"a":1},{"a":1}]`), "one key in sibling objects is no repeat", "", "", true},
		{"nested-same-as-outer", vRes(`,"x":{"uri":"u","x":1}`), "an inner key equal to an outer one is no repeat", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(json.RawMessage(tt.raw))
			if tt.ok {
				if err != nil {
					t.Fatalf("Validate = %v, want nil (%s)", err, tt.reason)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Validate = %v, want a *SchemaError (%s)", err, tt.reason)
			}
			if se.Property != tt.prop || se.Constraint != "unique property names" || se.Value != tt.value {
				t.Errorf("Validate = %q %q %q, want %q %q %q (%s)", se.Property, se.Constraint, se.Value, tt.prop, "unique property names", tt.value, tt.reason)
			}
		})
	}
}

// TestClassifyNeverURIs pins what a block that shows no reference of its
// own still calls never (N1, N8, P4): every uri its top level names under
// a never, only when some disposition there says never, and never a uri
// the host could not accept.
func TestClassifyNeverURIs(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	tests := []struct {
		name, raw, reason string
		kind              Kind
		want              []string
	}{
		{"uri-twice", `{"type":"resource","uri":"a","uri":"b","disposition":"never"}`, "N8 both uris of a repeated uri", KindInvalid, []string{"a", "b"}},
		{"uri-twice-no-never", `{"type":"resource","uri":"a","uri":"b","disposition":"ref"}`, "no never, nothing to carry", KindInvalid, nil},
		{"deep", `{"type":"resource","uri":"a","disposition":"never","x":` + deep + `}`, "N1 past the decoder's depth limit", KindInvalid, []string{"a"}},
		{"deep-before-uri", `{"type":"resource","disposition":"never","x":` + deep + `,"uri":"a"}`, "N1 the top level is read past a value nested too deep", KindInvalid, []string{"a"}},
		{"unclosed-before-uri", `{"type":"resource","disposition":"never","x":[[[,"uri":"a"}`, "nothing past a value that never ends is read", KindInvalid, nil},
		{"cut-short", `{"type":"resource","uri":"a","disposition":"never","name":"x`, "N1 read up to the fault", KindInvalid, []string{"a"}},
		{"unknown", `{"type":"video","uri":"a","disposition":"never"}`, "N1 a type this host does not know", KindUnknown, []string{"a"}},
		{"over-long", `{"type":"resource","uri":"` + strings.Repeat("a", 4097) + `","disposition":"never"}`, "P4 no uri the host cannot accept", KindInvalid, nil},
		{"uri-not-string", `{"type":"resource","uri":5,"disposition":"never"}`, "P4 no uri at all", KindInvalid, nil},
		{"nested-never", `{"type":"video","uri":"a","ext":{"disposition":"never"}}`, "only the top level testifies", KindUnknown, nil},
		{"embedded-repeat", `{"type":"resource","disposition":"never","resource":{"uri":"a","text":"x","text":"y"}}`, "N6/N8 an embedded resource rejected whole keeps its never", KindInvalid, []string{"a"}},
		{"embedded-inner-never", `{"type":"resource","resource":{"uri":"a","uri":"b","disposition":"never"}}`, "N6/N8 the nested resource's own never", KindInvalid, []string{"a", "b"}},
		{"reference", `{"type":"resource","uri":"a","disposition":"never"}`, "a reference carries its never in its testimony", KindReference, nil},
		{"link-rejected", `{"type":"resource_link","uri":"a","uri":"b","disposition":"never"}`, "N1 a link rejected whole keeps its never, as when cut short", KindInvalid, []string{"a", "b"}},
		{"link-cut-short", `{"type":"resource_link","uri":"a","disposition":"never","name":`, "N1 read up to the fault", KindInvalid, []string{"a"}},
		{"link", `{"type":"resource_link","uri":"a","disposition":"never"}`, "P8 a valid link maps with no disposition", KindReference, nil},
		{"link-own-never-nested", `{"type":"resource_link","uri":"a","disposition":"never","resource":{"uri":"b"}}`, "P8 a valid link's own disposition governs nothing", KindReference, nil},
		{"link-nested-never", `{"type":"resource_link","uri":"a","resource":{"uri":"b","disposition":"never"}}`, "N1 a nested resource's own never, as beside any block", KindReference, []string{"b"}},
		{"text", `{"type":"text","text":"x","uri":"a","disposition":"never"}`, "N1 a text block that says never about a uri", KindText, []string{"a"}},
		{"text-annotations", `{"type":"text","text":"x","uri":"a","annotations":{"disposition":"never"}}`, "N1 as a block rejected whole reads it", KindText, []string{"a"}},
		{"text-no-never", `{"type":"text","text":"x","uri":"a","disposition":"ref"}`, "no never, nothing to carry", KindText, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Classify(json.RawMessage(tt.raw))
			if b.Kind != tt.kind {
				t.Fatalf("kind = %q (%q), want %q (%s)", b.Kind, b.Invalid, tt.kind, tt.reason)
			}
			if strings.Join(b.NeverURIs, " ") != strings.Join(tt.want, " ") {
				t.Errorf("NeverURIs = %q, want %q (%s)", b.NeverURIs, tt.want, tt.reason)
			}
		})
	}
}

// TestValidateDuplicatesBounded pins that the repeat check stays linear
// and its report bounded: a block of many thousand properties, all
// repeated, validates quickly and reports at most 16 repeats.
func TestValidateDuplicatesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"resource","uri":"u"`)
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&b, `,"k%d":1,"k%d":2`, i, i)
	}
	b.WriteString(`,"deep":` + strings.Repeat(`{"a":1,"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`)
	errs := ValidateAll(json.RawMessage(b.String()))
	if len(errs) != maxDuplicates {
		t.Fatalf("ValidateAll reported %d violations, want %d repeats", len(errs), maxDuplicates)
	}
	for _, e := range errs {
		if e.Constraint != ruleUnique {
			t.Errorf("unexpected violation %v", e)
		}
	}
}

// TestNestedReadingLinear pins L5 for the reading of annotations and
// _meta: only their top level is read for a disposition, so a chain of
// them nested in one another costs one pass over the block, whether a
// decoder reads the block or not. Reading each level in full took
// quadratic time: 68 s for a 1 MB block, and this test's blocks would
// run past any test timeout.
func TestNestedReadingLinear(t *testing.T) {
	chain := func(member string, n int) string {
		return strings.Repeat(`"`+member+`":{`, n) + `"disposition":"never"` + strings.Repeat("}", n)
	}
	for _, tt := range []struct {
		name, block string
		kind        Kind
	}{
		{"meta-within-decoder-depth", `{"type":"resource","uri":"u",` + chain("_meta", maxDecodeDepth-2) + `}`, KindReference},
		{"annotations-within-decoder-depth", `{"type":"resource","uri":"u",` + chain("annotations", maxDecodeDepth-2) + `}`, KindReference},
		{"meta-past-decoder-depth", `{"type":"resource","uri":"u",` + chain("_meta", 300000) + `}`, KindInvalid},
		{"embedded-meta-past-decoder-depth", `{"type":"resource","resource":{"uri":"u",` + chain("_meta", 300000) + `}}`, KindInvalid},
		{"image-meta-past-decoder-depth", `{"type":"image","data":"AA==","uri":"u",` + chain("annotations", 300000) + `}`, KindInvalid},
	} {
		b := Classify(json.RawMessage(tt.block))
		if b.Kind != tt.kind {
			t.Errorf("%s: kind %v, want %v", tt.name, b.Kind, tt.kind)
		}
		// The never sits deep in the chain, below the level that is read.
		if len(b.NeverURIs) != 0 || b.Testimony.Never() {
			t.Errorf("%s: a never nested below the first level counted: %q", tt.name, b.NeverURIs)
		}
	}
}

// TestReadTextBounds pins the documented bounds of the reading of a
// text's JSON: the depth, the number of objects and the bytes it reads.
func TestReadTextBounds(t *testing.T) {
	ref := func(u string) string { return `{"uri":"` + u + `","disposition":"never"}` }
	tests := []struct {
		name, text, reason string
		want               []string
	}{
		{"depth-64", strings.Repeat("[", textDepthMax-1) + ref("a") + strings.Repeat("]", textDepthMax-1), "the 64th level is read", []string{"a"}},
		{"depth-65", strings.Repeat("[", textDepthMax) + ref("a") + strings.Repeat("]", textDepthMax), "the 65th is skipped", nil},
		{"after-skip", `[` + strings.Repeat("[", textDepthMax) + `]` + strings.Repeat("]", textDepthMax-1) + `,` + ref("b") + `]`, "reading resumes after a skipped value", []string{"b"}},
		{"objects", `[` + strings.Repeat(`{},`, textObjectMax-1) + ref("c") + `,` + ref("d") + `]`, "the scan stops after the object bound", []string{"c"}},
		{"bytes", `[` + ref("e") + `,"` + strings.Repeat("x", textScanMax) + `",` + ref("f") + `]`, "nothing past the byte bound is read", []string{"e"}},
		{"cut-open", `{"uri":"g","disposition":"never","x":[1,2`, "an object cut short still testifies", []string{"g"}},
		{"resource-member", `{"resource":{"uri":"h"},"disposition":"never"}`, "an embedded resource's uri takes its outer never", []string{"h"}},
		{"sibling-member", `{"other":{"uri":"i"},"disposition":"never"}`, "a uri in another member is another object's", nil},
		{"never-in-string", `["{\"uri\":\"j\",\"disposition\":\"never\"}"]`, "JSON inside a string is text, not read", nil},
		{"prose", ` note: ` + ref("k"), "a text that is not JSON is just text", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left := newTextCounts()
			r := readText(tt.text, &left)
			if strings.Join(r.never, " ") != strings.Join(tt.want, " ") {
				t.Errorf("never = %q, want %q (%s)", r.never, tt.want, tt.reason)
			}
			if len(r.spans) > textObjectMax {
				t.Errorf("%d spans kept, over the bound", len(r.spans))
			}
		})
	}
}

// FuzzReadText: any text reads without a panic, every span it keeps
// covers a quoted string of the text, spans come in text order, and every
// never uri is within the schema's bound.
func FuzzReadText(f *testing.F) {
	for _, s := range []string{`{"uri":"a","disposition":"never"}`, `[{"resource":{"uri":"b"},"disposition":"never"}]`,
		`{"uri":"\u0061","uri":"b","disposition":"ref","disposition":"never"}`, `[[[[`, `{"a":"\"}`, `{"uri":"x"`, "{\"uri\":\"\xff\"}"} {
		f.Add(s, uint8(200), uint8(0))
		f.Add(s, uint8(1), uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, members, nevers uint8) {
		// Small counts, as a content's earlier texts may have left them.
		left := textCounts{members: int(members % 4), nevers: int(nevers % 4)}
		if members >= 128 {
			left = newTextCounts()
		}
		kept := left.members
		r := readText(text, &left)
		last := 0
		for _, sp := range r.spans {
			if sp.start < last || sp.end > len(text) || sp.end-sp.start < 2 || text[sp.start] != '"' || text[sp.end-1] != '"' {
				t.Fatalf("bad span %+v in %q", sp, text)
			}
			last = sp.end
		}
		if len(r.spans) > kept || left.members < 0 || left.nevers < 0 {
			t.Fatalf("kept %d spans with a count of %d; counts left %+v", len(r.spans), kept, left)
		}
		// The rest is left unread from a member once a count is spent, or
		// from where the reading stopped or skipped, when a "uri" member
		// may follow.
		if u := r.unread; u >= 0 && (u >= len(text) || left.members != 0 && left.nevers != 0 && !mayNameMember(text[u:])) {
			t.Fatalf("unread at %d, spans to %d, counts left %+v, in %q", u, last, left, text)
		}
		for _, u := range r.never {
			if utf8.RuneCountInString(u) > MaxURILen {
				t.Fatalf("never uri over the bound")
			}
		}
	})
}
