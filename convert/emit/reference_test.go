package emit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

func size(n int64) *int64 { return &n }

// checkRoundTrip holds a marshaled reference to the strict schema and to
// the host's reading: every field a host reads back is the one sent.
func checkRoundTrip(t *testing.T, ref Reference, block []byte) {
	t.Helper()
	if err := convert.Validate(block); err != nil {
		t.Fatalf("%s breaks the strict schema: %v", block, err)
	}
	b := convert.Classify(block)
	if b.Kind != convert.KindReference || b.Testimony.Rejected != 0 {
		t.Fatalf("%s reads as %s, rejected %v", block, b.Kind, b.Testimony.RejectedNames())
	}
	tm := b.Testimony
	if tm.URI != ref.URI || tm.MimeType != ref.MimeType || tm.Digest != ref.Digest || tm.Name != ref.Name || string(tm.Disposition) != string(ref.Disposition) {
		t.Errorf("%s reads back as %+v", block, tm)
	}
	if (ref.SizeBytes != nil) != tm.Has(convert.FieldSizeBytes) || ref.SizeBytes != nil && *ref.SizeBytes != tm.SizeBytes {
		t.Errorf("%s: sizeBytes reads back as %d (present %v)", block, tm.SizeBytes, tm.Has(convert.FieldSizeBytes))
	}
	if ref.ExpiresAt.IsZero() {
		if tm.Has(convert.FieldExpiresAt) {
			t.Errorf("%s: an absent expiry was sent", block)
		}
	} else {
		at, ok := convert.ParseExpiry(tm.ExpiresAt)
		want := ref.ExpiresAt.Truncate(time.Second)
		if !ok || !at.Equal(want) {
			t.Errorf("%s: expiresAt reads back as %v, want %v", block, at, want)
		}
	}
}

