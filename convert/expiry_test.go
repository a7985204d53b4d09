package convert_test

import (
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
)

// TestParseExpiry pins E1's reading of expiresAt: every RFC 3339
// date-time, including the lower-case "t" and "z" and the leap second
// that section 5.6 of RFC 3339 allows, and a full date alone as midnight
// UTC. Anything else is unparseable, which counts as expired.
func TestParseExpiry(t *testing.T) {
	utc := func(y int, m time.Month, d, h, min, s int) time.Time {
		return time.Date(y, m, d, h, min, s, 0, time.UTC)
	}
	for _, tt := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2099-01-01T00:00:00Z", utc(2099, 1, 1, 0, 0, 0), true},
		{"2099-01-01t00:00:00z", utc(2099, 1, 1, 0, 0, 0), true},
		{"2099-01-01t00:00:00.5+02:00", utc(2098, 12, 31, 22, 0, 0).Add(500 * time.Millisecond), true},
		{"2098-12-31T23:59:60Z", utc(2099, 1, 1, 0, 0, 0), true},
		{"2098-12-31t23:59:60.25z", utc(2099, 1, 1, 0, 0, 0).Add(250 * time.Millisecond), true},
		{"2099-01-01", utc(2099, 1, 1, 0, 0, 0), true},
		{"2099-01-01t00:00:00.1234567890+02:00", utc(2098, 12, 31, 22, 0, 0).Add(123456789), true},
		{"2098-12-31T23:59:60.123456789012Z", utc(2099, 1, 1, 0, 0, 0).Add(123456789), true},
		{"", time.Time{}, false},
		{"2099-01-01 00:00:00Z", time.Time{}, false},
		{"2099-01-01T00:00:61Z", time.Time{}, false},
		{"2099-01-01T00:00:00", time.Time{}, false},
		{"2099-01-01x00:00:00Z", time.Time{}, false},
		{"2099-01-01T00:00:00\u017f", time.Time{}, false},
		{"tomorrow", time.Time{}, false},
	} {
		got, ok := convert.ParseExpiry(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
