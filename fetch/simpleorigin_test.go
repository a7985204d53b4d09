package fetch

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// simpleOriginCases are spellings simpleOrigin must read, with their
// origin, and spellings it must leave to url.Parse (want ""), either
// because url.Parse refuses them or because reading them takes more than
// the simple form (user information, upper case, escapes, brackets).
var simpleOriginCases = []struct{ in, want string }{
	{"http://files.example/out/1.wav", "http|files.example|80"},
	{"https://files.example/out/1.wav?sig=a%2Fb&x=1", "https|files.example|443"},
	{"https://files.example:8443", "https|files.example|8443"},
	{"http://127.0.0.1:8080/p?i=3#frag", "http|127.0.0.1|8080"},
	{"https://a-b.c0.example:0443/?", "https|a-b.c0.example|0443"},
	{"http://files.example#x?y", "http|files.example|80"},
	{"http://files.example?q#f", "http|files.example|80"},
	{"http://files.example/caf\u00e9 au lait", "http|files.example|80"},

	{"HTTP://files.example/", ""},                // scheme case: url.Parse's job
	{"http://Files.example/", ""},                // host case
	{"http://user@files.example/", ""},           // user information
	{"http://user:pw@files.example/", ""},        // user information with a colon
	{"http://files.example:/", ""},               // empty port
	{"http://files.example:8o/", ""},             // port not digits
	{"http://files.example:80:81/", ""},          // two colons
	{"http://[::1]:80/", ""},                     // bracketed address
	{"http:///path", ""},                         // no host
	{"http://files.example/a%zz", ""},            // an escape in the path
	{"http://files.example/a#%zz", ""},           // an escape in the fragment
	{"http://files.example/a\x00b", ""},          // a control byte
	{"http://files.example/a?b\x7f", ""},         // DEL in the query
	{"http://files.example/a#b\x01", ""},         // a control byte in the fragment
	{"http://fi%6Ces.example/", ""},              // an escape in the host
	{"ws://files.example/", ""},                  // not http or https
	{"http:/files.example/", ""},                 // one slash
	{"http://files.example\\@evil.example/", ""}, // a backslash
}

// TestSimpleOrigin pins simpleOrigin on the spellings above and checks
// each it reads against url.Parse and originOf (F2: the origin rule must
// not depend on which reader ran).
func TestSimpleOrigin(t *testing.T) {
	for _, tt := range simpleOriginCases {
		o, ok := simpleOrigin(tt.in)
		got := ""
		if ok {
			got = o.scheme + "|" + o.host + "|" + o.port
		}
		if got != tt.want {
			t.Errorf("simpleOrigin(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if ok {
			agreesWithParse(t, tt.in, o)
		}
	}
}

// FuzzSimpleOrigin checks that every string simpleOrigin reads is one
// url.Parse reads to the same origin, with no user information and an
// http or https scheme: what Fetcher.checks asks of the parse it skips.
func FuzzSimpleOrigin(f *testing.F) {
	for _, tt := range simpleOriginCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, ok := simpleOrigin(s); ok {
			agreesWithParse(t, s, o)
		}
	})
}

func agreesWithParse(t *testing.T, s string, o origin) {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("F2: simpleOrigin reads %q, url.Parse refuses it: %v", s, err)
	}
	if u.User != nil {
		t.Fatalf("F2: simpleOrigin reads %q, url.Parse finds user information", s)
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		t.Fatalf("F2: simpleOrigin reads %q, url.Parse finds scheme %q", s, u.Scheme)
	}
	if want, ok := originOf(u); !ok || want != o {
		t.Fatalf("F2: simpleOrigin(%q) = %+v, originOf gives %+v (%v)", s, o, want, ok)
	}
}

// TestRefusalAdviceAgrees pins that the advice path of the checks (which
// may skip parsing a reference in the simple form) refuses exactly what
// the full checks refuse, with the same words, for references at, beside
// and away from their server's origin, under servers with an origin, with
// other allowed origins, and with no address at all; respelled and huge
// addresses included (F2, N7).
func TestRefusalAdviceAgrees(t *testing.T) {
	servers := map[string]Server{
		"own":    {Origin: "http://files.example"},
		"tls":    {Origin: "https://files.example:8443/mcp"},
		"others": {Origin: "http://files.example", UnauthenticatedOrigins: []string{"https://cdn.example", "http://files.example:81"}},
		"none":   {UnauthenticatedOrigins: []string{"https://cdn.example"}},
		"upper":  {Origin: "HTTP://FILES.EXAMPLE:80"},
		"dot":    {Origin: "http://files.example."},
		"ws":     {Origin: "ws://files.example"},
	}
	reg, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(reg, ServersFunc(func(name string) (Server, error) { return servers[name], nil }), &discardStore{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	uris := []string{
		"http://files.example/a.wav", "http://files.example:80/a.wav", "http://files.example:81/a.wav",
		"https://files.example/a.wav", "https://files.example:8443/a.wav?sig=x%2F", "https://cdn.example/a.wav",
		"https://cdn.example:443/a", "http://other.example/a", "http://FILES.example/a", "http://u@files.example/a",
		"ftp://files.example/a", "http://files.example/a%zz", "http:///a", "http://files.example:0080/a",
		// Respellings a hostile server might try: a trailing dot, another
		// spelling of an address, a port that overflows, an empty label.
		"http://files.example./a", "http://0x7f.0.0.1/a", "http://127.1/a", "http://files.example:99999999999999999999/a",
		"http://files..example/a", "http://files.example:80#x%41",
		// Huge addresses: a mebibyte of path, of query with escapes, and
		// of fragment.
		"http://files.example/" + strings.Repeat("a/", 1<<19),
		"http://files.example/p?" + strings.Repeat("%2F", 1<<18),
		"http://files.example/p#" + strings.Repeat("f", 1<<20),
	}
	for _, tt := range simpleOriginCases {
		uris = append(uris, tt.in)
	}
	for name := range servers {
		for i, uri := range uris {
			t1 := convert.Testimony{URI: uri, Present: convert.FieldURI}
			if i%2 == 0 {
				t1.SizeBytes, t1.Present = 1<<20, t1.Present|convert.FieldSizeBytes
			}
			rec := refs.Record{ID: "ref_x", URI: uri, Testimony: t1, Servers: []string{name}}
			_, full := f.judge(rec, f.set.ceiling, false)
			_, advice := f.judge(rec, f.set.ceiling, true)
			if clauseOf(full) != clauseOf(advice) {
				t.Errorf("F2: server %s, %q: checks say %q, the advice path %q", name, uri, clauseOf(full), clauseOf(advice))
			}
		}
	}
}

func clauseOf(f *Failure) string {
	if f == nil {
		return ""
	}
	return f.Clause + " | " + f.detail
}