func TestMarshalIsTheBlock(t *testing.T) {
	at := time.Date(2026, 9, 7, 2, 0, 0, 999_000_000, time.FixedZone("CEST", 2*3600))
	cases := []struct {
		ref  Reference
		want string
	}{
		{Reference{URI: "https://s.example/a"}, `{"type":"resource","uri":"https://s.example/a"}`},
		{Reference{URI: "https://s.example/a", SizeBytes: size(0)}, `{"type":"resource","uri":"https://s.example/a","sizeBytes":0}`},
		{Reference{
			URI: "https://s.example/files?path=%2Fout%2Fchord.wav", MimeType: "audio/wav", SizeBytes: size(4233704),
			Digest: "sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", ExpiresAt: at, Name: "chord.wav", Disposition: Never,
		}, `{"type":"resource","uri":"https://s.example/files?path=%2Fout%2Fchord.wav","mimeType":"audio/wav","sizeBytes":4233704,"digest":"sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU","expiresAt":"2026-09-07T00:00:00Z","name":"chord.wav","disposition":"never"}`},
		{Reference{URI: "https://s.example/<a&b>", Name: "é \u202e x", Disposition: Ref, SizeBytes: size(MaxSizeBytes)},
			`{"type":"resource","uri":"https://s.example/\u003ca\u0026b\u003e","sizeBytes":9007199254740991,"name":"é ` + "\u202e" + ` x","disposition":"ref"}`},
		{Reference{URI: strings.Repeat("é", MaxURILen), Name: strings.Repeat("n", MaxNameLen), MimeType: strings.Repeat("m", MaxMimeTypeLen)}, ""},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.ref)
		if err != nil {
			t.Fatalf("%+v: %v", c.ref, err)
		}
		if c.want != "" && string(got) != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
		checkRoundTrip(t, c.ref, got)
		ptr, err := json.Marshal(&c.ref)
		if err != nil || string(ptr) != string(got) {
			t.Errorf("a *Reference encodes as %s, %v; the value as %s", ptr, err, got)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	ok := Reference{URI: "https://s.example/a"}
	with := func(f func(*Reference)) Reference { r := ok; f(&r); return r }
	cases := []struct {
		name string
		ref  Reference
		want string
	}{
		{"empty uri", Reference{}, "uri is empty"},
		{"long uri", with(func(r *Reference) { r.URI = "https://s.example/" + strings.Repeat("é", MaxURILen) }), "uri is 4114 code points long; the limit is 4096"},
		{"user and password", with(func(r *Reference) { r.URI = "https://user:pw@s.example/a" }), "uri carries a user name or password"},
		{"user only", with(func(r *Reference) { r.URI = "https://tok@s.example/a" }), "uri carries a user name or password"},
		{"empty user part", with(func(r *Reference) { r.URI = "ftp://@s.example/a" }), "uri carries a user name or password"},
		// Spellings a browser's URL parser (WHATWG) reads as credentials.
		{"user after no slashes", with(func(r *Reference) { r.URI = "https:u:p@s.example/x" }), "uri carries a user name or password"},
		{"user after one slash", with(func(r *Reference) { r.URI = "https:/u:p@s.example/x" }), "uri carries a user name or password"},
		{"backslashes", with(func(r *Reference) { r.URI = `https:\\u:p@s.example/x` }), "uri holds"},
		{"leading space", with(func(r *Reference) { r.URI = " https://u:p@s.example/x" }), "uri holds"},
		{"leading NUL", with(func(r *Reference) { r.URI = "\x00https://u:p@s.example/x" }), "uri holds"},
		{"tab in scheme", with(func(r *Reference) { r.URI = "ht\ttps://u:p@s.example/x" }), "uri holds"},
		{"space inside", with(func(r *Reference) { r.URI = "https://s.example/a b" }), "uri holds"},
		{"C1 control", with(func(r *Reference) { r.URI = "https://s.example/a\u009bb" }), "uri holds"},
		{"invalid UTF-8", with(func(r *Reference) { r.URI = "https://s.example/caf\xe9.wav" }), "uri is not valid UTF-8"},
		{"long mimeType", with(func(r *Reference) { r.MimeType = strings.Repeat("m", 256) }), "mimeType is 256 code points long; the limit is 255"},
		{"negative size", with(func(r *Reference) { r.SizeBytes = size(-1) }), "sizeBytes is -1; it must be between 0 and 9007199254740991"},
		{"huge size", with(func(r *Reference) { r.SizeBytes = size(MaxSizeBytes + 1) }), "sizeBytes is 9007199254740992"},
		{"md5 digest", with(func(r *Reference) { r.Digest = "md5:abc" }), `digest "md5:abc" is not "sha256:" followed by 43 base64url characters`},
		{"padded digest", with(func(r *Reference) { r.Digest = "sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=" }), "digest"},
		{"std base64 digest", with(func(r *Reference) { r.Digest = "sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU" }), "digest"},
		{"year 10000", with(func(r *Reference) { r.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }), "expiresAt falls in the year 10000"},
		{"long name", with(func(r *Reference) { r.Name = strings.Repeat("n", 256) }), "name is 256 code points long"},
		{"capitalized disposition", with(func(r *Reference) { r.Disposition = "Never" }), `disposition "Never" is neither "never" nor "ref"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.ref.Check()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "emit: ") {
				t.Fatalf("Check = %v, want an error containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "pw@") || strings.Contains(err.Error(), "tok@") || strings.Contains(err.Error(), "p@") {
				t.Errorf("the error repeats the credential: %v", err)
			}
			if _, merr := json.Marshal(c.ref); !errors.Is(merr, err) && (merr == nil || !strings.Contains(merr.Error(), c.want)) {
				t.Errorf("Marshal = %v, want Check's error", merr)
			}
			if _, perr := Placeholder(c.ref); perr == nil {
				t.Error("Placeholder accepted a reference Check refuses")
			}
		})
	}
}

// FuzzReference holds the kit's promise: whatever Check accepts encodes
// to a block the strict schema accepts and a host reads back field for
// field, and whatever the schema would refuse, Check refuses.
func FuzzReference(f *testing.F) {
	f.Add("https://s.example/a", "audio/wav", int64(12), true, "sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", int64(1788739200), "a.wav", "never")
	f.Add("", "", int64(-1), true, "sha256:", int64(0), "", "ref")
	f.Add("https://u@h/x", strings.Repeat("m", 256), int64(1<<53), true, "md5:x", int64(-62135596801), strings.Repeat("é", 256), "Never")
	f.Add("x\xff\"\u2028", "\x00", int64(0), false, "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", int64(253402300800), "\xed\xa0\x80", "")
	f.Fuzz(func(t *testing.T, uri, mimeType string, n int64, hasSize bool, digest string, unix int64, name, disposition string) {
		ref := Reference{URI: uri, MimeType: mimeType, Digest: digest, Name: name, Disposition: Disposition(disposition)}
		if hasSize {
			ref.SizeBytes = &n
		}
		if unix != 0 {
			ref.ExpiresAt = time.Unix(unix, 0)
		}
		raw, werr := ref.wire()
		if werr != nil {
			t.Fatalf("wire: %v", werr)
		}
		if err := ref.Check(); err != nil {
			if _, merr := json.Marshal(ref); merr == nil {
				t.Fatalf("Marshal accepted what Check refuses: %v", err)
			}
			return
		}
		if convert.Validate(raw) != nil {
			t.Fatalf("Check accepted %s, which the schema refuses: %v", raw, convert.Validate(raw))
		}
		got, err := json.Marshal(ref)
		if err != nil || string(got) != string(raw) {
			t.Fatalf("Marshal = %s, %v", got, err)
		}
		if utf8.ValidString(uri) && utf8.ValidString(mimeType) && utf8.ValidString(digest) && utf8.ValidString(name) {
			checkRoundTrip(t, ref, got)
		}
	})
}

func TestDigest(t *testing.T) {
	d, n, err := Digest(strings.NewReader(""))
	if err != nil || n != 0 || d != "sha256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU" {
		t.Errorf("Digest of nothing = %q, %d, %v", d, n, err)
	}
	payload := strings.Repeat("RIFF wave data ", 10000)
	sum := sha256.Sum256([]byte(payload))
	d, n, err = Digest(iotest.OneByteReader(strings.NewReader(payload)))
	if err != nil || n != int64(len(payload)) || d != "sha256:"+base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Errorf("Digest = %q, %d, %v", d, n, err)
	}
	if err := (Reference{URI: "https://s.example/a", Digest: d, SizeBytes: &n}).Check(); err != nil {
		t.Errorf("Digest's output does not pass Check: %v", err)
	}
	boom := errors.New("boom")
	d, n, err = Digest(iotest.TimeoutReader(strings.NewReader("abcdef")))
	if err == nil || d != "" {
		t.Errorf("Digest on a failing reader = %q, %d, %v", d, n, err)
	}
	if _, _, err := Digest(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("Digest lost the read error: %v", err)
	}
}
