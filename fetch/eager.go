package fetch

import (
	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// EagerPlan picks the references of one ingested content that a host may
// fetch at once, before the model asks, and returns their ids in order.
// It reads the claims the content made when it was ingested.
//
// Each distinct uri is judged once and takes at most one slot. A reference
// is picked only when it claims a size no larger than Config.EagerCeiling
// (a reference with no claimed size is never picked), has no saved copy
// yet, is not marked never (by its record or by the content's claims), is
// not called expired by any block of the content, and would pass every
// check [Fetcher.Refusal] makes. At most Config.EagerCap references are
// picked. A reference passed over is passed over silently.
//
// EagerPlan dials nothing; the host fetches the plan with [Fetcher.Fetch].
func (f *Fetcher) EagerPlan(ct *convert.Content) []string {
	claims := ct.Claims()
	seen := make(map[string]bool)
	var out []string
	for _, id := range ct.IDs() {
		if len(out) >= f.set.eagerCap {
			break
		}
		rec, ok := f.reg.Lookup(id)
		if !ok {
			continue
		}
		key := uriform.Canonical(rec.URI)
		if seen[key] {
			continue
		}
		seen[key] = true
		if f.eager(rec, claims) {
			out = append(out, id)
		}
	}
	return out
}

func (f *Fetcher) eager(rec refs.Record, claims convert.Claims) bool {
	t := rec.Testimony
	switch {
	case claims.Expired(rec.URI), claims.Never(rec.URI), rec.Never, f.reg.MarkedHere(rec.URI),
		rec.Copy != nil,
		!t.Has(convert.FieldSizeBytes), t.SizeBytes > f.set.eagerCeiling:
		return false
	}
	_, fail := f.preDial(rec, f.set.eagerCeiling)
	return fail == nil
}
