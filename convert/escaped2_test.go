package convert_test

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"
)

// TestEncodedNeverURISpellings pins S2 and N1 for the percent-encoded
// spellings of a never uri that encoders and people write besides
// url.QueryEscape's: a uri whose own query holds escapes, escapes in
// either letter case or mixed, slashes left raw (Python's quote) or a
// colon left raw (Go's PathEscape), encoded up to three times, a scheme
// right after another escape, and the decoded text's own ends (an
// encoded space, "+", quote or angle bracket after the uri).
func TestEncodedNeverURISpellings(t *testing.T) {
	const (
		sas   = "https://acct.blob.example/c/take.wav?sv=2022-11-02&se=2026-01-01T00%3A00%3A00Z&sp=r&sig=SAS-SECRET%2Bab%3D"
		plain = "https://vault.example/take.wav?sig=ENC-SECRET"
		// Go's url.PathEscape leaves "&" and "=" raw.
		presigned = "https://bucket.s3.example/take.wav?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=ENC-SECRET"
		wss       = "wss://stream.example/live?token=ENC-SECRET"
		// A never uri whose own query holds an encoded url (an OAuth
		// authorize link): encoded, that one is encoded twice.
		nested = "https://auth.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb&code=ENC-SECRET"
	)
	q := url.QueryEscape
	member, _ := json.Marshal(map[string]string{"u": plain})
	cases := []struct{ name, never, text string }{
		{"own escapes, redirect", sas, "open https://login.example/continue?next=" + q(sas) + "&lang=en"},
		{"own escapes, alone", sas, "uri=" + q(sas)},
		{"slashes raw", plain, "next=" + strings.ReplaceAll(q(plain), "%2F", "/") + " now"},
		{"colon raw", plain, "https://share.example/s/" + url.PathEscape(plain)},
		{"colon raw, several parameters", presigned, "get it at https://share.example/s/" + url.PathEscape(presigned) + " today"},
		{"mixed case", plain, "next=" + strings.Replace(q(plain), "%3A%2F%2F", "%3a%2F%2f", 1)},
		{"twice, mixed case", plain, "next=" + strings.Replace(q(q(plain)), "%253A%252F%252F", "%253a%252F%252f", 1)},
		{"three times", plain, "next=" + q(q(q(plain)))},
		{"after an escaped =", wss, "q=" + q("next="+wss)},
		{"nested after an escaped =", wss, "open https://a.example/?r=" + q("https://b.example/?next="+q(wss))},
		{"form-encoded JSON", plain, "data=" + q(string(member))},
		{"form-encoded PHP JSON", plain, "data=" + q(strings.ReplaceAll(string(member), "/", `\/`))},
		{"encoded space after", plain, "mailto:?body=" + strings.ReplaceAll(q("Download at "+plain+" now"), "+", "%20")},
		{"plus after", plain, "https://share.example/intent?text=" + q("Download at "+plain+" now")},
		{"encoded tag", plain, "h=" + q("<a href="+plain+">x</a>")},
		{"own encoded url, in a redirect", nested, "open https://login.example/continue?next=" + q(nested) + "&lang=en"},
		{"own encoded url, alone", nested, "uri=" + q(nested)},
		{"Latin-1 text after", plain, "mailto:ops@example.com?body=" + q("Download at "+plain+" f") + "%FCr+Sie"},
		{"not UTF-8 after", plain, "next=" + q(plain) + "%FF"},
		{"long value after", plain, "state=" + q(plain+"|"+strings.Repeat("QUJD", 4200))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { withheldEverywhere(t, c.never, c.text, "SECRET") })
	}
}

// TestHTMLNeverURISpellings pins S2 and N1 for a never uri in HTML or XML
// whose decoded text goes on past it: a quote, an angle bracket or a tag
// written as references ends the uri as the raw character would.
func TestHTMLNeverURISpellings(t *testing.T) {
	const never = "https://vault.example/take.wav?X-Amz-Algorithm=AWS4&X-Amz-Signature=HTML-SECRET"
	amp := strings.ReplaceAll(never, "&", "&amp;")
	attr, _ := json.Marshal(map[string]string{"url": never})
	for name, text := range map[string]string{
		"JSON in an attribute":  `<div data-props="` + html.EscapeString(string(attr)) + `"></div>`,
		"escaped HTML in XML":   `<Body>&lt;a href=&quot;` + amp + `&quot;&gt;get&lt;/a&gt;</Body>`,
		"numeric quotes":        `<div title="&#34;` + amp + `&#34;">x</div>`,
		"a tag after":           "see " + amp + "&lt;br&gt;next",
		"upper-case references": "see " + strings.ReplaceAll(never, "&", "&AMP;") + " now",
	} {
		t.Run(name, func(t *testing.T) { withheldEverywhere(t, never, text, "HTML-SECRET") })
	}
}
