package convert

import (
	"strconv"
	"strings"

	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/label"
)

// The model-visible texts below are a contract: golden files under
// testdata/ pin every shape (see view_test.go). Every stub and notice is one
// line in square brackets, so models learn one shape.

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

// provName is a name of a content's source, already cleaned by
// label.Clean, as its provenance shows it: with any uri it writes out
// withheld, and bounded.
func provName(clean string) string {
	return label.Bound(withoutURIs(clean, ""), DefaultProvenanceMax)
}

// lanesName reports whether the provenance of lane shows the tool's name,
// and whether it shows the event's.
func lanesName(lane Lane) (tool, event bool) {
	return lane == LaneToolResult, lane == LanePush || lane == LaneChannel
}

// provenanceLine is the stubs' one line of provenance for content from
// src, given its names as provName shows them (a name its lane does not
// show is ignored).
func provenanceLine(src Source, server, tool, event string) string {
	var s string
	switch src.Lane {
	case LaneToolResult:
		switch {
		case tool != "":
			s = "from tool " + tool
			if server != "" {
				s += " of " + server
			}
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
	if server != "" && src.Lane != LaneToolResult {
		s += " from " + server
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

// neverWords ends a stub or notice, in a server's content, for what a
// server's never withholds.
const neverWords = "its server marked it never, so neither the model nor its tools may receive it"

// markedWords is neverWords where the mark is not known to be the
// content's own server's: content no server sent, a mark another server
// made, or one the mark store reported.
const markedWords = "a server marked it never, so neither the model nor its tools may receive it"

// uncheckedWords ends a stub for a record withheld because the mark store
// could not be read when it was made: no server is known to have marked
// it.
const uncheckedWords = "this host could not read its never marks when the reference arrived, so neither the model nor its tools may receive it"

// askedWords ends a notice for what serverless content withholds on its
// own word: no server marked it, the content itself asked.
const askedWords = "this content asks that neither the model nor its tools receive it"

// stub renders one reference's stub in content ct. Its parts are worked out first and the line
// is written into one buffer of their total size: a stub is rendered for
// every reference each time a view is built, and growing the buffer step
// by step made most of a view's garbage (BenchmarkHostFlow, B/op).
func (c *Converter) stub(e Entry, ct *Content) string {
	src, prov := ct.src, ct.provenance()
	p := c.policy
	t := e.Testimony
	name := c.nameLabel(t.Name, t.URI)
	mt := typeLabel(t.MimeType, p.TypeMax, t.URI)
	var size string
	if t.Has(FieldSizeBytes) {
		size = formatSize(t.SizeBytes)
	}
	uri, showURI := c.shownURI(e, ct)
	words := c.next(e, src).words(c.policy.FetchHint)

	var b strings.Builder
	b.Grow(len("[") + len(e.ID) + len(` ""`) + len(name) + len(" ") + len(mt) + len(", claimed ") + len(size) +
		len(", ") + len(prov) + len(", at ") + len(uri) + len("; ") + len(words) + len("]"))
	b.WriteByte('[')
	b.WriteString(e.ID)
	if name != "" {
		b.WriteString(` "`)
		b.WriteString(name)
		b.WriteByte('"')
	}
	if mt != "" {
		b.WriteByte(' ')
		b.WriteString(mt)
	}
	if size != "" {
		b.WriteString(", claimed ")
		b.WriteString(size)
	}
	b.WriteString(", ")
	b.WriteString(prov)
	if showURI {
		b.WriteString(", at ")
		b.WriteString(uri)
	}
	b.WriteString("; ")
	b.WriteString(words)
	b.WriteByte(']')
	return c.boundLine(b.String())
}

// shownURI is the one decision whether a reference's uri may be shown, in
// a stub or a script's view of content ct: never under a never mark or a
// never disposition, otherwise only where the policy's ShowURI allows it,
// and never when the uri, written out as text, names a uri the views
// withhold (a never uri with a parameter added, say), as a text naming it
// would be withheld. A uri shown is cleaned and bounded as a label, so it
// is judged both as sent and cleaned: cleaning takes out the invisible
// characters that could split a never uri in the text as sent. It is also
// searched for the spellings a text is searched for: the never uris that
// the reading of a text does not take whole (a never urn in its query, or
// one holding a space, say); past the bound of that search, one that
// carries another uri is not shown.
func (c *Converter) shownURI(e Entry, ct *Content) (string, bool) {
	p := c.policy
	if e.Never || e.Testimony.Disposition == DispositionNever || p.ShowURI == nil || !p.ShowURI(e) {
		return "", false
	}
	uri := e.Testimony.URI
	shown := label.Clean(uri)
	if ct.namesWithheld(uri) || (shown != uri && ct.namesWithheld(shown)) ||
		ct.withheldAmong(uriform.LowerASCII(shown), ct.lits) >= 0 || ct.sepDrop && (nestsURI(uri) || nestsURI(shown)) {
		return "", false
	}
	return label.Bound(shown, MaxURILen), true
}

// nestsURI reports whether uri carries another uri: a percent-encoded
// separator anywhere, or a plain or escaped one that is not its own (a
// second one, or one after more than its scheme, as in a mailto: uri's
// body). When spellings of a uri holding "://" did not fit in the
// search, such a uri is not shown, as a text is withheld from such a
// place.
func nestsURI(uri string) bool {
	if _, m, _ := nextEncodedSep(uri, 0); m > 0 {
		return true
	}
	k, n := nextSep(uri, 0)
	if k < 0 {
		return false
	}
	if schemeStart(uri, k, 0) != 0 {
		return true
	}
	j, _ := nextSep(uri, k+n)
	return j >= 0
}

// nextStep is the one decision of what a reference offers next: its
// saved copy, the reason it is withheld or cannot be fetched, or else a
// fetch.
type nextStep struct {
	copy     *Copy
	withheld bool   // a server marked it never
	why      string // why it is withheld or cannot be fetched
}

// next decides what entry e offers after its facts, in content from src.
func (c *Converter) next(e Entry, src Source) nextStep {
	switch {
	case e.Never && e.NeverUnconfirmed:
		return nextStep{withheld: true, why: uncheckedWords}
	case e.Never && (src.Server == "" || e.NeverBy != src.Server):
		return nextStep{withheld: true, why: markedWords}
	case e.Never:
		return nextStep{withheld: true, why: neverWords}
	case e.Copy != nil:
		return nextStep{copy: e.Copy}
	}
	return nextStep{why: c.unfetchable(e)}
}

// words is the step as a stub ends with it; hint is what a live reference
// offers.
func (n nextStep) words(hint string) string {
	switch {
	case n.withheld:
		return "withheld: " + n.why
	case n.copy != nil:
		return n.copy.Summary()
	case n.why != "":
		return "not fetchable: " + n.why
	}
	return hint
}

// unfetchable says why an unsaved, unmarked entry cannot be fetched, or
// "".
func (c *Converter) unfetchable(e Entry) string {
	if r := e.Testimony.Expiry(c.policy.Now()); r.Expired() {
		return r.Clause()
	}
	if c.policy.Refusal != nil {
		return label.Display(c.policy.Refusal(e), 2*label.NameMax)
	}
	return ""
}

// Notice texts.
func (c *Converter) noticeContradiction(b Block) string {
	kind := "image"
	if b.Type == "audio" {
		kind = "audio"
	}
	return c.boundLine("[inline " + kind + " withheld: it carried data together with reference fields, which the protocol forbids]")
}

func (c *Converter) noticeInvalid(b Block) string {
	if b.Invalid == InvalidURITooLong {
		return c.boundLine("[reference not shown: its link is longer than this host accepts]")
	}
	return c.boundLine("[content block not shown: it is malformed (" + string(b.Invalid) + ")]")
}

// noticeEmbeddedNever stands for a withheld embedded resource; why says
// whose word withholds it.
func (c *Converter) noticeEmbeddedNever(b Block, why string) string {
	return c.boundLine("[embedded resource" + c.quotedName(b.Testimony.Name, b.Testimony.URI) + " withheld: " + why + "]")
}

// noticeServerlessNever stands for a reference serverless content calls
// never while no server marked its uri: the content asked, and no record
// backs it.
func (c *Converter) noticeServerlessNever(b Block) string {
	return c.boundLine("[reference" + c.quotedName(b.Testimony.Name, b.Testimony.URI) +
		" withheld: " + askedWords + "; it has no id and cannot be fetched]")
}

const noticeUnknownRecord = "[reference no longer held by this host: it cannot be fetched; ask for the content again]"

func (c *Converter) noticeUnknownType(b Block) string {
	return c.boundLine(`[content of type "` + label.Bound(withoutURIs(label.Clean(b.Type), b.Testimony.URI), 40) + `" not shown: this host does not handle that type]`)
}

func (c *Converter) quotedName(name, uri string) string {
	if n := c.nameLabel(name, uri); n != "" {
		return ` "` + n + `"`
	}
	return ""
}

// nameLabel is the label for a name a server supplied with a block whose
// uri is uri ("" for none): cleaned, every uri in it withheld, and
// bounded to the policy's NameMax.
func (c *Converter) nameLabel(name, uri string) string {
	return label.Bound(withoutURIs(label.Clean(name), uri), c.policy.NameMax)
}

// typeLabel is the label for a media type a server claimed, as
// label.MediaTypeMax makes it, with every uri in it withheld first.
func typeLabel(mt string, max int, uri string) string {
	return label.MediaTypeMax(withoutURIs(label.Clean(mt), uri), max)
}

// WithoutURIs returns s cleaned as a label (see [label.Clean]) with the
// part from the first uri it writes out (a scheme and "://") to its end
// shown as "[uri withheld]": what a stub makes of a name a server or a
// host supplies. A host that quotes such a name to a model elsewhere can use it
// to show the same; the fetcher's failures name servers through it.
func WithoutURIs(s string) string { return withoutURIs(label.Clean(s), "") }

// uriWithheldLabel stands in a label for a uri taken out of it.
const uriWithheldLabel = "[uri withheld]"

// withoutURIs replaces each uri in the cleaned label s with
// uriWithheldLabel: own, the uri of the block the label belongs to ("" for
// none), and the parts of it that may carry a credential (see ownParts),
// in any ASCII letter case and whatever its scheme, and the rest of
// the label from the first scheme and "://" on (its slashes escaped as
// JSON may write them included). A server could otherwise
// hand the model a uri, its own included, through a name, a media type or
// a type, where stubs never show one. The rest goes whole, not up to white
// space, since a uri may hold a space a server did not escape, and the
// part after it would show. Cleaning comes first, so no invisible
// character splits a "://". A uri spelled with look-alike characters
// (full-width, or a mark between its slashes) is not recognized.
func withoutURIs(s, own string) string {
	if own != "" {
		s = withoutOwn(s, own)
	}
	i, _ := nextSep(s, 0) // "://", also with its slashes escaped
	if j := firstEncodedSep(s); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return s
	}
	return s[:schemeStart(s, i, 0)] + uriWithheldLabel
}

// firstEncodedSep returns where the label s first writes "://"
// percent-encoded, in whole or in part, once or more (as the reading of
// a text finds it: see encodedSep), or -1. A model reads a uri written so
// as well as a plain one.
func firstEncodedSep(s string) int {
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], '%')
		if k < 0 {
			return -1
		}
		i += k
		if start, n, _ := encodedSep(s, i); n > 0 {
			return start
		}
	}
}

