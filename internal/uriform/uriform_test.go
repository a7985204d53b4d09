package uriform

import "testing"

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
		{"reserved", "https://a.example/a%2fb?x=%3d", "https://a.example/a%2Fb?x=%3D", "reserved escapes keep, hex upper-cased"},
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

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"https://a.example/p", "HTTP://X:80/%7e", "", "%zz", "http://[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Canonical(s)
		if Canonical(c) != c {
			t.Errorf("not idempotent: %+q -> %+q -> %+q", s, c, Canonical(c))
		}
	})
}

// FuzzPlainCanonical: the fast path agrees with the full rewrite wherever
// it answers.
func FuzzPlainCanonical(f *testing.F) {
	for _, s := range []string{"https://a.example/p?q=1&r=2", "http://a:80/", "https://a.example:443/x", "http://h/~a/b.c-d_e", "https://h/?", "http://h//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if plainCanonical(s) && slowCanonical(s) != s {
			t.Errorf("fast path kept %+q, the rewrite gives %+q", s, slowCanonical(s))
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
