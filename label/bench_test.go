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

// benchWide is already clean text made of three- and four-byte runes
// (ideographs, Hangul, Devanagari, emoji), the case where Clean asks
// Removed about every rune. The peer has no such input.
func benchWide() string {
	return strings.Repeat("\u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u0939\u093f\u0928\u094d\u0926\u0940 \U0001f3b5\U0001f600 ", 1000)
}

// BenchmarkClean times Clean on each input. Each sub-benchmark builds its
// own input, so no other input is alive while it runs: with the
// collector's smallest heap goal (4 MB), the 1 MiB ascii1m input kept
// alive through /mixed left less room between collections, and /mixed,
// which allocates 32 KiB per call, ran about 40% more collections (132
// against 95 in 10,000 calls), each of fixed cost on this machine; the
// median of /mixed moved from 47.6 to 43.4 µs with Clean unchanged.
func BenchmarkClean(b *testing.B) {
	inputs := []struct {
		name string
		in   func() string
	}{
		{"short", func() string { return benchShort }},
		{"mixed", benchMixed},
		{"ascii1m", benchASCII1M},
		{"wide", benchWide},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			s := in.in()
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				sink = Clean(s)
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
		in   func() string
	}{
		{"mixed", benchMixed},
		{"ascii1m", benchASCII1M},
	} {
		b.Run(in.name, func(b *testing.B) {
			s := in.in()
			out := Clean(s)
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				var sb strings.Builder
				sb.Grow(len(s))
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

// BenchmarkAppendDisplay renders 100 labels into one reused buffer, as a
// view rendering many stubs does, against Display building a string for
// each. The names are clean, so AppendDisplay must not allocate.
func BenchmarkAppendDisplay(b *testing.B) {
	names := make([]string, 100)
	for i := range names {
		names[i] = "take-" + strings.Repeat("x", i%40) + ".wav"
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8<<10)
		for b.Loop() {
			buf = buf[:0]
			for _, n := range names {
				buf = AppendDisplay(buf, n, 24)
			}
		}
	})
	b.Run("display", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 8<<10)
		for b.Loop() {
			buf = buf[:0]
			for _, n := range names {
				buf = append(buf, Display(n, 24)...)
			}
		}
	})
}
