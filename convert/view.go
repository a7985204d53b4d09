package convert

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/label"
)

// Converter turns server content into what a model may see. It registers
// references through a [Registrar] and renders every view from the
// records' current state, so a view built after a fetch names the saved
// copy. A Converter is safe for concurrent use when its Registrar is. The
// zero Converter is not usable; make one with [New].
type Converter struct {
	reg    Registrar
	policy Policy
}

// New returns a Converter that registers in reg under policy p. A zero
// Policy is the safe default. New fails when reg is nil and when a bound
// of p is negative.
func New(reg Registrar, p Policy) (*Converter, error) {
	if reg == nil {
		return nil, errors.New("convert: New needs a Registrar (such as a *refs.Registry)")
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return &Converter{reg: reg, policy: p.withDefaults()}, nil
}

// Policy returns the converter's policy with defaults filled in.
func (c *Converter) Policy() Policy { return c.policy }

// Content is one ingested tool result, push event, channel message or
// injection: its blocks as the host read them, the claims they make, and
// the record each reference names. Its views read the records afresh on
// every call.
type Content struct {
	c      *Converter
	src    Source
	blocks []Block
	claims Claims
	items  []item
	// spans holds, per block, the "uri" members of the JSON its text
	// holds, which the views withhold where a never governs them.
	spans [][]uriSpan
}

// item is what one block became at ingestion.
type item struct {
	id       string // record id for a shown reference
	withheld bool   // a never withholds the block
}

// Ingest classifies raw blocks, reads the whole content's claims first (a
// never anywhere in it governs every block naming that uri), registers
// every reference and applies a server's never marks. It fetches nothing.
// Serverless content (src.Server == "") marks nothing; its nevers withhold
// within itself. ctx reaches the registry's mark store.
//
// A never counts wherever the content states it: on a reference, an image
// or audio block by uri, an embedded resource, inline data beside a uri, a
// block rejected whole (see [Block.NeverURIs]), or a reference the server
// wrote as JSON into a text block or an embedded resource's text. Only
// never is read from text, within fixed bounds: at most the first 4 MiB of
// each text, objects nested at most 64 deep, at most 16384 objects per
// text, and at most 256 uris marked from the texts of one content beyond
// those its references name. Where a text's JSON names, as a "uri"
// member, a uri the content calls never or a server marked, the views show
// that text with the uri replaced by "[uri withheld]".
func (c *Converter) Ingest(ctx context.Context, raw []json.RawMessage, src Source) *Content {
	blocks := make([]Block, len(raw))
	for i, r := range raw {
		blocks[i] = Classify(r)
	}
	return c.IngestBlocks(ctx, blocks, src)
}

// IngestBlocks is Ingest for blocks already classified.
func (c *Converter) IngestBlocks(ctx context.Context, blocks []Block, src Source) *Content {
	ct := &Content{c: c, src: src, blocks: blocks, items: make([]item, len(blocks))}
	r := readClaims(blocks, c.policy.Now())
	ct.claims, ct.spans = r.claims, r.spans
	keys := r.keys
	for i, b := range blocks {
		uri := b.Testimony.URI
		never := ct.claims.neverKey(keys[i])
		switch {
		case b.Kind == KindReference:
			if never && src.Server == "" {
				if e, ok := c.reg.EntryForURI(uri); ok && e.Never {
					ct.items[i].id = e.ID
				} else {
					ct.items[i].withheld = true
				}
				continue
			}
			e := c.reg.Register(ctx, Registration{Testimony: b.Testimony, Server: src.Server, Never: never})
			ct.items[i].id = e.ID
		case b.Kind == KindEmbedded, b.Kind == KindInline && b.Contradiction:
			// A block's own never withholds it even when it names no uri
			// a claim could key on (this fails closed).
			never = never || b.Testimony.Never()
			if !never && b.Testimony.Has(FieldURI) {
				if e, ok := c.reg.EntryForURI(uri); ok && e.Never {
					never = true
				}
			}
			ct.items[i].withheld = never
			if never && src.Server != "" && b.Testimony.Has(FieldURI) {
				c.reg.MarkNever(ctx, uri, src.Server)
			}
		}
	}
	// A never that no shown block carries (a block rejected whole, a
	// text's JSON) still marks its uri on a server's word.
	if src.Server != "" {
		for _, u := range r.marks {
			c.reg.MarkNever(ctx, u, src.Server)
		}
	}
	return ct
}

// Blocks returns the host's reading of each block, in order.
func (ct *Content) Blocks() []Block { return ct.blocks }

// Claims returns the claims the content makes.
func (ct *Content) Claims() Claims { return ct.claims }

// Source returns where the content came from.
func (ct *Content) Source() Source { return ct.src }

// IDs returns the reference ids the content's blocks were given, one per
// shown reference, in block order.
func (ct *Content) IDs() []string {
	var ids []string
	for _, it := range ct.items {
		if it.id != "" {
			ids = append(ids, it.id)
		}
	}
	return ids
}

// line renders block i as one text piece, for the text views.
func (ct *Content) line(i int) string {
	b, it, c := ct.blocks[i], ct.items[i], ct.c
	switch b.Kind {
	case KindText:
		return ct.shownText(i)
	case KindReference:
		if it.withheld {
			return c.noticeServerlessNever(b)
		}
		e, ok := c.reg.Entry(it.id)
		if !ok {
			return noticeUnknownRecord
		}
		return c.stub(asShown(e, b), ct.src)
	case KindInline:
		if b.Contradiction {
			return c.noticeContradiction(b)
		}
		return c.inlinePlaceholder(b)
	case KindEmbedded:
		if it.withheld {
			return c.noticeEmbeddedNever(b, ct.embeddedWords(b))
		}
		if b.Text != "" {
			return c.embeddedHeader(b) + "\n" + ct.shownText(i)
		}
		return c.embeddedHeader(b)
	case KindInvalid:
		return c.noticeInvalid(b)
	}
	return c.noticeUnknownType(b)
}

// text joins the text pieces of every block, one per line, bounded.
func (ct *Content) text() string {
	parts := make([]string, len(ct.blocks))
	for i := range ct.blocks {
		parts[i] = ct.line(i)
	}
	// No view ends with a newline: a trailing one belongs to no block.
	return boundUTF16(strings.TrimRight(strings.Join(parts, "\n"), "\n"), ct.c.policy.ViewMax)
}

// History returns the content as a tool result's history text: each
// block's text, stub or notice on its own line, bounded by the view bound.
// It never contains a uri the policy did not allow, a never payload or
// withheld inline data.
func (ct *Content) History() string { return ct.text() }

// Wake returns the wake text a push produces from the content: the event's
// text and each attachment's stub, never the payload (RFC-005 §4).
// Conversion happens before assembly, so no field length changes its size
// past the view bound.
func (ct *Content) Wake() string { return ct.text() }

// ModelBlock is one model-facing content block of a push, channel or
// injection view. Text blocks carry Text; inline media carry Data and
// MimeType.
type ModelBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Push returns the model-facing blocks of the content as a push event,
// channel message or injection delivers them: text as text, each reference
// as its stub, inline media as media while they fit the view bound, and a
// notice in place of anything withheld. The JSON text of the result never
// exceeds the view bound.
func (ct *Content) Push() []ModelBlock {
	max := ct.c.policy.ViewMax
	const reserve = 120 // room for the omission notice
	out := []ModelBlock{}
	used := 2 // the array's brackets
	for i, b := range ct.blocks {
		var mb ModelBlock
		if blk, ok := ct.inlined(i); ok {
			mb = blk
		} else if b.Kind == KindInline && !b.Contradiction {
			mb = ModelBlock{Type: b.Type, Data: b.Data, MimeType: label.MediaType(b.MimeType)}
		} else if b.Kind == KindEmbedded && !ct.items[i].withheld && b.Text == "" && b.Data != "" && mediaType(b.MimeType) != "" {
			mb = ModelBlock{Type: mediaType(b.MimeType), Data: b.Data, MimeType: label.MediaType(b.MimeType)}
		} else {
			mb = ModelBlock{Type: "text", Text: ct.line(i)}
		}
		cost := blockCost(mb)
		if len(out) > 0 {
			cost++ // comma
		}
		if used+cost <= max-reserve || (i == len(ct.blocks)-1 && used+cost <= max) {
			out = append(out, mb)
			used += cost
			continue
		}
		if mb.Type == "text" {
			room := max - reserve - used - textOverhead
			if len(out) > 0 {
				room--
			}
			if room > 8 {
				mb.Text = fitJSONString(mb.Text, room)
				out = append(out, mb)
				used += blockCost(mb) + boolInt(len(out) > 1)
			}
		}
		n := len(ct.blocks) - i
		if mb.Type == "text" && mb.Text != "" {
			n--
		}
		if n > 0 {
			note := ModelBlock{Type: "text", Text: "[" + strconv.Itoa(n) + " more block(s) not shown: this view reached its size bound]"}
			out = append(out, note)
		}
		break
	}
	return out
}

// inlined asks the policy's Inline hook about block i, where a verified
// payload may stand in for its stub.
func (ct *Content) inlined(i int) (ModelBlock, bool) {
	hook := ct.c.policy.Inline
	b, it := ct.blocks[i], ct.items[i]
	if hook == nil || b.Kind != KindReference || it.withheld {
		return ModelBlock{}, false
	}
	e, ok := ct.c.reg.Entry(it.id)
	if !ok {
		return ModelBlock{}, false
	}
	e = asShown(e, b)
	if e.Copy == nil || e.Never || e.Testimony.Never() {
		return ModelBlock{}, false
	}
	return hook(e)
}

// asShown is the entry as block b shows it: the record's shared state
// (its id, its never mark, its saved copy) beside the block's own
// testimony. Two blocks naming one uri share a record, yet each shows
// what it claimed itself.
func asShown(e Entry, b Block) Entry {
	e.Testimony = b.Testimony
	return e
}

// shownText returns the text of block i as the views show it: each "uri"
// member of the JSON it holds whose uri the content calls never, or whose
// record a server marked, replaced by withheldURI.
func (ct *Content) shownText(i int) string {
	text, spans := ct.blocks[i].Text, ct.spans[i]
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	last, cut := 0, false
	for _, sp := range spans {
		if !ct.withholds(sp) {
			continue
		}
		if !cut {
			b.Grow(len(text))
			cut = true
		}
		b.WriteString(text[last:sp.start])
		b.WriteString(withheldURI)
		last = sp.end
	}
	if !cut {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// withholds reports whether a uri a text names must not be shown: the
// content calls it never, or a server marked its record.
func (ct *Content) withholds(sp uriSpan) bool {
	if ct.claims.neverKey(sp.key) {
		return true
	}
	e, ok := ct.c.reg.EntryForURI(sp.uri)
	return ok && e.Never
}

// embeddedWords says why a withheld embedded resource is withheld: its
// server's mark for a server's content; for serverless content, a mark a
// server made on its uri, or else the content's own asking.
func (ct *Content) embeddedWords(b Block) string {
	if ct.src.Server != "" {
		return neverWords
	}
	if b.Testimony.Has(FieldURI) {
		if e, ok := ct.c.reg.EntryForURI(b.Testimony.URI); ok && e.Never {
			return markedWords
		}
	}
	return askedWords
}

// mediaType returns "image" or "audio" for an inline-capable media type.
func mediaType(mt string) string {
	switch {
	case strings.HasPrefix(strings.ToLower(mt), "image/"):
		return "image"
	case strings.HasPrefix(strings.ToLower(mt), "audio/"):
		return "audio"
	}
	return ""
}

// PushJSON returns the JSON text of blocks as the view bound counts it.
func PushJSON(blocks []ModelBlock) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blocks); err != nil {
		return "[]"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// textOverhead is the JSON cost of a text block without its text's quotes'
// contents: {"type":"text","text":""}.
const textOverhead = len(`{"type":"text","text":""}`)

// blockCost is the JSON cost of mb in UTF-16 code units, counting every
// character as Go's encoder escapes it (an upper bound on JavaScript's).
func blockCost(mb ModelBlock) int {
	n := len(`{"type":}`) + jsonStringCost(mb.Type)
	if mb.Text != "" {
		n += len(`,"text":`) + jsonStringCost(mb.Text)
	}
	if mb.Data != "" {
		n += len(`,"data":`) + jsonStringCost(mb.Data)
	}
	if mb.MimeType != "" {
		n += len(`,"mimeType":`) + jsonStringCost(mb.MimeType)
	}
	return n
}

// jsonStringCost is the length of s as a quoted JSON string, in UTF-16
// code units.
func jsonStringCost(s string) int {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeJSONCost(r, size)
		i += size
	}
	return n
}

func runeJSONCost(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return 6 // \ufffd
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
		return 6
	case r >= 0x10000:
		return 2
	}
	return 1
}

// fitJSONString cuts s so that its JSON string form, with a closing "…",
// costs at most room code units.
func fitJSONString(s string, room int) string {
	budget := room - 2 - 1 // quotes and the marker
	used := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := runeJSONCost(r, size)
		if used+c > budget {
			return s[:i] + "…"
		}
		used += c
		i += size
	}
	return s
}

// boundUTF16 cuts s to at most max UTF-16 code units, ending a cut string
// with "…" and never splitting a rune.
func boundUTF16(s string, max int) string {
	if len(s) <= max || utf16Len(s) <= max { // a byte is at least a code unit's worth
		return s
	}
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > max-1 { // room for the marker
			return s[:i] + "…"
		}
	}
	return s
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
