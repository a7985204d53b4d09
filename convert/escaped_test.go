package convert_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
)

// withheldEverywhere checks that text, beside a never reference to
// neverURI, shows no secret in any view: in the same server content, in
// serverless content, and in a later content once the first marked it.
func withheldEverywhere(t *testing.T, neverURI, text, secret string) {
	t.Helper()
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	text = textBlock(t, text)
	for _, mode := range []string{"same content", "serverless content", "marked earlier"} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		var ct *convert.Content
		switch mode {
		case "same content":
			ct = c.Ingest(t.Context(), raws(never, text), convert.Source{Server: "s", Tool: "t"})
		case "serverless content":
			ct = c.Ingest(t.Context(), raws(never, text), convert.Source{Tool: "t"})
		case "marked earlier":
			c.Ingest(t.Context(), raws(never), convert.Source{Server: "s", Tool: "t"})
			ct = c.Ingest(t.Context(), raws(text), convert.Source{Server: "s", Tool: "t"})
		}
		if v := everyView(t, ct); strings.Contains(v, secret) {
			t.Errorf("%s: a view shows %q:\n%s", mode, secret, ct.History())
		}
	}
}

// TestHTMLEscapedNeverURIInText pins S2 and N1 for a never uri a text
// writes with HTML's character references, as a tool answering in HTML
// or XML writes every "&" of a query (an S3 link's, say): the views
// withhold it as they withhold the uri written plainly.
func TestHTMLEscapedNeverURIInText(t *testing.T) {
	const presigned = "https://bucket.s3.example/take.wav?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20260101&X-Amz-Signature=HTML-SECRET"
	amp := strings.ReplaceAll(presigned, "&", "&amp;")
	for name, text := range map[string]string{
		"html attribute": `<p>Your take: <a href="` + amp + `">download</a></p>`,
		"xml element":    `<?xml version="1.0"?><Result><Url>` + amp + `</Url></Result>`,
		"decimal":        "see " + strings.ReplaceAll(presigned, "&", "&#38;") + " now",
		"hexadecimal":    "see " + strings.ReplaceAll(presigned, "&", "&#x26;") + " now",
		"in prose":       "get it at " + amp + ".",
	} {
		t.Run(name, func(t *testing.T) { withheldEverywhere(t, presigned, text, "HTML-SECRET") })
	}
}

// lowerEscapes writes the percent escapes of url.QueryEscape in lower case.
var lowerEscapes = strings.NewReplacer("%3A", "%3a", "%2F", "%2f", "%3F", "%3f", "%3D", "%3d")

// TestPercentEncodedNeverURIInText pins S2 and N1 for a never uri a text
// writes percent-encoded, as the value of another url's query parameter
// (a redirect target) or alone: the views withhold it.
func TestPercentEncodedNeverURIInText(t *testing.T) {
	const never = "https://vault.example/take.wav?sig=PCT-SECRET"
	q := url.QueryEscape(never)
	for name, text := range map[string]string{
		"redirect parameter": "open https://login.example/continue?next=" + q + "&lang=en to get it",
		"last parameter":     "open https://login.example/continue?next=" + q + " to get it",
		"alone":              "uri=" + q,
		"lower-case escapes": "open https://login.example/continue?next=" + lowerEscapes.Replace(q) + " now",
		"encoded twice":      "open https://login.example/continue?next=" + url.QueryEscape(q) + " now",
	} {
		t.Run(name, func(t *testing.T) { withheldEverywhere(t, never, text, "PCT-SECRET") })
	}
}

// TestWebSocketAndFTPRespellings pins N8 for ws, wss and ftp uris, which
// name a host and a path as http's do: a never on one spelling withholds
// the others (host case, default port, user information) in texts, and a
// block naming another spelling finds the marked record, so no policy
// shows it.
func TestWebSocketAndFTPRespellings(t *testing.T) {
	for never, texts := range map[string][]string{
		"wss://stream.example/live?token=WS-SECRET": {
			"connect to wss://STREAM.example/live?token=WS-SECRET now",
			"connect to wss://stream.example:443/live?token=WS-SECRET now",
			"connect to wss://user@stream.example/live?token=WS-SECRET now",
		},
		"ftp://files.example/a.wav?WS-SECRET": {
			"at ftp://FILES.example/a.wav?WS-SECRET now",
			"at ftp://files.example:21/a.wav?WS-SECRET now",
		},
	} {
		for _, text := range texts {
			withheldEverywhere(t, never, text, "WS-SECRET")
		}
	}
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
	c.Ingest(t.Context(), raws(`{"type":"resource","uri":"wss://stream.example/live?token=WS-SECRET","disposition":"never"}`), convert.Source{Server: "s", Tool: "t"})
	const respelled = "wss://STREAM.example:443/live?token=WS-SECRET"
	if !reg.MarkedHere(respelled) {
		t.Errorf("MarkedHere(%q) = false after a never on another spelling", respelled)
	}
	ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+respelled+`"}`), convert.Source{Server: "s", Tool: "t"})
	if v := everyView(t, ct); strings.Contains(v, "WS-SECRET") {
		t.Errorf("a respelling of a marked uri shows:\n%s", v)
	}
}

// TestIPv4NumberSpellings pins N8 for an IPv4 host written in the other
// forms browsers read (one number, hexadecimal or octal parts, fewer
// parts): a never on the dotted form withholds them in texts.
func TestIPv4NumberSpellings(t *testing.T) {
	const never = "http://10.0.0.1/take.wav?sig=IP-SECRET"
	for _, text := range []string{
		"at http://167772161/take.wav?sig=IP-SECRET now",
		"at http://0xa.0.0.1/take.wav?sig=IP-SECRET now",
		"at http://10.1/take.wav?sig=IP-SECRET now",
		"at http://012.0.0.1/take.wav?sig=IP-SECRET now",
	} {
		withheldEverywhere(t, never, text, "IP-SECRET")
	}
}
