package convert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScanBlock: the one-pass reading of a block agrees with the readings
// it replaces. It accepts exactly the objects json.Valid accepts, records
// the top level as readObject does, and a string it marks as needing no
// decoding decodes to its own bytes.
func FuzzScanBlock(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"type":"text","text":"a"}`, `{"a":[1,-0.5e+3,true,false,null,{"b":"\u00e9\n"}]}`,
		`{"type":"resource","uri":"u","uri":"v","disposition":"never"}`, "{\"name\":\"a\xffb\"}",
		`{"_meta":{"disposition":"never"},"resource":{"uri":"a","annotations":{"disposition":"never"}},"resource":{"uri":"b"}}`,
		`{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":tru}`, `{"a":1}x`, `{"a":1,}`,
		`{"a" 1}`, `{,}`, `{"a":[1,]}`, `{"a":[}`, "{\"a\":\"\x01\"}", `{"\u0074ype":"text"}`, `{"a":{"type":"x"},"type":"y"}`,
		strings.Repeat(`[`, maxDecodeDepth) + strings.Repeat(`]`, maxDecodeDepth),
		`{"a":` + strings.Repeat(`[`, maxDecodeDepth-1) + strings.Repeat(`]`, maxDecodeDepth-1) + `}`,
		`{"a":` + strings.Repeat(`[`, maxDecodeDepth) + strings.Repeat(`]`, maxDecodeDepth) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		if i := skipSpace(d, 0); i >= len(d) || d[i] != '{' {
			return
		}
		got, valid := scanBlock(d)
		if want := json.Valid(d); valid != want {
			t.Fatalf("scanBlock valid = %v, json.Valid = %v", valid, want)
		}
		if !valid {
			return
		}
		want := readObject(d)
		if got.isObject != want.isObject || got.complete != want.complete || got.never != want.never ||
			got.nestedNever != want.nestedNever || got.nestedDisposition != want.nestedDisposition ||
			got.count != want.count || got.nURIs != want.nURIs || got.nResources != want.nResources {
			t.Fatalf("scanBlock read %+v, readObject %+v", got, want)
		}
		if g, w := strings.Join(got.neverURIs(), "\n"), strings.Join(want.neverURIs(), "\n"); g != w {
			t.Fatalf("never uris: scanBlock %q, readObject %q", g, w)
		}
		for k := range got.last {
			if !bytes.Equal(got.last[k], want.last[k]) {
				t.Fatalf("key %d: scanBlock %q, readObject %q", k, got.last[k], want.last[k])
			}
			s, ok := got.str(key(k))
			ws, wok := decodeString(want.last[k])
			if s != ws || ok != wok {
				t.Fatalf("key %d: str %q %v, decodeString %q %v", k, s, ok, ws, wok)
			}
		}
		for i := range got.nURIs {
			if !bytes.Equal(got.uris[i], want.uris[i]) {
				t.Fatalf("uri %d: scanBlock %q, readObject %q", i, got.uris[i], want.uris[i])
			}
		}
	})
}
