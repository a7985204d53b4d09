package convert

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

func TestClassify(t *testing.T) {
	const uri = `"uri":"https://s.example/p"`
	tests := []struct {
		name, raw   string
		kind        Kind
		rejected    []string
		present     Field
		contradicts bool
		reason      string
	}{
		{"text", `{"type":"text","text":"hi"}`, KindText, nil, 0, false, "P1 text"},
		{"text-not-string", `{"type":"text","text":7}`, KindInvalid, nil, 0, false, "P1 a text block must carry text"},
		{"inline", `{"type":"image","data":"AAAA","mimeType":"image/png"}`, KindInline, nil, 0, false, "P1 inline image"},
		{"reference", `{"type":"resource",` + uri + `,"sizeBytes":12,"disposition":"never"}`, KindReference, nil, FieldURI | FieldSizeBytes | FieldDisposition, false, "P1 resource by uri"},
		{"image-uri", `{"type":"image",` + uri + `,"mimeType":"image/png"}`, KindReference, nil, FieldURI | FieldMimeType, false, "P1 image in uri form"},
		{"audio-uri", `{"type":"audio",` + uri + `}`, KindReference, nil, FieldURI, false, "P1 audio in uri form"},
		{"embedded", `{"type":"resource","resource":{"uri":"x:y","text":"t"}}`, KindEmbedded, nil, FieldURI, false, "P1/P8 nested resource is MCP's embedded resource"},
		{"link", `{"type":"resource_link",` + uri + `,"name":"n","mimeType":"a/b","size":3,"disposition":"never"}`, KindReference, nil, FieldURI | FieldName | FieldMimeType | FieldSizeBytes, false, "P8 ResourceLink maps with no disposition"},
		{"unknown", `{"type":"hologram"}`, KindUnknown, nil, 0, false, "P1 unknown type"},
		{"no-type", `{"text":"x"}`, KindInvalid, nil, 0, false, "P1 no type"},
		{"number", `12`, KindInvalid, nil, 0, false, "bad input: a number"},
		{"null", `null`, KindInvalid, nil, 0, false, "bad input: null"},
		{"array", `[1,2]`, KindInvalid, nil, 0, false, "bad input: an array"},
		{"garbage", `{"type":`, KindInvalid, nil, 0, false, "bad input: not JSON"},
		{"uri-missing", `{"type":"resource","name":"x"}`, KindInvalid, nil, 0, false, "P4 uri missing"},
		{"uri-number", `{"type":"resource","uri":5}`, KindInvalid, nil, 0, false, "P4 uri not a string"},
		{"uri-4097", `{"type":"resource","uri":"` + strings.Repeat("a", 4097) + `"}`, KindInvalid, nil, 0, false, "P4 uri too long"},
		{"uri-4096-multibyte", `{"type":"resource","uri":"` + strings.Repeat("é", 4096) + `"}`, KindReference, nil, FieldURI, false, "P4 counted in code points"},
		{"image-uri-too-long", `{"type":"image","uri":"` + strings.Repeat("a", 5000) + `"}`, KindInvalid, nil, 0, false, "P4 holds for media by uri"},
		{"size-neg", `{"type":"resource",` + uri + `,"sizeBytes":-1,"disposition":"never"}`, KindReference, []string{"sizeBytes"}, FieldURI | FieldDisposition, false, "P3 -1"},
		{"size-frac", `{"type":"resource",` + uri + `,"sizeBytes":3.5}`, KindReference, []string{"sizeBytes"}, FieldURI, false, "P3 3.5"},
		{"size-2^53", `{"type":"resource",` + uri + `,"sizeBytes":9007199254740992}`, KindReference, []string{"sizeBytes"}, FieldURI, false, "P3 2^53"},
		{"size-string", `{"type":"resource",` + uri + `,"sizeBytes":"12"}`, KindReference, []string{"sizeBytes"}, FieldURI, false, "P3 a string is not coerced"},
		{"size-null", `{"type":"resource",` + uri + `,"sizeBytes":null}`, KindReference, []string{"sizeBytes"}, FieldURI, false, "P3 null"},
		{"size-12.0", `{"type":"resource",` + uri + `,"sizeBytes":12.0}`, KindReference, nil, FieldURI | FieldSizeBytes, false, "P2 12.0 is an integer"},
		{"size-max", `{"type":"resource",` + uri + `,"sizeBytes":9007199254740991}`, KindReference, nil, FieldURI | FieldSizeBytes, false, "P2 2^53-1 is the maximum"},
		{"digest-bad", `{"type":"resource",` + uri + `,"digest":"md5:abc"}`, KindReference, []string{"digest"}, FieldURI, false, "P3 digest pattern"},
		{"name-256", `{"type":"resource",` + uri + `,"name":"` + strings.Repeat("a", 256) + `"}`, KindReference, []string{"name"}, FieldURI, false, "P3 name past 255 is absent, not truncated"},
		{"mime-1MiB", `{"type":"resource",` + uri + `,"mimeType":"` + strings.Repeat("x", 1<<20) + `"}`, KindReference, []string{"mimeType"}, FieldURI, false, "P3 a megabyte type is absent"},
		{"expires-65", `{"type":"resource",` + uri + `,"expiresAt":"` + strings.Repeat("a", 65) + `"}`, KindReference, []string{"expiresAt"}, FieldURI, false, "P3 expiresAt past 64"},
		{"disposition-bad", `{"type":"resource",` + uri + `,"disposition":"maybe"}`, KindReference, []string{"disposition"}, FieldURI, false, "P3 unknown enum"},
		{"all-bad", `{"type":"resource",` + uri + `,"mimeType":1,"sizeBytes":-1,"digest":2,"expiresAt":null,"name":[],"disposition":"never"}`, KindReference, []string{"mimeType", "sizeBytes", "digest", "expiresAt", "name"}, FieldURI | FieldDisposition, false, "P3 every field on its own; never stays"},
		{"unknown-prop", `{"type":"resource",` + uri + `,"extension":{"deep":[1,2,3]}}`, KindReference, nil, FieldURI, false, "P6 unknown properties ignored"},
		{"contradiction-disposition", `{"type":"image","data":"AAAA","mimeType":"image/png","disposition":"never"}`, KindInline, nil, 0, true, "P5 data beside a disposition"},
		{"contradiction-uri", `{"type":"audio","data":"AAAA",` + uri + `}`, KindInline, nil, FieldURI, true, "P5 data beside a uri"},
		{"contradiction-annotations", `{"type":"audio","data":"AAAA","annotations":{"disposition":"never"}}`, KindInline, nil, 0, true, "P5 a disposition in annotations, revision 1's place for it"},
		{"contradiction-meta", `{"type":"image","data":"AAAA","_meta":{"disposition":"ref"}}`, KindInline, nil, 0, true, "P5 a disposition in _meta"},
		{"contradiction-escaped-key", `{"type":"image","data":"AAAA","\u0061nnotations":{"disp\u006fsition":"never"}}`, KindInline, nil, 0, true, "P5 the keys as a decoder reads them"},
		{"contradiction-repeated-annotations", `{"type":"image","data":"AAAA","annotations":{"disposition":"never"},"annotations":{}}`, KindInline, nil, 0, true, "P5 any of two annotations (fails closed)"},
		{"inline-annotations", `{"type":"image","data":"AAAA","annotations":{"audience":["user"],"priority":0.5},"_meta":{"x":1}}`, KindInline, nil, 0, false, "P6 MCP's own annotations are no contradiction"},
		{"reference-annotations", `{"type":"resource",` + uri + `,"annotations":{"audience":["user"],"disposition":"ref"},"_meta":{"x":1}}`, KindReference, nil, FieldURI, false, "P6 on a reference only the top level testifies"},
		{"reference-annotations-never", `{"type":"resource",` + uri + `,"annotations":{"disposition":"never"}}`, KindReference, nil, FieldURI | FieldDisposition, false, "N1 a never where revision 1 put it fails closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				t.Fatal("every case needs a reason")
			}
			b := Classify(json.RawMessage(tt.raw))
			if b.Kind != tt.kind {
				t.Errorf("kind = %q, want %q (%s, invalid=%q)", b.Kind, tt.kind, tt.reason, b.Invalid)
			}
			if diff := cmp.Diff(tt.rejected, b.Testimony.RejectedNames()); diff != "" {
				t.Errorf("rejected fields (-want +got) (%s):\n%s", tt.reason, diff)
			}
			if b.Testimony.Present != tt.present {
				t.Errorf("present = %b, want %b (%s)", b.Testimony.Present, tt.present, tt.reason)
			}
			if b.Contradiction != tt.contradicts {
				t.Errorf("contradiction = %v, want %v (%s)", b.Contradiction, tt.contradicts, tt.reason)
			}
		})
	}
}

