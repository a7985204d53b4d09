package uriform

import (
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want, reason string
	}{
		{"plain", "https://a.example/p?q=1", "https://a.example/p?q=1", "already canonical stays put"},
		{"case", "HTTPS://A.Example/P", "https://a.example/P", "scheme and host fold, path keeps case (N8)"},
		{"port-https", "https://a.example:443/p", "https://a.example/p", "default port dropped"},
		{"port-http", "http://a.example:80/p", "http://a.example/p", "default port dropped"},
		{"port-kept", "http://a.example:8080/p", "http://a.example:8080/p", "other ports matter"},
		{"space", " \u200bhttps://a.example/p\ufeff\n", "https://a.example/p", "surrounding space and invisibles removed"},
		{"ignorables", "\ufe0f\u3164https://a.example/p\u00ad\U000e0100", "https://a.example/p", "default-ignorables and format characters around a uri are trimmed like the others (L3)"},
		{"unreserved", "https://a.example/%7euser/%41", "https://a.example/~user/A", "unreserved escapes decoded"},
		{"reserved", "https://a.example/a%3fb?x=%3d", "https://a.example/a%3Fb?x=%3D", "reserved escapes keep, hex upper-cased"},
		{"unparseable", "http://[::1", "http://[::1", "unparseable input keyed by its text"},
		{"file", "file:///private/x", "file:///private/x", "file uris keep their empty authority"},
		{"opaque", "mailto:A@B", "mailto:A@B", "opaque forms are left alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Canonical(tt.in); got != tt.want {
				t.Errorf("Canonical(%+q) = %+q, want %+q (%s)", tt.in, got, tt.want, tt.reason)
			}
			if again := Canonical(Canonical(tt.in)); again != Canonical(tt.in) {
				t.Errorf("Canonical is not idempotent on %+q: %+q", tt.in, again)
			}
		})
	}
}

// FuzzPlainCanonical: the fast path agrees with the full rewrite wherever
// it answers.
func FuzzPlainCanonical(f *testing.F) {
	for _, s := range []string{
		"https://a.example/p?q=1&r=2", "http://a:80/", "https://a.example:443/x", "http://h/~a/b.c-d_e",
		"https://h/?", "http://h//x", "https://h/a/./b", "https://h/a/..", "https://h./", "https://h:0443/",
		"https://h:8443/a%2Fb?x=%3D", "https://h/%7E", "https://h/a%2f", "https://h:/", "https://h/p?a=b?",
	} {
		f.Add(s)
	}
	f.Add("https://a.example")
	f.Add("HTTPS://A.example")
	f.Add("https://a.example:8443")
	f.Add("gs://bucket/x")
	f.Add("https://a.example/p#f")
	f.Add("https://a.example/p?#f")
	f.Add("https://a.example#f")
	f.Add("https://a.example/p#%zz")
	f.Add("https://a.example/p#%2")
	f.Add("https://a.example/p#a%41")
	f.Fuzz(func(t *testing.T, s string) {
		if plainCanonical(s) && slowCanonical(s) != s {
			t.Errorf("fast path kept %+q, the rewrite gives %+q", s, slowCanonical(s))
		}
		// Key's shortcuts (another scheme, an empty path) give the
		// rewrite's key.
		if k, _ := Key(s); !plainCanonical(s) && k != slowCanonical(s) {
			t.Errorf("Key(%+q) = %+q, the rewrite gives %+q", s, k, slowCanonical(s))
		}
	})
}

func TestPlainCanonicalAllocs(t *testing.T) {
	const u = "https://render.example/out/12.wav?sig=abc12"
	if !plainCanonical(u) {
		t.Fatal("a plain https uri missed the fast path")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Canonical(u) }); n != 0 {
		t.Errorf("Canonical of a plain uri allocated %v times", n)
	}
}

func TestHosts(t *testing.T) {
	tests := []struct{ name, in, want, reason string }{
		{"idna-cjk", "https://例え.テスト/", "https://xn--r8jz45g.xn--zckzah/", "each Unicode label becomes its ASCII form"},
		{"idna-fullwidth", "https://ｂücher．example/", "https://xn--bcher-kva.example/", "compatibility forms and the full-width stop map as a lookup maps them"},
		{"idna-invisible", "https://bü\u200bcher.example/", "https://xn--bcher-kva.example/", "an invisible character in a host name is dropped"},
		{"idna-dotted-capital-i", "https://\u0130nternal.test/", "https://xn--internal-o0e.test/", "U+0130 maps to an i and a combining dot above, as an HTTP client's lookup maps it, not to the plain i of Unicode lower-casing (F2)"},
		{"idna-kelvin", "https://\u212Aelvin.test/", "https://kelvin.test/", "the Kelvin sign maps to k, as a lookup maps it"},
		{"idna-unmappable", "https://bü／cher.example/", "https://b%C3%BC%EF%BC%8Fcher.example/", "a label that maps to a slash keeps its escaped spelling"},
		{"ipv6-zone", "https://[FE80::1%25Eth0]:0443/", "https://[fe80::1%25Eth0]/", "an IPv6 zone is kept in its case: interface names are case-sensitive (F2)"},
		{"ipv6-zone-escapes", "https://[fe80::1%25%41%20é]/", "https://[fe80::1%25A%20é]/", "a zone's ASCII escapes stay escapes, its other bytes stay raw"},
		{"ipv4", "http://127.0.0.1:080/", "http://127.0.0.1/", "an IPv4 address stays as written"},
		{"userinfo", "https://U%73er:p%3aw@H/", "https://h/", "user information never reaches the request line, so it is no part of the key"},
		{"userinfo-empty-password", "https://u:@h/", "https://h/", "nor is an empty password"},
		{"dot-host", "HTTPS://./", "https://./", "a host of dots only names no host: the uri is keyed by its text"},
		{"port-zero", "https://h:000/", "https://h:0/", "port zero is written once"},
		{"other-scheme", "FILE:///Private/x#F", "file:///Private/x#F", "another scheme keeps its text, scheme lower-cased"},
		{"ws", " WSS://H:443/x ", "wss://h/x", "a WebSocket uri is keyed as an http one, with the same default ports"},
		{"sftp", " SFTP://H:22/x ", "sftp://H:22/x", "a scheme with no known default port keeps its text, scheme lower-cased"},
		{"no-host", "HTTPS:///x", "https:///x", "an http uri without a host is keyed by its text"},
		{"bad-escape", "HTTPS://h/%zz", "https://h/%zz", "an unparseable uri is keyed by its text"},
		{"query-raw", "https://h/?a b\"c<é>[]", "https://h/?a%20b%22c%3C%C3%A9%3E%5B%5D", "characters a query cannot hold raw are escaped"},
		{"query-percent", "https://h/?a=%zz&b=%", "https://h/?a=%25zz&b=%25", "a lone percent sign is escaped"},
		{"path-raw", "https://h/a b/[x]/a%21b%3b%25", "https://h/a%20b/%5Bx%5D/a!b;%25", "a path is decoded, then each byte that cannot stand raw in a segment escaped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Canonical(tt.in)
			if got != tt.want {
				t.Errorf("Canonical(%+q) = %+q, want %+q (%s)", tt.in, got, tt.want, tt.reason)
			}
			if again := Canonical(got); again != got {
				t.Errorf("Canonical is not idempotent on %+q: %+q then %+q", tt.in, got, again)
			}
		})
	}
}
