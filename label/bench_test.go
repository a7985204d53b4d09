package label

import (
	"strings"
	"testing"
)

// The benchmark inputs, built exactly as ../shared/bench/label-peer.mjs
// builds them so the MB/s figures compare directly with the peer's.
const benchShort = "attachment.wav"

func benchMixed() string {
	return strings.Repeat("hello w\u00f6rld \u202e abc \u05e9\u05dc\u05d5\u05dd \u0007 ", 1000)
}

func benchASCII1M() string {
	return strings.Repeat(strings.Repeat("a", 1023)+"\u0085", 1024)
}

func BenchmarkClean(b *testing.B) {
	inputs := []struct {
		name string
		in   string
	}{
		{"short", benchShort},
		{"mixed", benchMixed()},
		{"ascii1m", benchASCII1M()},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.in)))
			b.ReportAllocs()
			for b.Loop() {
				sink = Clean(in.in)
			}
		})
	}
}

// BenchmarkCleanFloor measures the part of BenchmarkClean's cost that any
// implementation returning a new string pays: allocating a string of the
// cleaned length and copying the kept bytes into it in one piece. On a small
// heap the garbage collector's cost per operation dominates this figure.
func BenchmarkCleanFloor(b *testing.B) {
	for _, in := range []struct {
		name string
		in   string
	}{
		{"mixed", benchMixed()},
		{"ascii1m", benchASCII1M()},
	} {
		out := Clean(in.in)
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.in)))
			b.ReportAllocs()
			for b.Loop() {
				var sb strings.Builder
				sb.Grow(len(in.in))
				sb.WriteString(out)
				sink = sb.String()
			}
		})
	}
}

func BenchmarkDisplay(b *testing.B) {
	long := strings.Repeat("n\u00e4me ", 200_000)
	b.SetBytes(int64(len(long)))
	b.ReportAllocs()
	for b.Loop() {
		sink = Display(long, NameMax)
	}
}
