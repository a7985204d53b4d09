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
