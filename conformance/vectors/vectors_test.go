package vectors

import (
	"strings"
	"testing"
)

func TestParseBundled(t *testing.T) {
	f, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 43 {
		t.Errorf("bundled file has %d cases, want the RFC's 43", len(f.Cases))
	}
	for _, c := range f.Cases {
		x, err := c.Expand("http://127.0.0.1:1")
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		for _, b := range x.Blocks {
			if strings.Contains(string(b), "$ORIGIN") || strings.Contains(string(b), "$repeat") {
				t.Errorf("%s: block not expanded: %.80s", c.ID, b)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	good := `{"id":"a","rfc":1,"operation":"render","blocks":[{"type":"text","text":"x"}],"schemaValid":[true],"expect":{}}`
	tests := []struct {
		name, file, want string
	}{
		{"format", `{"format":"other-1","cases":[` + good + `]}`, `unknown format "other-1"`},
		{"duplicate", `{"format":"mcpl-bulk-references-1","cases":[` + good + `,` + good + `]}`, `duplicate case id "a"`},
		{"operation", `{"format":"mcpl-bulk-references-1","cases":[` + strings.Replace(good, `"render"`, `"dance"`, 1) + `]}`, `unknown operation "dance"`},
		{"expect-key", `{"format":"mcpl-bulk-references-1","cases":[` + strings.Replace(good, `"expect":{}`, `"expect":{"sparkles":true}`, 1) + `]}`, `unknown field "sparkles"`},
		{"case-key", `{"format":"mcpl-bulk-references-1","cases":[` + strings.Replace(good, `"rfc":1`, `"rfc":1,"flags":[]`, 1) + `]}`, `unknown field "flags"`},
		{"schema-count", `{"format":"mcpl-bulk-references-1","cases":[` + strings.Replace(good, `[true]`, `[true,false]`, 1) + `]}`, `1 blocks but 2 schemaValid`},
		{"empty", `{"format":"mcpl-bulk-references-1","cases":[]}`, `no cases`},
		{"registrations", `{"format":"mcpl-bulk-references-1","cases":[` + strings.Replace(good, `"render"`, `"registry","registrations":2147483647`, 1) + `]}`, `registrations from 1 to`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestExpandRepeat(t *testing.T) {
	got, err := ExpandJSON([]byte(`{"name":{"$repeat":"ab","count":3},"uri":"$ORIGIN/p","n":12.0}`), "http://o")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"n":12.0,"name":"ababab","uri":"http://o/p"}`
	if string(got) != want {
		t.Errorf("ExpandJSON = %s, want %s", got, want)
	}
	if _, err := ExpandJSON([]byte(`{"$repeat":"a","count":-1}`), ""); err == nil {
		t.Error("a negative count must be refused")
	}
	if _, err := ExpandJSON([]byte(`{"$repeat":"a","count":99999999999}`), ""); err == nil {
		t.Error("a count past MaxRepeat must be refused")
	}
}
