package convert

import (
	"strconv"
	"strings"

	"github.com/mcplrefs/refcore/label"
)

// The model-visible texts below are a contract: golden files under
// testdata/ pin every shape (see view_test.go). Every stub and notice is one
// line in square brackets, so models learn one shape (S1, S6).

// Lane is the route by which content reached the host (RFC-005 §4).
type Lane int

// The server-to-host lanes.
const (
	LaneToolResult Lane = iota
	LanePush
	LaneChannel
	LaneInjection
)

// String returns the lane's lowercase name.
func (l Lane) String() string {
	switch l {
	case LaneToolResult:
		return "tool result"
	case LanePush:
		return "push event"
	case LaneChannel:
		return "channel message"
	case LaneInjection:
		return "injection"
	}
	return "unknown lane"
}

// Source says where content came from. Every string in it is treated as
// server-supplied: it is cleaned and bounded before it reaches a view.
type Source struct {
	// Server names the MCPL server that sent the content, or "" when no
	// server did (serverless content).
	Server string
	// Lane is the route the content took.
	Lane Lane
	// Tool names the tool whose result this is (tool-result lane).
	Tool string
	// Event names the push event or channel, where the host knows it.
	Event string
}

// provenance is the stub's one line of provenance (S1).
func (p Policy) provenance(src Source) string {
	b := func(s string) string { return label.Display(s, DefaultProvenanceMax) }
	server, tool, event := b(src.Server), b(src.Tool), b(src.Event)
	var s string
	switch src.Lane {
	case LaneToolResult:
		switch {
		case tool != "":
			s = "from tool " + tool
		case server != "":
			s = "from a tool of " + server
		default:
			s = "from a tool result"
		}
	case LanePush:
		s = "attachment on a push event"
		if event != "" {
			s = "attachment on push event " + event
		}
	case LaneChannel:
		s = "attachment on a channel message"
		if event != "" {
			s = "attachment on a message in " + event
		}
	case LaneInjection:
		s = "attachment on an injection"
	default:
		s = "attachment"
	}
	if server != "" && !(src.Lane == LaneToolResult && tool == "") {
		if src.Lane == LaneToolResult {
			s += " of " + server
		} else {
			s += " from " + server
		}
	}
	if src.Server == "" {
		s += " (no server)"
	}
	return s
}