// TestClassifyRejectedFieldIsAbsent pins P3: a rejected field carries its
// zero value, never a truncated or coerced one.
func TestClassifyRejectedFieldIsAbsent(t *testing.T) {
	b := Classify(json.RawMessage(`{"type":"resource","uri":"u","name":"` + strings.Repeat("n", 300) + `","sizeBytes":"12","disposition":"never"}`))
	if b.Testimony.Name != "" || b.Testimony.SizeBytes != 0 {
		t.Errorf("P3: rejected fields kept values: name %d chars, size %d", len(b.Testimony.Name), b.Testimony.SizeBytes)
	}
	if !b.Testimony.Never() {
		t.Error("P3: a disposition beside rejected fields must stay in force")
	}
}

// TestClassifyRFCVectors checks Classify against every case of the RFC's
// vectors: the kind the case implies and the fields it says are missing.
func TestClassifyRFCVectors(t *testing.T) {
	f, err := vectors.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("the bundled vectors hold no cases, so nothing would be checked")
	}
	for _, c := range f.Cases {
		c, err := c.Expand("http://127.0.0.1:9")
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.ID, func(t *testing.T) {
			b := Classify(c.Blocks[0])
			want := c.Expect.Kind
			if want == "" {
				want = string(impliedKind(t, c.Blocks[0]))
			}
			if string(b.Kind) != want {
				t.Errorf("%s: kind = %q, want %q", c.ID, b.Kind, want)
			}
			for _, f := range c.Expect.MissingFields {
				if !contains(b.Testimony.RejectedNames(), f) {
					t.Errorf("%s: P3: %s not in rejected fields %v", c.ID, f, b.Testimony.RejectedNames())
				}
				if !b.Testimony.Never() {
					t.Errorf("%s: P3: disposition never lost beside a rejected field", c.ID)
				}
			}
			if len(c.Expect.MissingFields) == 0 && c.SchemaValid[0] && len(b.Testimony.RejectedNames()) > 0 {
				t.Errorf("%s: a schema-valid block had fields rejected: %v", c.ID, b.Testimony.RejectedNames())
			}
		})
	}
}

