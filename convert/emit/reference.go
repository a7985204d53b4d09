package emit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

// Disposition is what a server asks a host to do with the payload's place
// in the model's context.
type Disposition string

// The dispositions a reference may carry. The zero value asks nothing, and
// the host applies its own default.
const (
	// Never asks that neither the payload nor the uri ever reach the
	// model; only a stub stands for the reference. Hosts must honour it.
	Never Disposition = "never"
	// Ref asks that the model see a stub rather than the payload. A host
	// may still show the payload when its own policy admits it.
	Ref Disposition = "ref"
)

// Reference is one reference block: a server's description of a payload
// it serves at URI. Every field but URI is optional; a field left at its
// zero value is left out of the block. Everything here is testimony: a
// host checks the bytes it fetches against SizeBytes and Digest, and
// decides on its own what the model sees.
//
// A Reference encodes to JSON as the block itself, fields in the order
// type, uri, mimeType, sizeBytes, digest, expiresAt, name, disposition.
// Encoding fails with the error of [Reference.Check] when the reference
// is not one the strict schema accepts.
type Reference struct {
	// URI is where the server serves the payload, normally an https URL
	// at the origin the host connected to. It must not carry credentials:
	// a host authenticates with its own connection's context.
	URI string
	// MimeType is the payload's media type, such as "audio/wav". Without
	// it a host cannot tell the model what the payload is.
	MimeType string
	// SizeBytes is the payload's length in bytes, nil when not stated.
	// Without it a host cannot refuse an oversized payload before
	// fetching it. [Digest] returns it.
	SizeBytes *int64
	// Digest is "sha256:" followed by the unpadded base64url SHA-256 of
	// the payload bytes, as [Digest] returns it; it lets a host verify
	// what it fetched.
	Digest string
	// ExpiresAt is when the server stops serving the payload; the zero
	// time means no stated expiry. It is sent in UTC, to the second,
	// rounded down.
	ExpiresAt time.Time
	// Name is a display label for the payload, such as "take1.wav". Hosts
	// never use it as a file name.
	Name string
	// Disposition is the server's request about the model's context.
	Disposition Disposition
}

// Bounds a reference's fields must keep, in Unicode code points, as the
// strict schema counts them.
const (
	MaxURILen      = convert.MaxURILen
	MaxMimeTypeLen = convert.MaxMimeTypeLen
	MaxNameLen     = convert.MaxNameLen
	// MaxSizeBytes is 2^53-1, the largest size every JSON reader can
	// hold exactly.
	MaxSizeBytes = convert.MaxSizeBytes
)

// Check reports whether r is a reference the strict schema accepts, and
// one a server may send. It returns nil or an error naming the first field
// at fault, in the block's field order, and what to change. It refuses:
//
//   - an empty uri, a uri over 4096 code points, a uri that is not
//     valid UTF-8 or holds white space, a control character or a
//     backslash (percent-encode them), and a uri with a user name or
//     password before its host name, however a browser's URL parser
//     would find it (servers must not put credentials in the uri);
//   - a mimeType or name over 255 code points;
//   - a negative sizeBytes, or one over 2^53-1;
//   - a digest that is not "sha256:" and 43 base64url characters;
//   - an expiresAt outside the years 1 to 9999, which has no RFC 3339
//     form;
//   - a disposition other than "never", "ref" or none.
//
// Check does not judge query parameters: which ones are credentials is a
// guess, which refconform validate makes as advice.
func (r Reference) Check() error {
	switch n := utf8.RuneCountInString(r.URI); {
	case n == 0:
		return errors.New("emit: uri is empty; a reference needs the URL the payload is served at")
	case n > MaxURILen:
		return fmt.Errorf("emit: uri is %d code points long; the limit is %d", n, MaxURILen)
	}
	if !utf8.ValidString(r.URI) {
		return errors.New("emit: uri is not valid UTF-8; JSON would carry another uri in its place")
	}
	if strings.IndexFunc(r.URI, func(c rune) bool { return c <= ' ' || c == '\\' || unicode.IsControl(c) || unicode.IsSpace(c) }) >= 0 {
		return errors.New("emit: uri holds white space, a control character or a backslash; percent-encode it, since URL parsers differ on what such a character means")
	}
	if hasUserInfo(r.URI) {
		return errors.New("emit: uri carries a user name or password before its host name; servers must not put credentials in the uri: remove them and serve the payload under the connection's own authentication")
	}
	if n := utf8.RuneCountInString(r.MimeType); n > MaxMimeTypeLen {
		return fmt.Errorf("emit: mimeType is %d code points long; the limit is %d", n, MaxMimeTypeLen)
	}
	if r.SizeBytes != nil {
		if n := *r.SizeBytes; n < 0 || n > MaxSizeBytes {
			return fmt.Errorf("emit: sizeBytes is %d; it must be between 0 and %d", n, int64(MaxSizeBytes))
		}
	}
	if r.Digest != "" && !validDigest(r.Digest) {
		return fmt.Errorf("emit: digest %q is not \"sha256:\" followed by 43 base64url characters; use Digest to compute it", clip(r.Digest))
	}
	if !r.ExpiresAt.IsZero() {
		if y := r.ExpiresAt.UTC().Year(); y < 1 || y > 9999 {
			return fmt.Errorf("emit: expiresAt falls in the year %d; it must fall between the years 1 and 9999", y)
		}
	}
	if n := utf8.RuneCountInString(r.Name); n > MaxNameLen {
		return fmt.Errorf("emit: name is %d code points long; the limit is %d", n, MaxNameLen)
	}
	switch r.Disposition {
	case "", Never, Ref:
	default:
		return fmt.Errorf("emit: disposition %q is neither %q nor %q", clip(string(r.Disposition)), Never, Ref)
	}
	return nil
}

