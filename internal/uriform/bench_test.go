package uriform

import "testing"

// BenchmarkCanonical measures the fast path (a uri already in canonical
// form, which must not allocate) and the full rewrite of respelled uris.
func BenchmarkCanonical(b *testing.B) {
	cases := []struct{ name, uri string }{
		{"plain", "https://render.example/out/12.wav?sig=abc12"},
		{"respelled", "HTTPS://Render.Example:443/out/./12.wav?sig=abc12#t=3"},
		{"escaped", "https://render.example/out/%7euser/a%2fb?x=%3d"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Canonical(c.uri)
			}
		})
	}
}
