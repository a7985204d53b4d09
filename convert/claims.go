package convert

import (
	"strings"
	"time"

	"github.com/mcplrefs/refcore/internal/uriform"
)

// Claims are the per-uri claims one tool result or message makes, read
// once, when it is ingested, before any of its blocks is shown. A never
// anywhere in the content governs every block that names the same uri,
// whatever their order: a reference's own, an embedded resource's, one a
// block rejected whole still states, or one the JSON in a text holds.
//
// The zero Claims makes no claim. Claims are keyed by the uri's canonical
// form, so two spellings of one location share their claims.
type Claims struct {
	never   map[string]bool
	expired map[string]bool
	uris    map[string]bool
}

// reading is what ingestion learns from a content's blocks before it
// shows any of them.
type reading struct {
	claims Claims
	// keys holds each block's canonical uri key, "" for a block naming
	// none, so ingestion looks claims up without canonicalizing every uri
	// a second time.
	keys []string
	// spans holds, for each block with text, the "uri" members its JSON
	// names, which the views withhold where a never governs them.
	spans [][]uriSpan
	// marks lists the uris that blocks registering nothing of their own (a
	// block rejected whole, a text) call never and that no reference of
	// the content names, once each.
	marks []string
	// lits are the spellings searched for in texts, and labelLits those
	// of them that a label may write out without a "://" before them
	// (see Content.shownBlock).
	lits, labelLits []literal
	// labelDrop is the fallback for the never uris with no "://" that
	// did not fit in the search (see labelDrop).
	labelDrop labelDrop
	// sepDrop is set when spellings of a uri holding "://" did not fit
	// (literals.dropSep, dropEncSep).
	sepDrop bool
}

// labelDrop is, for labels, the fallback that texts have behind
// literals.dropScheme: when a never uri with a scheme of its own was left
// out of the search, a label is cut from the first place it writes one of
// schemes (each in lower case with its colon), or whole when anywhere is
// set.
type labelDrop struct {
	on       bool
	anywhere bool
	// anyEncoded stands for anywhere when only percent-encoded forms were
	// left out, each holding an encoded colon: a label is cut from its
	// first one.
	anyEncoded bool
	schemes    []string
	from       int // the least depth of encoding looked for (see schemePlace)
}

// at returns where the lower-cased label lower must be cut for the
// fallback, or -1.
func (d labelDrop) at(lower string) int {
	switch {
	case !d.on || lower == "":
		return -1
	case d.anywhere:
		return 0
	case d.anyEncoded:
		return encodedColonPlace(lower)
	}
	return schemePlace(lower, d.schemes, d.from)
}