// impliedKind is the kind a case's first block has by its form alone.
func impliedKind(t *testing.T, raw json.RawMessage) Kind {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	switch m["type"] {
	case "text":
		return KindText
	case "image", "audio":
		if _, ok := m["data"]; ok {
			return KindInline
		}
	}
	return KindReference
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzClassify: any bytes classify without a panic, and a reference always
// carries a uri within the schema bound.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{`{"type":"resource","uri":"u","sizeBytes":1e400}`, `null`, `[`, `{"type":"image","data":1}`,
		`{"type":"resource","resource":{"uri":"x","blob":"AA"},"disposition":"never"}`, "{\"type\":\"text\",\"text\":\"\xff\"}",
		`{"type":"resource","uri":"a","uri":"b","disposition":"never","disposition":"ref"}`, `{"type":"image","uri":"u","disposition":"never","x":[[[`,
		`{"type":"resource","resource":{"uri":"a","text":"x","text":"y"},"disposition":"never"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := Classify(raw)
		if b.Kind == KindReference && (!b.Testimony.Has(FieldURI) || len([]rune(b.Testimony.URI)) > MaxURILen) {
			t.Errorf("reference without a bounded uri: %+v", b.Testimony)
		}
		if b.Testimony.Present&b.Testimony.Rejected != 0 {
			t.Errorf("a field both present and rejected: %b %b", b.Testimony.Present, b.Testimony.Rejected)
		}
		if len(b.NeverURIs) > 0 && b.Kind != KindInvalid && b.Kind != KindUnknown {
			t.Errorf("a %s block carries never uris of its own: %q", b.Kind, b.NeverURIs)
		}
		for _, u := range b.NeverURIs {
			if utf8.RuneCountInString(u) > MaxURILen {
				t.Errorf("P4: a never uri over the bound")
			}
		}
	})
}

// TestClassifyHostileInput pins "What bad input gets": every JSON value
// where a block is expected yields a classification, never a panic.
func TestClassifyHostileInput(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000)
	deepInside := `{"type":"resource","uri":"u","extension":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `}`
	tests := []struct {
		name, raw string
		kind      Kind
		reason    string
	}{
		{"deep", deep, KindInvalid, "nesting past the decoder's depth limit is not a block"},
		{"deep-unknown-property", deepInside, KindReference, "P6 deep nesting inside an ignored property"},
		{"bad-utf8-name", "{\"type\":\"resource\",\"uri\":\"u\",\"name\":\"a\xff\xfeb\"}", KindReference, "invalid UTF-8 decodes to U+FFFD"},
		{"empty", ``, KindInvalid, "no bytes at all"},
		{"string", `"resource"`, KindInvalid, "a string is not a block"},
		{"bool", `true`, KindInvalid, "a boolean is not a block"},
		{"type-number", `{"type":1}`, KindInvalid, "type must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b := Classify(json.RawMessage(tt.raw)); b.Kind != tt.kind {
				t.Errorf("kind = %q, want %q (%s)", b.Kind, tt.kind, tt.reason)
			}
		})
	}
	b := Classify(json.RawMessage("{\"type\":\"resource\",\"uri\":\"u\",\"name\":\"a\xffb\"}"))
	if !utf8.ValidString(b.Testimony.Name) {
		t.Errorf("a name with invalid UTF-8 came back invalid: %+q", b.Testimony.Name)
	}
}
