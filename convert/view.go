package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcplrefs/refcore/internal/nilness"
	"github.com/mcplrefs/refcore/internal/uriform"
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
// Policy is the safe default. New fails, with an error matching
// [ErrBadConfig], when reg is nil (or a nil pointer), when a bound of p
// is negative, and when p sets StubMax below MinStubMax or ViewMax below
// MinViewMax.
func New(reg Registrar, p Policy) (*Converter, error) {
	if nilness.Is(reg) {
		return nil, fmt.Errorf("%w: New needs a Registrar (such as a *refs.Registry)", ErrBadConfig)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return &Converter{reg: reg, policy: p.withDefaults()}, nil
}

// Policy returns the converter's policy with defaults filled in, and with
// StubMax lowered where ViewMax leaves a stub less room.
func (c *Converter) Policy() Policy { return c.policy }

// Content is one ingested tool result, push event, channel message or
// injection: its blocks as the host read them, the claims they make, and
// the record each reference names. Its views read the records afresh on
// every call. Only [Converter.Ingest] and [Converter.IngestBlocks] make a
// usable Content; the zero Content is not.
type Content struct {
	c      *Converter
	src    Source
	blocks []Block
	claims Claims
	items  []item
	// spans holds, per block, the "uri" members of the JSON its text
	// holds, which the views withhold where a never governs them.
	spans [][]uriSpan
	// stored holds the canonical forms of the uris in texts that the
	// mark store answered marked at ingestion (see askStore).
	stored map[string]bool
	// labelLits are the spellings of the content's uris that a label may
	// write out with no "://" before them (see shownBlock), and labelDrop
	// the fallback for those left out.
	labelLits []literal
	labelDrop labelDrop
	// lits are all the spellings the texts are searched for, which a uri
	// a ShowURI policy lets through is searched for too (see shownURI);
	// sepDrop says some of a uri holding "://" did not fit.
	lits    []literal
	sepDrop bool
	// prov is what the stubs' provenance is made from, once, on first use.
	provOnce sync.Once
	prov     provenance
}

// provenance is a content's provenance as prepared once for its stubs.
type provenance struct {
	// line is the provenance with no name cut.
	line string
	// names are the server's, the tool's and the event's names: as the
	// line shows them uncut (shown), and cleaned, as far as a cut can
	// fall (window). A name the lane does not show is left empty.
	shown, window [3]string
	// cuts lists, for each name, where a stub could show it writing out a
	// spelling of the content's uris, in order: the places it may be cut,
	// now or after a later mark.
	cuts [3][]provCut
	// live is set when some name has such a place: the line is then
	// made again at each use, from the names cut at the first place
	// whose uri the views withhold then.
	live bool
}

// provCut is a place a provenance name may be cut: at byte at, for the
// spelling labelLits[lit], or for the fallback (lit -1), which always
// cuts.
type provCut struct{ at, lit int }

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
// that text with the uri replaced by "[uri withheld]". Marks the registrar
// holds in memory are checked for every uri a text names; a durable mark
// store behind it (see [MarkReader]) is asked about at most the first 256
// distinct uris of a content's texts, so that one content cannot make
// thousands of store round trips.
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
	r := readClaims(blocks, c.policy.Now(), c.keyMarkedHere)
	ct.claims, ct.spans, ct.labelLits, ct.labelDrop, ct.lits, ct.sepDrop = r.claims, r.spans, r.labelLits, r.labelDrop, r.lits, r.sepDrop
	ct.stored = c.askStore(ctx, &ct.claims, r.spans)
	keys := r.keys
	if ns, ok := c.reg.(NeverStorer); ok && src.Server != "" {
		if uris := neverMarks(blocks, &ct.claims, keys, r.marks); len(uris) > 1 {
			ns.StoreNeverMarks(ctx, uris, src.Server)
		}
	}
	for i, b := range blocks {
		uri := b.Testimony.URI
		never := ct.claims.neverKey(keys[i])
		switch {
		case b.Kind == KindReference:
			// A blank uri has no key for a claim, but the block's own
			// never still binds its record.
			never = never || b.Testimony.Never()
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
				never = c.marked(ctx, uri)
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

// neverMarks returns the uris that IngestBlocks will mark never on a
// server's word and whose canonical key the content's claims call never:
// references, embedded resources and contradicting inline blocks with a
// uri, and marks, the nevers no shown block carries. Every block of the
// content with such a key is read as never whatever the store holds, so
// storing these marks before the loop changes nothing the loop sees. A
// never the claims do not cover (a blank uri has no key) is left to the
// loop, which stores it alone.
func neverMarks(blocks []Block, claims *Claims, keys []string, marks []string) []string {
	var uris []string
	for i, b := range blocks {
		if !claims.neverKey(keys[i]) {
			continue
		}
		switch {
		case b.Kind == KindReference:
			uris = append(uris, b.Testimony.URI)
		case b.Kind == KindEmbedded, b.Kind == KindInline && b.Contradiction:
			if b.Testimony.Has(FieldURI) {
				uris = append(uris, b.Testimony.URI)
			}
		}
	}
	for _, u := range marks {
		if claims.neverKey(uriform.Canonical(u)) {
			uris = append(uris, u)
		}
	}
	return uris
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

// provenance is the stubs' line of provenance for this content. Its
// inputs are server-supplied and unbounded, so each name is cleaned once
// for the content, on first use, and not once for every stub. A name is
// cut where it writes out a uri the views withhold that has no "://"
// (which provName itself finds); since a server may mark such a uri after
// the content came, that is judged at each use, though only for a content
// whose names write out one of its uris at all.
func (ct *Content) provenance() string {
	ct.provOnce.Do(ct.prepareProvenance)
	p := &ct.prov
	if !p.live {
		return p.line
	}
	names, cut := p.shown, false
	for k, cuts := range p.cuts {
		for _, c := range cuts {
			if c.lit >= 0 {
				lit := ct.labelLits[c.lit]
				if !ct.withholds(uriSpan{uri: lit.uri, key: lit.key, altKeys: lit.altKeys, always: lit.always}) {
					continue
				}
			}
			names[k], cut = provName(p.window[k][:c.at]+uriWithheldLabel), true
			break
		}
	}
	if !cut {
		return p.line
	}
	return provenanceLine(ct.src, names[0], names[1], names[2])
}

// prepareProvenance fills ct.prov.
func (ct *Content) prepareProvenance() {
	src, p := ct.src, &ct.prov
	tool, event := lanesName(src.Lane)
	names := [3]string{src.Server}
	if tool {
		names[1] = src.Tool
	}
	if event {
		names[2] = src.Event
	}
	searched := len(ct.labelLits) > 0 || ct.labelDrop.on
	longest := 0
	for _, lit := range ct.labelLits {
		longest = max(longest, len(lit.lower))
	}
	for _, sc := range ct.labelDrop.schemes {
		longest = max(longest, len(sc))
	}
	for k, name := range names {
		if name == "" {
			continue
		}
		clean := label.Clean(name)
		p.shown[k] = provName(clean)
		if !searched {
			continue
		}
		showable, runes := len(clean), 0
		for i := range clean {
			if runes == DefaultProvenanceMax {
				showable = i
				break
			}
			runes++
		}
		w := clean[:min(len(clean), showable+longest)]
		if cuts := ct.cutPlaces(uriform.LowerASCII(w), showable); len(cuts) > 0 {
			p.window[k], p.cuts[k], p.live = strings.Clone(w[:cuts[len(cuts)-1].at]), cuts, true
		}
	}
	p.line = provenanceLine(src, p.shown[0], p.shown[1], p.shown[2])
}

// cutPlaces returns, in order, the places before byte end where the
// lower-cased label lower writes out a spelling of labelLits (the first
// of each), up to the first place the fallback cuts, which ends the list.
func (ct *Content) cutPlaces(lower string, end int) []provCut {
	var cuts []provCut
	for i, lit := range ct.labelLits {
		if at := strings.Index(lower, lit.lower); at >= 0 && at < end {
			cuts = append(cuts, provCut{at, i})
		}
	}
	if at := ct.labelDrop.at(lower); at >= 0 && at < end {
		cuts = append(cuts, provCut{at, -1})
	}
	slices.SortStableFunc(cuts, func(a, b provCut) int { return a.at - b.at })
	for i, c := range cuts {
		if c.lit < 0 {
			return cuts[:i+1]
		}
	}
	return cuts
}

// line renders block i as one text piece, for the text views, and says
// how a view may cut it: noCut, or how many of its leading bytes a cut
// keeps whole. Of a server's text it reads at most limit bytes (see
// byteLimit); a piece it shortens that way never fits whole.
func (ct *Content) line(i, limit int) (string, int) { return ct.lineOf(ct.shownBlock(i), i, limit) }

// lineOf is line for b, block i as shownBlock gives it, which the caller
// has made already.
func (ct *Content) lineOf(b Block, i, limit int) (string, int) {
	it, c := ct.items[i], ct.c
	switch b.Kind {
	case KindText:
		return ct.shownText(i, limit), 0
	case KindReference:
		if it.withheld {
			return c.noticeServerlessNever(b), noCut
		}
		e, ok := c.reg.Entry(it.id)
		if !ok {
			return c.boundLine(noticeUnknownRecord), noCut
		}
		return c.stub(asShown(e, b), ct), noCut
	case KindInline:
		if b.Contradiction {
			return c.noticeContradiction(b), noCut
		}
		return c.inlinePlaceholder(b), noCut
	case KindEmbedded:
		if ct.embeddedWithheld(i) {
			return c.noticeEmbeddedNever(b, ct.embeddedWords(b)), noCut
		}
		if b.Text != "" {
			head := c.embeddedHeader(b) + "\n"
			return head + ct.shownText(i, limit), len(head)
		}
		return c.embeddedHeader(b), noCut
	case KindInvalid:
		return c.noticeInvalid(b), noCut
	}
	return c.noticeUnknownType(b), noCut
}

// text renders the text views: a prefix of the blocks' pieces, one per
// line, within the view bound, then the notice of blocks left out.
func (ct *Content) text() string {
	max, n := ct.c.policy.ViewMax, len(ct.blocks)
	// The pieces are kept and joined once their total is known, so the
	// view is written into one allocation (BenchmarkHostFlow, B/op).
	pieces := make([]string, 0, min(n, listPresize))
	used, size := 0, 0
	for i := 0; i < n; i++ {
		sep := boolInt(i > 0)
		reserve := 0 // room kept for the notice, should this block be the last shown
		if i < n-1 {
			reserve = len("\n") + leftOutLen(n-i-1)
		}
		room := max - used - sep - reserve
		s, keep := ct.line(i, byteLimit(room))
		fit, ok := fitUTF16(s, keep, room)
		if !ok {
			break
		}
		pieces = append(pieces, fit)
		size += sep + len(fit)
		used += sep + utf16Len(fit)
		if fit != s {
			break // cut
		}
	}
	var b strings.Builder
	b.Grow(size)
	for i, p := range pieces {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	// No view ends with a newline: a trailing one belongs to no block.
	out := strings.TrimRight(b.String(), "\n")
	if left := n - len(pieces); left > 0 {
		if out != "" {
			out += "\n"
		}
		out += leftOutNotice(left)
	}
	return out
}

// History returns the content as a tool result's history text: each
// block's text, stub or notice on its own line. It stays within the view
// bound, counted in UTF-16 code units: it shows the blocks in order while
// they fit, cuts a text that does not with a closing "…", never cuts a
// stub or notice, and then ends with a line that says how many blocks it
// left out. It never contains a uri the policy did not allow, a never
// payload or withheld inline data.
func (ct *Content) History() string { return ct.text() }

// Wake returns the wake text a push produces from the content: the event's
// text and each attachment's stub, never the payload (RFC-005 §4).
// Conversion happens before assembly, so no field length changes its size
// past the view bound. It is bounded as History is.
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
// as its stub, inline media as media, and a notice in place of anything
// withheld. The JSON text of the result, as [PushJSON] writes it, never
// exceeds the view bound. It shows the blocks in order while they fit,
// cuts a text that does not with a closing "…", never cuts a stub, a
// notice or media, and then ends with a text block that says how many
// blocks it left out.
func (ct *Content) Push() []ModelBlock {
	out := fitList(ct.c.policy.ViewMax, len(ct.blocks), textOverhead, func(i, room int) (ModelBlock, int, bool) {
		mb, keep := ct.pushBlock(i, byteLimit(room))
		if cost := blockCost(mb, room); cost <= room {
			return mb, cost, false
		}
		if mb.Type == "text" && keep != noCut {
			if fit, ok := fitJSON(mb.Text, keep, room-textOverhead+2, false); ok {
				mb.Text = fit
				return mb, 0, true
			}
		}
		return mb, -1, true
	})
	if left := len(ct.blocks) - len(out); left > 0 {
		out = append(out, ModelBlock{Type: "text", Text: leftOutNotice(left)})
	}
	return out
}

// pushBlock is block i as the push view shows it, and how the view may
// cut its text (see line).
func (ct *Content) pushBlock(i, limit int) (ModelBlock, int) {
	b := ct.shownBlock(i)
	switch {
	case b.Kind == KindReference:
		if blk, ok := ct.inlined(i); ok {
			return blk, noCut
		}
	case b.Kind == KindInline && !b.Contradiction:
		return ModelBlock{Type: b.Type, Data: b.Data, MimeType: typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI)}, noCut
	case b.Kind == KindEmbedded && b.Text == "" && b.Data != "" && mediaType(b.MimeType) != "" && !ct.embeddedWithheld(i):
		return ModelBlock{Type: mediaType(b.MimeType), Data: b.Data, MimeType: typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI)}, noCut
	}
	s, keep := ct.lineOf(b, i, limit)
	return ModelBlock{Type: "text", Text: s}, keep
}

// shownBlock is block i with the labels its server supplied (its name,
// media types and type) as the views may show them: each cut, from the
// first place it writes out a uri of the content that the views withhold
// and that has no "://" before that place, to its end, shown as
// withoutURIs shows a uri it takes out (which cuts the rest).
func (ct *Content) shownBlock(i int) Block {
	b := ct.blocks[i]
	if len(ct.labelLits) > 0 || ct.labelDrop.on {
		b.Testimony.Name = ct.cutLabel(b.Testimony.Name)
		b.Testimony.MimeType = ct.cutLabel(b.Testimony.MimeType)
		b.MimeType = ct.cutLabel(b.MimeType)
		b.Type = ct.cutLabel(b.Type)
	}
	return b
}

// cutLabel is a label of shownBlock: s cleaned and cut, or s as it is
// when it writes out no such uri.
func (ct *Content) cutLabel(s string) string {
	if s == "" {
		return s
	}
	clean := label.Clean(s)
	cut := ct.withheldAt(uriform.LowerASCII(clean))
	if cut < 0 {
		return s
	}
	return clean[:cut] + uriWithheldLabel
}

// withheldAt returns where, in the lower-cased label lower, the first
// spelling of labelLits starts whose uri the views withhold, or the first
// place the fallback for the never uris left out of the search cuts; -1
// for neither.
func (ct *Content) withheldAt(lower string) int {
	return ct.withheldAmong(lower, ct.labelLits)
}

// withheldAmong is withheldAt searching for lits.
func (ct *Content) withheldAmong(lower string, lits []literal) int {
	cut := ct.labelDrop.at(lower)
	for _, lit := range lits {
		if i := strings.Index(lower, lit.lower); i >= 0 && (cut < 0 || i < cut) &&
			ct.withholds(uriSpan{uri: lit.uri, key: lit.key, altKeys: lit.altKeys, always: lit.always}) {
			cut = i
		}
	}
	return cut
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
// record a server marked, replaced by withheldURI. It stops once it has
// written limit bytes, so a view reads no more of a long text than it
// could show; a cut falls only between replacements, never inside one.
func (ct *Content) shownText(i, limit int) string {
	text, spans := ct.blocks[i].Text, ct.spans[i]
	var b strings.Builder
	last := 0 // bytes of text consumed; b holds what they became
	for _, sp := range spans {
		// Up to this span the shown text is b, then text[last:sp.start].
		if b.Len()+sp.start-last >= limit {
			break
		}
		if !ct.withholds(sp) {
			continue
		}
		b.WriteString(text[last:sp.start])
		switch {
		case sp.rest:
			b.WriteString(withheldRest)
		case sp.bare:
			b.WriteString(withheldBareURI)
		default:
			b.WriteString(withheldURI)
		}
		last = sp.end
	}
	rest := text[last:]
	if room := max(limit-b.Len(), 0); len(rest) > room {
		rest = rest[:room]
	}
	if last == 0 { // nothing withheld: no copy
		return rest
	}
	b.WriteString(rest)
	return b.String()
}

// withholds reports whether a uri a text names must not be shown: the
// content calls it never, or a server marked its record.
func (ct *Content) withholds(sp uriSpan) bool {
	if sp.rest || sp.always {
		return true
	}
	said := func(key string) bool { return ct.claims.neverKey(key) || ct.stored[key] }
	if said(sp.key) || slices.ContainsFunc(sp.altKeys, said) {
		return true
	}
	return len(sp.uri) <= maxURIBytes && ct.c.keyMarkedHere(sp.key) || slices.ContainsFunc(sp.altKeys, ct.c.keyMarkedHere)
}

// namesWithheld reports whether text, read as the views read a text,
// names a uri they would withhold: one the content calls never, or whose
// record a server marked. It reads text with a reading budget of its own.
func (ct *Content) namesWithheld(text string) bool {
	left := newReadingBudget()
	return slices.ContainsFunc(withBareURIs(text, nil, &left), ct.withholds)
}

// keyMarkedHere is markedHere for a uri of a text, whose canonical form is
// key. The registrar is asked about the canonical form, a spelling of the
// same uri: *refs.Registry finds it in its index when it holds a record
// for it, and otherwise makes the form again, which a key in the usual
// form costs nothing (a reading that had to be parsed was counted against
// the reading budget: TestBareReadingsBounded). A uri without a key is not
// read (one too long for a never to name, or written with escapes, whose
// decoded readings count instead).
func (c *Converter) keyMarkedHere(key string) bool {
	return key != "" && c.markedHere(key)
}

// askStore asks the registrar's durable mark store (see [MarkReader])
// about the uris the content's texts name, the first textMarkMax distinct
// ones that the content does not call never itself, and returns the
// canonical forms of those it answered marked: a mark it reported, or a
// store it could not read, which counts as a mark (the views withhold
// them). A
// view renders without a context and asks only the registrar's memory,
// which learns each mark the store reports, but not a failed read.
func (c *Converter) askStore(ctx context.Context, claims *Claims, spans [][]uriSpan) map[string]bool {
	m, ok := c.reg.(MarkReader)
	if !ok {
		return nil
	}
	var marked map[string]bool
	// Each canonical form is asked about once: a text that repeats a uri
	// does not use up the questions.
	var asked map[string]bool
	ask := func(key string) {
		if key != "" && !claims.neverKey(key) && !asked[key] && len(asked) < textMarkMax {
			if asked == nil {
				asked = make(map[string]bool)
			}
			asked[key] = true
			if m.Marked(ctx, key) { // the canonical form: see keyMarkedHere
				if marked == nil {
					marked = make(map[string]bool)
				}
				marked[key] = true
			}
		}
	}
	// Each uri with its other readings, in text order; the letter-case
	// twins of the uris searched for, which would otherwise use up the
	// questions, at the end (TestMarkedURIWithoutSeparatorInText).
	for _, block := range spans {
		for _, sp := range block {
			ask(sp.key)
			if !sp.twins {
				for _, key := range sp.altKeys {
					ask(key)
				}
			}
		}
	}
	for _, block := range spans {
		for _, sp := range block {
			if sp.twins {
				for _, key := range sp.altKeys {
					ask(key)
				}
			}
		}
	}
	return marked
}

// marked reports whether a server marked uri never, asking the
// registrar's mark store when it has one (see [MarkReader]).
func (c *Converter) marked(ctx context.Context, uri string) bool {
	if m, ok := c.reg.(MarkReader); ok {
		return m.Marked(ctx, uri)
	}
	return c.recordMarked(uri)
}

// markedHere is marked for a view, which has no context: the registrar's
// memory without its durable store.
func (c *Converter) markedHere(uri string) bool {
	if m, ok := c.reg.(MarkReader); ok {
		return m.MarkedHere(uri)
	}
	return c.recordMarked(uri)
}

// recordMarked is what a registrar without a [MarkReader] can tell: whether
// the record it holds for uri is marked never.
func (c *Converter) recordMarked(uri string) bool {
	e, ok := c.reg.EntryForURI(uri)
	return ok && e.Never
}

// embeddedWithheld reports whether embedded block i is withheld as a view
// renders it: by the content's own never, or by a server's mark on its uri
// made at any time, before the content arrived or after.
func (ct *Content) embeddedWithheld(i int) bool {
	b := ct.blocks[i]
	return ct.items[i].withheld || (b.Testimony.Has(FieldURI) && ct.c.markedHere(b.Testimony.URI))
}

// embeddedWords says why a withheld embedded resource is withheld: its
// server's mark for a server's content; for serverless content, a mark a
// server made on its uri, or else the content's own asking.
func (ct *Content) embeddedWords(b Block) string {
	if ct.src.Server != "" {
		return neverWords
	}
	if b.Testimony.Has(FieldURI) && ct.c.markedHere(b.Testimony.URI) {
		return markedWords
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

// blockCost is the JSON cost of mb in UTF-16 code units as [PushJSON]
// writes it. It stops counting once the cost passes limit.
func blockCost(mb ModelBlock, limit int) int {
	n := len(`{"type":}`) + jsonStringCost(mb.Type, false, limit)
	if mb.Text != "" && n <= limit {
		n += len(`,"text":`) + jsonStringCost(mb.Text, false, limit-n)
	}
	if mb.Data != "" && n <= limit {
		n += len(`,"data":`) + jsonStringCost(mb.Data, false, limit-n)
	}
	if mb.MimeType != "" && n <= limit {
		n += len(`,"mimeType":`) + jsonStringCost(mb.MimeType, false, limit-n)
	}
	return n
}