// readClaims gathers the claims of blocks, judging each reference's expiry
// at now. Besides each block's own testimony it reads the never a block
// rejected whole still states, and the nevers the JSON in a text or an
// embedded resource's text holds (within the bounds readText documents).
// It reads only the blocks given, and asks marked (when not nil) about
// the canonical forms of the few uris whose places in its texts it looks
// for by their spellings (see literal.go), which go first when marked.
func readClaims(blocks []Block, now time.Time, marked func(key string) bool) reading {
	r := reading{keys: make([]string, len(blocks)), spans: make([][]uriSpan, len(blocks))}
	c := &r.claims
	// extra holds the uris called never outside any reference's
	// testimony, with their canonical keys.
	type never struct{ uri, key string }
	var extra []never
	textMarks := 0
	readings := newReadingBudget()   // shared by the content's texts
	counts := newTextCounts()        // what their JSON readings keep, shared too
	var seenNever map[string]bool    // the uris their JSON calls never
	var memberKeys map[string]string // the keys of their "uri" members
	// lits are the uris the content names that the bare reading of its
	// texts would split (see literal.go): every never of a rejected block
	// or a text's JSON, and every uri a block names.
	var lits literals
	for i, b := range blocks {
		for _, u := range b.NeverURIs {
			key := uriform.Canonical(u)
			c.add(key, true)
			extra = append(extra, never{u, key})
			lits.add(u, key, true)
		}
		if b.Text != "" && (b.Kind == KindText || b.Kind == KindEmbedded) {
			tr := readText(b.Text, &counts)
			for j := range tr.spans {
				// A uri the members repeat is keyed once (TestNeverNestBounded).
				u := tr.spans[j].uri
				if _, ok := memberKeys[u]; !ok {
					if memberKeys == nil {
						memberKeys = make(map[string]string)
					}
					memberKeys[u] = readings.key(u)
				}
				tr.spans[j].key = memberKeys[u]
			}
			r.spans[i] = withBareURIsUpTo(b.Text, tr.spans, tr.unread, &readings)
			for _, u := range tr.never {
				// A uri called never again costs nothing more: its key
				// and spellings are made once (TestNeverNestBounded).
				if seenNever[u] {
					continue
				}
				if seenNever == nil {
					seenNever = make(map[string]bool)
				}
				seenNever[u] = true
				key := uriform.Canonical(u)
				c.add(key, true)
				lits.add(u, key, true)
				if textMarks < textMarkMax {
					extra = append(extra, never{u, key})
					textMarks++
				}
			}
		}
		t := b.Testimony
		if !t.Has(FieldURI) {
			continue
		}
		key := uriform.Canonical(t.URI)
		r.keys[i] = key
		c.add(key, t.Never())
		if b.Kind == KindReference && t.Expiry(now).Expired() {
			if c.expired == nil {
				c.expired = make(map[string]bool)
			}
			c.expired[key] = true
		}
	}
	// A text may write out a uri the content names in a spelling the bare
	// reading splits: its spans get those places too. The uris called
	// never or marked take the search's places first, then those holding
	// "://" (which the search cannot leave out without withholding the
	// rest of a text from its first "://"), then the rest. A label may
	// write one out too (see Content.shownBlock), so a content without
	// texts gets them as well.
	rank := make([]int8, len(blocks))
	isCandidate := func(uri string) bool { _, ok := literalCandidate(uri); return ok }
	for i, b := range blocks {
		switch key := r.keys[i]; {
		case !b.Testimony.Has(FieldURI) || !isCandidate(b.Testimony.URI):
			rank[i] = -1
		case c.neverKey(key) || marked != nil && marked(key):
			rank[i] = 0
		case strings.Contains(b.Testimony.URI, "://"):
			rank[i] = 1
		default:
			rank[i] = 2
		}
	}
	for want := range int8(3) {
		for i, b := range blocks {
			if rank[i] == want {
				lits.add(b.Testimony.URI, r.keys[i], want == 0)
			}
		}
	}
	lits.spellEncoded()
	for _, lit := range lits.list {
		if ownScheme(lit.uri) {
			r.labelLits = append(r.labelLits, lit)
		}
	}
	r.lits = lits.list
	r.sepDrop = lits.dropSep || lits.dropEncSep
	switch {
	case lits.dropScheme:
		r.labelDrop = labelDrop{on: true, anywhere: lits.anywhere, schemes: lits.schemes}
	case lits.dropEncScheme:
		r.labelDrop = labelDrop{on: true, anywhere: lits.anywhere && lits.noScheme, anyEncoded: lits.anywhere && !lits.noScheme,
			schemes: lits.schemes, from: 1}
	}
	if lits.active() {
		for i, b := range blocks {
			if b.Text != "" && (b.Kind == KindText || b.Kind == KindEmbedded) {
				r.spans[i] = lits.withLiterals(b.Text, r.spans[i])
			}
		}
	}
	// A uri a reference of the content names is marked when that
	// reference registers; the rest are marked on their own, once each.
	var done map[string]bool
	for i, b := range blocks {
		if b.Kind == KindReference {
			if done == nil {
				done = make(map[string]bool)
			}
			done[r.keys[i]] = true
		}
	}
	for _, n := range extra {
		if !done[n.key] {
			if done == nil {
				done = make(map[string]bool)
			}
			done[n.key] = true
			r.marks = append(r.marks, n.uri)
		}
	}
	return r
}

// add records that the content names the uri with canonical key key, and
// calls it never when never is set.
func (c *Claims) add(key string, never bool) {
	if c.uris == nil {
		c.uris = make(map[string]bool)
	}
	c.uris[key] = true
	if never {
		if c.never == nil {
			c.never = make(map[string]bool)
		}
		c.never[key] = true
	}
}

// neverKey reports whether the content calls the uri with canonical key
// key never.
func (c Claims) neverKey(key string) bool { return key != "" && c.never[key] }

// Never reports whether any block of the content calls uri never.
func (c Claims) Never(uri string) bool {
	return c.never != nil && c.never[uriform.Canonical(uri)]
}

// Expired reports whether any reference of the content that names uri was
// expired when the content was ingested, by the converter's clock.
func (c Claims) Expired(uri string) bool {
	return c.expired != nil && c.expired[uriform.Canonical(uri)]
}

// Names reports whether any block of the content names uri.
func (c Claims) Names(uri string) bool {
	return c.uris != nil && c.uris[uriform.Canonical(uri)]
}

// withBareURIsUpTo is [withBareURIs] for a text whose rest from unread
// (when not -1) is withheld: a "uri" member there is past the bound, or
// in a part the JSON reading did not reach, and the views cannot judge
// it. The bare reading reads up to unread, and on to the end of a uri
// written across it, which it then reads whole (TestWithheldRestCutsNoURI);
// a rest it withheld itself up to there joins this one, into one notice
// (TestOneRestNoticePastBothBounds).
func withBareURIsUpTo(text string, members []uriSpan, unread int, left *readingBudget) []uriSpan {
	if unread < 0 {
		return withBareURIs(text, members, left)
	}
	cut, _, _ := bareEnd(text, unread)
	spans := mergeSpans(withBareURIs(text[:cut], members, left), []uriSpan{restSpan(text, unread)})
	if n := len(spans); n >= 2 && spans[n-2].rest && spans[n-2].end == spans[n-1].start {
		spans[n-2].end = spans[n-1].end
		spans = spans[:n-1]
	}
	return spans
}
