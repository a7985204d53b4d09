package convert

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestPercentEncodersWriteAsTheirLibraries pins each of percentEncoders
// to what the library it stands for writes (outputs taken from Node's
// encodeURIComponent and Python's urllib.parse, and url.QueryEscape
// itself), so that a uri a page carries percent-encoded in its query is
// searched for in the form that page holds (S2).
func TestPercentEncodersWriteAsTheirLibraries(t *testing.T) {
	const in = "tag:x.example,2026:N~(v1)*/a b\u00e9"
	want := []string{
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A%2Fa%20b%C3%A9", // Python quote(s, safe="")
		"tag%3Ax.example%2C2026%3AN~(v1)*%2Fa%20b%C3%A9",       // encodeURIComponent
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A/a%20b%C3%A9",   // Python quote(s)
		"tag%3Ax.example%2C2026%3AN~%28v1%29%2A%2Fa+b%C3%A9",   // url.QueryEscape, quote_plus
		"tag%3Ax.example%2C2026%3AN%7E%28v1%29%2A%2Fa+b%C3%A9", // PHP urlencode
		"tag%3Ax.example%2C2026%3AN%7E%28v1%29*%2Fa+b%C3%A9",   // Java URLEncoder
	}
	if len(percentEncoders) != len(want) {
		t.Fatalf("%d encoders, %d expected outputs", len(percentEncoders), len(want))
	}
	for i, e := range percentEncoders {
		if got := e.encode(in); got != want[i] {
			t.Errorf("encoder %d (%+v) = %q, want %q", i, e, got, want[i])
		}
	}
	// The QueryEscape one on every byte.
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	if got, want := percentEncoders[3].encode(all.String()), url.QueryEscape(all.String()); got != want {
		t.Errorf("QueryEscape's encoder differs from url.QueryEscape:\n got %q\nwant %q", got, want)
	}
	// A uri that holds nothing the encoders write apart gets one form at
	// each level.
	sp := spellings("urn:vault.example:NEVER-SIG")
	if !slices.Equal(sp, []string{"urn:vault.example:NEVER-SIG", "urn%3Avault.example%3ANEVER-SIG",
		"urn%253Avault.example%253ANEVER-SIG", "urn%25253Avault.example%25253ANEVER-SIG"}) {
		t.Errorf("spellings = %q", sp)
	}
}
