package convert

import (
	"time"

	"github.com/mcplrefs/refcore/internal/uriform"
)

// Claims are the per-uri claims one tool result or message makes, read
// before any of its blocks is shown (behaviors N1, N2, G2). A never
// anywhere in the content governs every block that names the same uri,
// whatever their order.
//
// The zero Claims makes no claim. Claims are keyed by the uri's canonical
// form, so two spellings of one location share their claims (N8).
type Claims struct {
	never   map[string]bool
	expired map[string]bool
	uris    map[string]bool
}

// ReadClaims gathers the claims of blocks. It is pure: it reads only the
// blocks given.
func ReadClaims(blocks []Block, opts ...ClaimOption) Claims {
	c, _ := readClaims(blocks, opts...)
	return c
}

// readClaims is ReadClaims that also returns each block's canonical uri
// key ("" for a block naming none), so ingestion looks claims up without
// canonicalizing every uri a second time.
func readClaims(blocks []Block, opts ...ClaimOption) (Claims, []string) {
	var c Claims
	keys := make([]string, len(blocks))
	var o claimOptions
	for _, opt := range opts {
		opt(&o)
	}
	for i, b := range blocks {
		t := b.Testimony
		if !t.Has(FieldURI) {
			continue
		}
		key := uriform.Canonical(t.URI)
		keys[i] = key
		if c.uris == nil {
			c.uris = make(map[string]bool)
		}
		c.uris[key] = true
		if t.Never() {
			if c.never == nil {
				c.never = make(map[string]bool)
			}
			c.never[key] = true
		}
		if o.now != nil && b.Kind == KindReference && t.Expiry(o.now()).Expired() {
			if c.expired == nil {
				c.expired = make(map[string]bool)
			}
			c.expired[key] = true
		}
	}
	return c, keys
}

// neverKey reports whether the content calls the uri with canonical key
// key never.
func (c Claims) neverKey(key string) bool { return key != "" && c.never[key] }

// Never reports whether any block of the content calls uri never.
func (c Claims) Never(uri string) bool {
	return c.never != nil && c.never[uriform.Canonical(uri)]
}

// Expired reports whether any reference of the content that names uri is
// expired at the time given by [ClaimsAt]. Without ClaimsAt it is false.
func (c Claims) Expired(uri string) bool {
	return c.expired != nil && c.expired[uriform.Canonical(uri)]
}

// Names reports whether any block of the content names uri.
func (c Claims) Names(uri string) bool {
	return c.uris != nil && c.uris[uriform.Canonical(uri)]
}

// ClaimOption adjusts how [ReadClaims] reads content.
type ClaimOption func(*claimOptions)

type claimOptions struct {
	now func() time.Time
}

// ClaimsAt makes [ReadClaims] also judge each reference's expiry at the
// time now returns, for [Claims.Expired].
func ClaimsAt(now func() time.Time) ClaimOption {
	return func(o *claimOptions) { o.now = now }
}