// secretMin is the shortest query of a block's own uri that
// [withoutURIs] looks for on its own, and plainPartMax the longest user
// information without a password, or fragment without a "=", that it
// leaves: shorter queries carry no credential worth the name, and a user
// name or a section's name is often a word a name holds too.
const (
	secretMin    = 6
	plainPartMax = 24
)

// withoutOwn replaces in the label s, ASCII letter case ignored, each
// part of the uri own that shows a credential it may carry (see
// ownParts) with uriWithheldLabel.
func withoutOwn(s, own string) string {
	parts, n := ownParts(own)
	var ls, lown string // s and own lower-cased, once one is needed
	for _, p := range parts[:n] {
		if p.end == p.start || p.end-p.start > len(s) {
			continue // an empty part is no part of the uri to withhold
		}
		if lown == "" {
			ls, lown = uriform.LowerASCII(s), uriform.LowerASCII(own)
		}
		if lo := lown[p.start:p.end]; strings.Contains(ls, lo) {
			s, ls = replaceLowered(s, ls, lo, uriWithheldLabel)
		}
	}
	return s
}

// span is a part of a string, by its byte offsets.
type span struct{ start, end int }

// ownParts returns the parts of the uri own that a label may repeat and
// that show a credential it may carry, the whole before its parts: own
// itself; own without its scheme, when it holds more than a host; its
// user information, when it holds a password or is longer than
// plainPartMax; its fragment, when it holds a "=" or is longer than
// plainPartMax, and with the "#" before it when at least secretMin bytes
// long (a share link's key); and its query, when at least secretMin bytes
// long. The path is not among them: a name is often the path's last
// segment, and says nothing secret then.
func ownParts(own string) (parts [5]span, n int) {
	add := func(start, end int) {
		parts[n] = span{start, end}
		n++
	}
	add(0, len(own))
	rest := 0 // where own's part after the scheme begins
	if i := strings.Index(own, "://"); i >= 0 {
		rest = i + 3
	}
	authority := own[rest:]
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if after := own[rest+len(authority):]; rest > 0 && (strings.Contains(authority, "@") || strings.Trim(after, "/") != "") {
		add(rest, len(own))
	}
	end := len(own) // of the query, before any fragment
	if i := strings.IndexByte(own[rest:], '#'); i >= 0 {
		end = rest + i
		switch frag := own[end+1:]; {
		case strings.Contains(frag, "=") || len(frag) > plainPartMax:
			add(end+1, len(own))
		case len(frag) >= secretMin:
			add(end, len(own)) // quoted with its "#", as a link's key
		}
	}
	if i := strings.LastIndexByte(authority, '@'); i > 0 && (strings.Contains(authority[:i], ":") || i > plainPartMax) {
		add(rest, rest+i)
	}
	if i := strings.IndexByte(own[rest:end], '?'); i >= 0 && end-(rest+i+1) >= secretMin {
		add(rest+i+1, end)
	}
	return parts, n
}

// replaceLowered replaces each occurrence of lo, which is lower-case, in
// s, whose lower-cased form is ls, with new; it returns the result and its
// lower-cased form.
func replaceLowered(s, ls, lo, new string) (string, string) {
	var b, lb strings.Builder
	for {
		i := strings.Index(ls, lo)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(new)
		lb.WriteString(ls[:i])
		lb.WriteString(uriform.LowerASCII(new))
		s, ls = s[i+len(lo):], ls[i+len(lo):]
	}
	b.WriteString(s)
	lb.WriteString(ls)
	return b.String(), lb.String()
}

// schemeStart returns where the scheme ending at offset k of s begins,
// looking back no further than from.
func schemeStart(s string, k, from int) int {
	for k > from && isSchemeByte(s[k-1]) {
		k--
	}
	return k
}

// isSchemeByte reports whether c may appear in a uri scheme.
func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// embeddedHeader introduces an embedded resource's contents.
func (c *Converter) embeddedHeader(b Block) string {
	s := "[embedded resource" + c.quotedName(b.Testimony.Name, b.Testimony.URI)
	if mt := typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI); mt != "" {
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
	if mt := typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI); mt != "" {
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
