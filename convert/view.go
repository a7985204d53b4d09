package convert

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/label"
)

// Converter turns server content into what a model may see. It registers
// references through a [Registrar] and renders every view from the
// records' current state, so a view built after a fetch names the saved
// copy. A Converter is safe for concurrent use when its Registrar is.
type Converter struct {
	reg    Registrar
	policy Policy
}

// New returns a Converter that registers in reg under policy p. A zero
// Policy is the safe default.
func New(reg Registrar, p Policy) *Converter {
	if reg == nil {
		panic("convert: nil Registrar")
	}
	return &Converter{reg: reg, policy: p.withDefaults()}
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
}

// item is what one block became at ingestion.
type item struct {
	id       string // record id for a shown reference
	withheld bool   // a never withholds the block (N4, N6)
}

// Ingest classifies raw blocks, reads the whole content's claims first
// (N2), registers every reference and applies a server's never marks
// (N1). It fetches nothing (F1). Serverless content (src.Server == "")
// marks nothing; its nevers withhold within itself (N4).
func (c *Converter) Ingest(raw []json.RawMessage, src Source) *Content {
	blocks := make([]Block, len(raw))
	for i, r := range raw {
		blocks[i] = Classify(r)
	}
	return c.IngestBlocks(blocks, src)
}

// IngestBlocks is Ingest for blocks already classified.
func (c *Converter) IngestBlocks(blocks []Block, src Source) *Content {
	ct := &Content{c: c, src: src, blocks: blocks, items: make([]item, len(blocks))}
	var keys []string
	ct.claims, keys = readClaims(blocks)
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
			e := c.reg.Register(Registration{Testimony: b.Testimony, Server: src.Server, Never: never})
			ct.items[i].id = e.ID
		case b.Kind == KindEmbedded, b.Kind == KindInline && b.Contradiction:
			// A block's own never withholds it even when it names no uri
			// a claim could key on (N6 fails closed).
			never = never || b.Testimony.Never()
			if !never && b.Testimony.Has(FieldURI) {
				if e, ok := c.reg.EntryForURI(uri); ok && e.Never {
					never = true
				}
			}
			ct.items[i].withheld = never
			if never && src.Server != "" && b.Testimony.Has(FieldURI) {
				c.reg.MarkNever(uri, src.Server)
			}
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
		return b.Text
	case KindReference:
		if it.withheld {
			return c.noticeServerlessNever(b)
		}
		e, ok := c.reg.Entry(it.id)
		if !ok {
			return noticeUnknownRecord
		}
		return c.stub(e, ct.src)
	case KindInline:
		if b.Contradiction {
			return c.noticeContradiction(b)
		}
		return c.inlinePlaceholder(b)
	case KindEmbedded:
		if it.withheld {
			return c.noticeEmbeddedNever(b)
		}
		if b.Text != "" {
			return c.embeddedHeader(b) + "\n" + b.Text
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
// withheld inline data (S2, S4).
func (ct *Content) History() string { return ct.text() }

// Wake returns the wake text a push produces from the content: the event's
// text and each attachment's stub, never the payload (RFC-005 §4, S4).
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

// inlined asks the policy's Inline hook about block i, where S5 allows it.
func (ct *Content) inlined(i int) (ModelBlock, bool) {
	hook := ct.c.policy.Inline
	b, it := ct.blocks[i], ct.items[i]
	if hook == nil || b.Kind != KindReference || it.withheld {
		return ModelBlock{}, false
	}
	e, ok := ct.c.reg.Entry(it.id)
	if !ok || !e.Saved || e.Never || e.Testimony.Never() {
		return ModelBlock{}, false
	}
	return hook(e)
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
