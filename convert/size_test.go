package convert

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestFormatSize pins how stubs show a byte count (S1): exact below 1,000
// bytes, then one decimal in SI units, rounding up into the next unit at
// 999.95, up to exabytes. The random half pins the rule over the whole
// int64 range against a plain restatement of it.
func TestFormatSize(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1, "1 byte"}, {2, "2 bytes"}, {999, "999 bytes"},
		{1000, "1.0 kB"}, {1049, "1.0 kB"}, {1050, "1.1 kB"}, {999_949, "999.9 kB"},
		{999_950, "1.0 MB"}, {1 << 20, "1.0 MB"}, {4_233_704, "4.2 MB"},
		{999_950_000_000_000_000, "1.0 EB"}, {math.MaxInt64, "9.2 EB"},
	} {
		if got := formatSize(tt.n); got != tt.want {
			t.Errorf("S1: formatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	plain := func(n int64) string {
		v, u := float64(n), -1
		for v >= 999.95 && u < len(units)-1 {
			v /= 1000
			u++
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		n := rng.Int64N(math.MaxInt64>>uint(rng.IntN(63))) + 1000
		if n < 1000 {
			continue
		}
		if got, want := formatSize(n), plain(n); got != want {
			t.Fatalf("S1: formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
