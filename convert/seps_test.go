package convert

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSepsAgainstNaive pins the finder of separators the bare reading
// walks a text with (S2: a uri it skipped would not be withheld). For
// random texts of colons, slashes, backslashes and separators, and every
// non-decreasing run of offsets (repeats, jumps past a remembered
// separator, separators at either end), it must answer as a search from
// scratch does.
func TestSepsAgainstNaive(t *testing.T) {
	naive := func(s string, from int) (int, int) {
		for i := from; i < len(s); i++ {
			if n := sepLen(s, i); n > 0 {
				return i, n
			}
		}
		return -1, 0
	}
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []string{":", "/", `\`, "a", " ", `\/`, "://", `:\/\/`, `:\\\/\\\/`, `:\\/\\/`}
	for range 200_000 {
		var b strings.Builder
		for n := r.IntN(12); n > 0; n-- {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		s := b.String()
		f := newSeps(s)
		from := 0
		for range 8 {
			if from > len(s) {
				break
			}
			gk, gn := f.next(from)
			wk, wn := naive(s, from)
			if gk != wk || gn != wn {
				t.Fatalf("%q from %d: next = (%d, %d), a search from scratch (%d, %d)", s, from, gk, gn, wk, wn)
			}
			switch r.IntN(4) {
			case 0: // the same offset again
			case 1:
				from = max(gk+gn, from+1)
			case 2:
				from = max(gk+1, from+1)
			default:
				from += r.IntN(4)
			}
		}
	}
}

// TestSepsLinear pins L5 for the finder of separators: walking a text from
// uri to uri goes through each byte about once for each of the three ways
// a separator starts, not once per uri found (which made a listing of
// links in PHP's escaped form take quadratic time: 3.5 s for 16,000).
func TestSepsLinear(t *testing.T) {
	for name, text := range map[string]string{
		"escaped":        strings.Repeat(`{"url":"https:\/\/shop.example\/p\/1"},`, 2000),
		"escaped-second": strings.Repeat(`ab:/\/ `, 2000),
		"plain":          strings.Repeat(`{"url":"https://shop.example/p/1"},`, 2000),
		"windows-paths":  strings.Repeat(`C:\Users\me https://x.example/a `, 2000),
	} {
		f := newSeps(text)
		found := 0
		for from := 0; ; {
			k, n := f.next(from)
			if k < 0 {
				break
			}
			found++
			from = k + n
		}
		if found < 2000 || f.scanned > 4*len(text) {
			t.Errorf("%s: finding %d separators went through %d bytes of a %d-byte text; want at most four times the text", name, found, f.scanned, len(text))
		}
	}
}