// wireReference is the block as it goes on the wire, in field order.
type wireReference struct {
	Type        string `json:"type"`
	URI         string `json:"uri"`
	MimeType    string `json:"mimeType,omitempty"`
	SizeBytes   *int64 `json:"sizeBytes,omitempty"`
	Digest      string `json:"digest,omitempty"`
	ExpiresAt   string `json:"expiresAt,omitempty"`
	Name        string `json:"name,omitempty"`
	Disposition string `json:"disposition,omitempty"`
}

// MarshalJSON encodes r as a reference block, or returns the error of
// [Reference.Check].
func (r Reference) MarshalJSON() ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r.wire()
}

// wire encodes r without checking it.
func (r Reference) wire() ([]byte, error) {
	w := wireReference{
		Type:        "resource",
		URI:         r.URI,
		MimeType:    r.MimeType,
		SizeBytes:   r.SizeBytes,
		Digest:      r.Digest,
		Name:        r.Name,
		Disposition: string(r.Disposition),
	}
	if !r.ExpiresAt.IsZero() {
		w.ExpiresAt = r.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	return json.Marshal(w)
}

// Digest reads r to its end and returns the reference digest of what it
// read ("sha256:" followed by the unpadded base64url SHA-256) and the
// number of bytes read. Hash the payload exactly as a client receives it
// once any content coding is undone: the bytes of the file, not of a gzip
// stream it is served through. On a read error it returns "", the bytes
// read so far, and the error.
func Digest(r io.Reader) (digest string, n int64, err error) {
	h := sha256.New()
	n, err = io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return "sha256:" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)), n, nil
}

// validDigest reports whether d is "sha256:" and 43 base64url characters.
func validDigest(d string) bool {
	const prefix = "sha256:"
	rest, ok := strings.CutPrefix(d, prefix)
	if !ok || len(rest) != 43 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// hasUserInfo reports whether uri has an authority ("//" after the
// scheme) with an "@" in it, which puts a user name, a password, or an
// empty user part before the host name, or whether Go's URL parser, which
// hosts written in Go use, finds user information in it.
func hasUserInfo(uri string) bool {
	if u, err := url.Parse(uri); err == nil && u.User != nil {
		return true
	}
	// A browser's URL parser reads the host of a web scheme after any
	// number of slashes, none included ("https:u:p@host").
	if scheme, rest, ok := strings.Cut(uri, ":"); ok && webScheme(scheme) {
		authority := strings.TrimLeft(rest, "/")
		if end := strings.IndexAny(authority, "/?#"); end >= 0 {
			authority = authority[:end]
		}
		if strings.Contains(authority, "@") {
			return true
		}
	}
	i := strings.Index(uri, "://")
	if i <= 0 {
		return false
	}
	for _, c := range uri[:i] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	authority := uri[i+3:]
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	return strings.Contains(authority, "@")
}

// webScheme reports whether scheme is one whose URLs a browser's parser
// reads with a host however many slashes follow the colon.
func webScheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}