// formatSize renders a claimed or verified byte count: exact below 1,000
// bytes, otherwise one decimal in SI units, as "4.2 MB".
func formatSize(n int64) string {
	if n < 1000 {
		if n == 1 {
			return "1 byte"
		}
		return strconv.FormatInt(n, 10) + " bytes"
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n)
	u := -1
	for v >= 999.95 && u < len(units)-1 {
		v /= 1000
		u++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

// expiryClause says why an expired reference cannot be fetched (E1).
func expiryClause(r ExpiryReason) string {
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

// neverWords ends a stub or notice for content a never withholds.
const neverWords = "its server marked it never, so neither the model nor its tools may receive it"

// stub renders one reference's stub (S1–S3).
func (c *Converter) stub(e Entry, src Source) string {
	p := c.policy
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(e.ID)
	t := e.Testimony
	if name := label.Display(t.Name, p.NameMax); name != "" {
		b.WriteString(` "`)
		b.WriteString(name)
		b.WriteByte('"')
	}
	if mt := label.Bound(label.MediaType(t.MimeType), p.TypeMax); mt != "" {
		b.WriteByte(' ')
		b.WriteString(mt)
	}
	if t.Has(FieldSizeBytes) {
		b.WriteString(", claimed ")
		b.WriteString(formatSize(t.SizeBytes))
	}
	b.WriteString(", ")
	b.WriteString(p.provenance(src))
	if !e.Never && t.Disposition != DispositionNever && p.ShowURI != nil && p.ShowURI(e) {
		b.WriteString(", at ")
		b.WriteString(label.Display(t.URI, MaxURILen))
	}
	b.WriteString("; ")
	b.WriteString(c.next(e))
	b.WriteByte(']')
	return c.boundLine(b.String())
}

// next is what a stub offers after its facts (S3).
func (c *Converter) next(e Entry) string {
	switch {
	case e.Never:
		return "withheld: " + neverWords
	case e.Saved:
		s := "saved at " + label.Display(e.SavedPath, 2*label.NameMax) + " (" + formatSize(e.VerifiedBytes) + " verified"
		if mt := label.MediaType(e.VerifiedType); mt != "" {
			s += ", " + mt
		}
		if e.DigestVerified {
			s += ", digest matched"
		}
		return s + ")"
	}
	if why := c.unfetchable(e); why != "" {
		return "not fetchable: " + why
	}
	return c.policy.FetchHint
}

// unfetchable says why an unsaved entry cannot be fetched, or "".
func (c *Converter) unfetchable(e Entry) string {
	if e.Never {
		return "marked never by its server"
	}
	if r := e.Testimony.Expiry(c.policy.Now()); r.Expired() {
		return expiryClause(r)
	}
	if c.policy.Refusal != nil {
		return label.Display(c.policy.Refusal(e), 2*label.NameMax)
	}
	return ""
}

// Notice texts (S6).
func (c *Converter) noticeContradiction(b Block) string {
	kind := "image"
	if b.Type == "audio" {
		kind = "audio"
	}
	return "[inline " + kind + " withheld: it carried data together with reference fields, which the protocol forbids]"
}

func (c *Converter) noticeInvalid(b Block) string {
	if b.Invalid == InvalidURITooLong {
		return "[reference not shown: its link is longer than this host accepts]"
	}
	return "[content block not shown: it is malformed (" + string(b.Invalid) + ")]"
}

func (c *Converter) noticeEmbeddedNever(b Block) string {
	return c.boundLine("[embedded resource" + c.quotedName(b.Testimony.Name) + " withheld: " + neverWords + "]")
}

func (c *Converter) noticeServerlessNever(b Block) string {
	return c.boundLine("[reference" + c.quotedName(b.Testimony.Name) +
		" withheld: this content marked it never; it has no id and cannot be fetched]")
}

const noticeUnknownRecord = "[reference no longer held by this host: it cannot be fetched; ask for the content again]"

func (c *Converter) noticeUnknownType(b Block) string {
	return c.boundLine(`[content of type "` + label.Display(b.Type, 40) + `" not shown: this host does not handle that type]`)
}

func (c *Converter) quotedName(name string) string {
	if n := label.Display(name, c.policy.NameMax); n != "" {
		return ` "` + n + `"`
	}
	return ""
}

// embeddedHeader introduces an embedded resource's contents.
func (c *Converter) embeddedHeader(b Block) string {
	s := "[embedded resource" + c.quotedName(b.Testimony.Name)
	if mt := label.MediaType(b.MimeType); mt != "" {
		s += " " + mt
	}
	if b.Text == "" && b.Data != "" {
		return c.boundLine(s + ": " + formatSize(int64(len(b.Data))) + " of base64 data not shown as text]")
	}
	return c.boundLine(s + "]")
}

// inlinePlaceholder stands for inline media in text views.
func (c *Converter) inlinePlaceholder(b Block) string {
	kind := "image"
	if b.Type == "audio" {
		kind = "audio"
	}
	s := "[inline " + kind
	if mt := label.MediaType(b.MimeType); mt != "" {
		s += " " + mt
	}
	return c.boundLine(s + ", " + formatSize(int64(len(b.Data))) + " of base64 data]")
}

// boundLine holds a stub or notice to the stub bound, one line.
func (c *Converter) boundLine(s string) string {
	if len(s) <= c.policy.StubMax { // bytes ≥ runes: cheap common case
		return s
	}
	cut := label.Bound(s, c.policy.StubMax-1)
	if strings.HasSuffix(cut, "…") {
		return cut + "]"
	}
	return cut
}
