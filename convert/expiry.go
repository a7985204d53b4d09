package convert

import "time"

// ExpiryReason says whether, and why, a reference counts as expired.
// Each reason that makes a reference expired is its own
// value, so refusals and stubs can say which.
type ExpiryReason int

// The expiry states of a reference.
const (
	// ExpiryNone: the reference claims no expiry, so it never expires.
	ExpiryNone ExpiryReason = iota
	// ExpiryLive: it claims an expiry still in the future.
	ExpiryLive
	// ExpiryPassed: its claimed expiry has passed.
	ExpiryPassed
	// ExpiryUnparseable: its expiresAt is not an RFC 3339 time or date.
	ExpiryUnparseable
	// ExpiryRejected: its expiresAt broke the schema (too long, not a
	// string, null) and was rejected as a field; it fails closed.
	ExpiryRejected
)

// Expired reports whether the reason makes the reference expired.
func (r ExpiryReason) Expired() bool { return r >= ExpiryPassed }

// String returns a short lowercase name for the reason.
func (r ExpiryReason) String() string {
	switch r {
	case ExpiryNone:
		return "none"
	case ExpiryLive:
		return "live"
	case ExpiryPassed:
		return "passed"
	case ExpiryUnparseable:
		return "unparseable"
	case ExpiryRejected:
		return "rejected"
	}
	return "unknown"
}

// Clause says why an expired reference cannot be fetched, as the stub and
// the fetcher's refusal both word it, for example "its claimed expiry has
// passed". It is "" for a reason that is not expired.
func (r ExpiryReason) Clause() string {
	switch r {
	case ExpiryPassed:
		return "its claimed expiry has passed"
	case ExpiryUnparseable:
		return "its expiry date cannot be read, so it counts as expired"
	case ExpiryRejected:
		return "its expiry field was malformed, so it counts as expired"
	}
	return ""
}

// Expiry judges the testimony's expiry at now. An expiresAt that was
// rejected as a field counts as expired, never as absent: field invalidity
// never widens exposure (RFC-005 §7.4, §8).
func (t Testimony) Expiry(now time.Time) ExpiryReason {
	if t.Rejected&FieldExpiresAt != 0 {
		return ExpiryRejected
	}
	if !t.Has(FieldExpiresAt) {
		return ExpiryNone
	}
	at, ok := ParseExpiry(t.ExpiresAt)
	if !ok {
		return ExpiryUnparseable
	}
	if !now.Before(at) {
		return ExpiryPassed
	}
	return ExpiryLive
}

// ParseExpiry parses an expiresAt value: an RFC 3339 date-time, or a
// full date alone, which means midnight UTC at the start of that day. A
// date-time may write "t" and "z" in lower case, and a leap second (a
// seconds field of 60) is read as the first second after it, as RFC 3339
// allows both.
func ParseExpiry(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	// time.Parse refuses the lower-case letters and the leap second, so
	// they are written in forms it reads, in a copy.
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > MaxExpiresAtLen {
		return time.Time{}, false
	}
	b := []byte(s)
	if b[10] == 't' {
		b[10] = 'T'
	}
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	leap := b[16] == ':' && b[17] == '6' && b[18] == '0'
	if leap {
		b[17], b[18] = '5', '9'
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, false
	}
	if leap {
		t = t.Add(time.Second)
	}
	return t, true
}
