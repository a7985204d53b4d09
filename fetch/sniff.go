package fetch

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/mcplrefs/refcore/label"
)

// sniffLen is how many leading bytes decide a sniffed type, as for
// [http.DetectContentType].
const sniffLen = 512

// signature is a byte pattern at the start of a payload. In pattern, a 0x00
// in mask (where mask is set) means "any byte here".
type signature struct {
	pattern []byte
	mask    []byte // nil: exact
	mime    string
}

func (s signature) match(b []byte) bool {
	if len(b) < len(s.pattern) {
		return false
	}
	if s.mask == nil {
		return bytes.HasPrefix(b, s.pattern)
	}
	for i, p := range s.pattern {
		if b[i]&s.mask[i] != p {
			return false
		}
	}
	return true
}

// extraSignatures are checked before [http.DetectContentType]: formats it
// does not know, or names differently from the type this package records.
var extraSignatures = []signature{
	{pattern: []byte("RIFF\x00\x00\x00\x00WAVE"), mask: []byte("\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff"), mime: "audio/wav"},
	{pattern: []byte("fLaC"), mime: "audio/flac"},
	{pattern: []byte("II*\x00"), mime: "image/tiff"},
	{pattern: []byte("MM\x00*"), mime: "image/tiff"},
	{pattern: []byte("\x00\x00\x00\x00ftypavif"), mask: []byte("\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"), mime: "image/avif"},
	{pattern: []byte("\x00\x00\x00\x00ftypheic"), mask: []byte("\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"), mime: "image/heic"},
	{pattern: []byte("\x00\x00\x00\x00ftypM4A "), mask: []byte("\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"), mime: "audio/mp4"},
}

// sniff returns the type the bytes show, or "" when they show none. A
// "text/plain" result only says the bytes look like text.
func sniff(head []byte) string {
	if len(head) == 0 {
		return ""
	}
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	for _, s := range extraSignatures {
		if s.match(head) {
			return s.mime
		}
	}
	t := label.MediaTypeEssence(http.DetectContentType(head))
	if t == "application/octet-stream" {
		return ""
	}
	return canonicalType(t)
}

// observedType picks the verified media type: the sniffed type when
// the bytes are recognisable, else the response's Content-Type, else the
// claimed type, else application/octet-stream. Bytes that merely look like
// text keep a textual declared type (JSON, CSV, HTML) and otherwise read
// as text/plain.
func observedType(head []byte, contentType, claimed string) string {
	declared := canonicalType(label.MediaTypeEssence(contentType))
	s := sniff(head)
	switch {
	case s == "text/plain":
		if declared != "" && textual(declared) {
			return declared
		}
		return s
	case s != "":
		return s
	case declared != "":
		return declared
	}
	if c := canonicalType(label.MediaTypeEssence(claimed)); c != "" {
		return c
	}
	return "application/octet-stream"
}

// aliases maps other names of a type to the one this package records.
var aliases = map[string]string{
	"audio/wave":               "audio/wav",
	"audio/x-wav":              "audio/wav",
	"audio/vnd.wave":           "audio/wav",
	"audio/x-pn-wav":           "audio/wav",
	"audio/x-flac":             "audio/flac",
	"audio/mp3":                "audio/mpeg",
	"audio/x-aiff":             "audio/aiff",
	"image/jpg":                "image/jpeg",
	"image/pjpeg":              "image/jpeg",
	"image/x-png":              "image/png",
	"image/x-ms-bmp":           "image/bmp",
	"application/x-gzip":       "application/gzip",
	"video/x-msvideo":          "video/avi",
	"application/x-pdf":        "application/pdf",
	"text/x-markdown":          "text/markdown",
	"application/x-json":       "application/json",
	"text/json":                "application/json",
	"application/x-ogg":        "application/ogg",
	"image/vnd.microsoft.icon": "image/x-icon",
}

// canonicalType maps a type essence to its canonical name.
func canonicalType(t string) string {
	if a, ok := aliases[t]; ok {
		return a
	}
	return t
}

// textual reports whether a type is text a person could read.
func textual(t string) bool {
	switch {
	case strings.HasPrefix(t, "text/"),
		strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"):
		return true
	}
	switch t {
	case "application/json", "application/xml", "application/javascript",
		"application/x-ndjson", "application/yaml", "application/toml":
		return true
	}
	return false
}

// extensions is the fixed table of storage extensions. A type not
// listed is stored as ".bin".
var extensions = map[string]string{
	"audio/wav":                ".wav",
	"audio/mpeg":               ".mp3",
	"audio/flac":               ".flac",
	"audio/ogg":                ".ogg",
	"application/ogg":          ".ogg",
	"audio/mp4":                ".m4a",
	"audio/aiff":               ".aiff",
	"audio/midi":               ".mid",
	"audio/webm":               ".weba",
	"image/png":                ".png",
	"image/jpeg":               ".jpg",
	"image/gif":                ".gif",
	"image/webp":               ".webp",
	"image/bmp":                ".bmp",
	"image/tiff":               ".tiff",
	"image/avif":               ".avif",
	"image/heic":               ".heic",
	"image/svg+xml":            ".svg",
	"image/x-icon":             ".ico",
	"video/mp4":                ".mp4",
	"video/webm":               ".webm",
	"video/avi":                ".avi",
	"application/pdf":          ".pdf",
	"application/zip":          ".zip",
	"application/gzip":         ".gz",
	"application/json":         ".json",
	"application/xml":          ".xml",
	"application/wasm":         ".wasm",
	"application/octet-stream": ".bin",
	"text/plain":               ".txt",
	"text/html":                ".html",
	"text/csv":                 ".csv",
	"text/markdown":            ".md",
	"text/xml":                 ".xml",
	"font/woff":                ".woff",
	"font/woff2":               ".woff2",
	"font/ttf":                 ".ttf",
	"font/otf":                 ".otf",
}

// extension returns the storage extension for an observed type.
func extension(t string) string {
	if e, ok := extensions[t]; ok {
		return e
	}
	return ".bin"
}
