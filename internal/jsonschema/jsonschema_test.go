package jsonschema

import (
	"strings"
	"testing"
)

func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		name, schema, want string // want: a fragment of the error
	}{
		{"unknown keyword", `{"type":"object","propertys":{}}`, `unknown keyword "propertys"`},
		{"unknown keyword deep", `{"type":"object","properties":{"a":{"format":"uri"}}}`, `unknown keyword "format"`},
		{"ref is unknown", `{"$ref":"#"}`, `unknown keyword "$ref"`}, // stricter than Ajv, as doc.go says
		{"not JSON", `{"type":`, "not JSON"},
		{"two values", `{} {}`, "not JSON"},
		{"schema of wrong kind", `[]`, "object or a boolean"},
		{"type not a name", `{"type":"nope"}`, `"type"`},
		{"type array", `{"type":["string","null"]}`, "type arrays"}, // stricter than Ajv, as doc.go says
		{"maxLength negative", `{"type":"string","maxLength":-1}`, `"maxLength" must be`},
		{"maxLength fraction", `{"type":"string","maxLength":1.5}`, `"maxLength" must be`},
		{"minLength string", `{"type":"string","minLength":"1"}`, `"minLength" must be`},
		{"maximum string", `{"type":"number","maximum":"1"}`, `"maximum" must be`},
		{"maximum infinite", `{"type":"number","maximum":1e400}`, `"maximum" must be`},
		{"pattern bad", `{"type":"string","pattern":"("}`, `"pattern" must be`},
		{"pattern lookahead", `{"type":"string","pattern":"(?=a)"}`, `"pattern" must be`}, // stricter than Ajv, as doc.go says
		{"pattern not string", `{"type":"string","pattern":1}`, `"pattern" must be`},
		{"enum empty", `{"enum":[]}`, `"enum" must be`},
		{"enum duplicate", `{"enum":[1,1.0]}`, `"enum" must be`},
		{"required duplicate", `{"type":"object","required":["a","a"]}`, `"required" must be`},
		{"required not strings", `{"type":"object","required":[1]}`, `"required" must be`},
		{"properties array", `{"type":"object","properties":[]}`, `"properties" must be`},
		{"oneOf empty", `{"oneOf":[]}`, `"oneOf" must be`},
		{"anyOf object", `{"anyOf":{}}`, `"anyOf" must be`},
		{"not bad", `{"not":1}`, "object or a boolean"},
		{"required without type", `{"required":["a"]}`, `"required" needs a type "object"`},
		{"maximum beside string", `{"type":"string","maximum":1}`, `"maximum" needs a type "number"`},
		{"additionalProperties without type", `{"additionalProperties":false}`, `"additionalProperties" needs`},
		{"maxLength under object", `{"type":"object","properties":{"a":{"maxLength":3}}}`, `#/properties/a: "maxLength" needs`},
		{"type against context", `{"type":"object","oneOf":[{"type":"string"}]}`, `#/oneOf/0: type "string" contradicts`},
		{"number inside integer", `{"type":"integer","not":{"type":"number"}}`, `#/not: type "number" contradicts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compile(%s) error = %v, want one containing %q", tt.schema, err, tt.want)
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	for _, schema := range []string{
		`true`, `false`, `{}`,
		`{"description":"d","title":"t","$comment":"c","default":1,"examples":[1],"deprecated":false,"readOnly":true,"writeOnly":false}`,
		`{"type":"object","oneOf":[{"oneOf":[{"required":["a"]}]}]}`, // the type reaches nested branches
		`{"type":"object","not":{"anyOf":[{"required":["a"]}]}}`,
		`{"type":"number","oneOf":[{"type":"integer","maximum":3}]}`, // integer narrows number
		`{"type":"integer","minimum":0}`,                             // minimum applies to integers
		`{"type":"string","maxLength":1e3}`,                          // 1e3 is an integer
		`{"type":"object","required":[]}`,
		`{"type":"object","properties":{"a":false},"additionalProperties":false}`,
	} {
		if _, err := Compile([]byte(schema)); err != nil {
			t.Errorf("Compile(%s): %v", schema, err)
		}
	}
}

func TestValidate(t *testing.T) {
	const bigMax = `{"type":"integer","minimum":0,"maximum":9007199254740991}`
	tests := []struct {
		name, schema, instance string
		valid                  bool
	}{
		{"true schema", `true`, `[1]`, true},
		{"false schema", `false`, `null`, false},
		{"not JSON", `{}`, `{"a":`, false},
		{"empty input", `{}`, ``, false},
		{"trailing value", `{}`, `1 2`, false},
		{"trailing bracket", `{}`, `1]`, false},
		{"trailing space", `{}`, " 1 \n", true},

		{"type null", `{"type":"null"}`, `null`, true},
		{"type null refuses false", `{"type":"null"}`, `false`, false},
		{"type boolean", `{"type":"boolean"}`, `true`, true},
		{"type boolean refuses 0", `{"type":"boolean"}`, `0`, false},
		{"type object", `{"type":"object"}`, `{}`, true},
		{"type object refuses array", `{"type":"object"}`, `[]`, false},
		{"type object refuses null", `{"type":"object"}`, `null`, false},
		{"type array", `{"type":"array"}`, `[]`, true},
		{"type string", `{"type":"string"}`, `""`, true},
		{"type string refuses number", `{"type":"string"}`, `1`, false},
		{"type number", `{"type":"number"}`, `1.5`, true},
		{"type number refuses infinity", `{"type":"number"}`, `1e400`, false},
		{"type integer", `{"type":"integer"}`, `3`, true},
		{"type integer 1.0", `{"type":"integer"}`, `1.0`, true},
		{"type integer 1e3", `{"type":"integer"}`, `1e3`, true},
		{"type integer -0", `{"type":"integer"}`, `-0`, true},
		{"type integer refuses 1.5", `{"type":"integer"}`, `1.5`, false},
		{"type integer refuses string", `{"type":"integer"}`, `"1"`, false},
		// JSON.parse rounds this literal to 1, so Ajv calls it an integer.
		{"type integer as a double", `{"type":"integer"}`, `0.99999999999999999999`, true},

		{"maximum equal", bigMax, `9007199254740991`, true},
		{"maximum above by one", bigMax, `9007199254740992`, false},
		{"maximum far above", bigMax, `1e300`, false},
		{"maximum infinite", bigMax, `1e400`, false},
		{"minimum zero", bigMax, `0`, true},
		{"minimum negative", bigMax, `-1`, false},
		{"minimum tiny negative", `{"type":"number","minimum":0}`, `-1e-300`, false},
		{"minimum underflow to -0", `{"type":"number","minimum":0}`, `-1e-400`, true},

		{"maxLength ascii", `{"type":"string","maxLength":3}`, `"abc"`, true},
		{"maxLength ascii over", `{"type":"string","maxLength":3}`, `"abcd"`, false},
		{"maxLength emoji is one", `{"type":"string","maxLength":1}`, `"😀"`, true},
		{"maxLength escaped pair is one", `{"type":"string","maxLength":1}`, `"\ud83d\ude00"`, true},
		{"maxLength two emoji", `{"type":"string","maxLength":1}`, `"😀😀"`, false},
		{"maxLength accented", `{"type":"string","maxLength":1}`, `"é"`, true},
		{"minLength", `{"type":"string","minLength":2}`, `"😀"`, false},
		{"minLength met", `{"type":"string","minLength":2}`, `"ab"`, true},

		{"pattern match", `{"type":"string","pattern":"^sha256:[A-Za-z0-9_-]{43}$"}`, `"sha256:` + strings.Repeat("a", 43) + `"`, true},
		{"pattern too long", `{"type":"string","pattern":"^sha256:[A-Za-z0-9_-]{43}$"}`, `"sha256:` + strings.Repeat("a", 44) + `"`, false},
		{"pattern trailing newline", `{"type":"string","pattern":"^a$"}`, `"a\n"`, false},
		{"pattern is a search", `{"type":"string","pattern":"b"}`, `"abc"`, true},
		{"pattern no match", `{"type":"string","pattern":"z"}`, `"abc"`, false},

		{"const string", `{"const":"text"}`, `"text"`, true},
		{"const string other", `{"const":"text"}`, `"Text"`, false},
		{"const number by value", `{"const":1}`, `1.0`, true},
		{"const number other", `{"const":1}`, `2`, false},
		{"const deep", `{"const":{"a":[1,{"b":null}]}}`, `{"a":[1e0,{"b":null}]}`, true},
		{"const deep extra key", `{"const":{"a":[1]}}`, `{"a":[1],"b":1}`, false},
		{"const deep array order", `{"const":[1,2]}`, `[2,1]`, false},
		{"const null vs false", `{"const":null}`, `false`, false},
		{"enum member", `{"enum":["never","ref"]}`, `"ref"`, true},
		{"enum non member", `{"enum":["never","ref"]}`, `"inline"`, false},
		{"enum type mismatch", `{"enum":["1"]}`, `1`, false},

		{"required present", `{"type":"object","required":["a"]}`, `{"a":null}`, true},
		{"required missing", `{"type":"object","required":["a"]}`, `{"b":1}`, false},
		{"properties checked", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`, false},
		{"properties absent ok", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`, true},
		{"properties extra allowed", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"b":1}`, true},
		{"additionalProperties false", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":1}`, false},
		{"additionalProperties false ok", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, true},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"x":"s","y":"t"}`, true},
		{"additionalProperties schema fails", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"x":"s","y":2}`, false},
		{"duplicate key last wins ok", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1,"a":"s"}`, true},
		{"duplicate key last wins bad", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"s","a":1}`, false},

		{"oneOf one", `{"oneOf":[{"const":1},{"const":2}]}`, `1`, true},
		{"oneOf none", `{"oneOf":[{"const":1},{"const":2}]}`, `3`, false},
		{"oneOf two", `{"oneOf":[{"const":1},{"enum":[1,2]}]}`, `1`, false},
		{"anyOf one", `{"anyOf":[{"const":1},{"const":2}]}`, `2`, true},
		{"anyOf two", `{"anyOf":[{"const":1},{"enum":[1,2]}]}`, `1`, true},
		{"anyOf none", `{"anyOf":[{"const":1},{"const":2}]}`, `3`, false},
		{"not matching", `{"not":{"const":1}}`, `1`, false},
		{"not other", `{"not":{"const":1}}`, `2`, true},
		{"not false", `{"not":false}`, `2`, true},
		{"not true", `{"not":true}`, `2`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatalf("Compile(%s): %v", tt.schema, err)
			}
			err = s.Validate([]byte(tt.instance))
			if (err == nil) != tt.valid {
				t.Fatalf("Validate(%s) against %s = %v, want valid=%v", tt.instance, tt.schema, err, tt.valid)
			}
		})
	}
}

func TestValidateNamesThePlace(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"a/b":{"type":"object","properties":{"c~":{"type":"string","maxLength":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate([]byte(`{"a/b":{"c~":"xy"}}`))
	if err == nil || !strings.Contains(err.Error(), `"/a~1b/c~0"`) || !strings.Contains(err.Error(), "maxLength") {
		t.Fatalf("error = %v, want one naming /a~1b/c~0 and maxLength", err)
	}
}

func TestCompileWrapped(t *testing.T) {
	s, err := CompileWrapped([]byte(`{"description":"x","schema":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate([]byte(`"s"`)) != nil || s.Validate([]byte(`1`)) == nil {
		t.Error("the wrapped schema was not the one compiled")
	}
	for _, file := range []string{`{"description":"no schema"}`, `[`, `{"schema":{"bogus":1}}`} {
		if _, err := CompileWrapped([]byte(file)); err == nil {
			t.Errorf("CompileWrapped(%s) succeeded", file)
		}
	}
}
