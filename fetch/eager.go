package fetch

import (
	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/uriform"
	"github.com/mcplrefs/refcore/refs"
)

// EagerPlan picks the references of one result that a host may pre-fetch
// (behaviors G1–G3). Register every block of the result first, read its
// claims with [convert.ReadClaims] and [convert.ClaimsAt], then pass the
// records the result named, in order.
//
// Each distinct uri is judged once, holding its latest record, and takes
// at most one slot. A reference is picked only when it claims a size no
// larger than Config.EagerCeiling (a reference with no claimed size is
// never eager), has no saved copy yet, is not never-marked (by its record,
// the withhold hook or the result's claims), is not called expired by any
// block of the result, and would pass every check [Fetcher.Refusal] makes
// (its server's own origin, not expired, within the ceiling and budget).
// At most Config.EagerCap references are picked. A reference passed over
// is passed over silently: nothing is logged for it.
//
// EagerPlan dials nothing; the host fetches the plan with
// [Fetcher.Fetch].
func (f *Fetcher) EagerPlan(recs []refs.Record, claims convert.Claims) []refs.Record {
	if f.set.eagerCap < 0 || f.set.eagerCeiling < 0 || len(recs) == 0 {
		return nil
	}
	var order []string
	latest := make(map[string]refs.Record, len(recs))
	for _, r := range recs {
		key := uriform.Canonical(r.URI)
		if _, seen := latest[key]; !seen {
			order = append(order, key)
		}
		latest[key] = r
	}
	var out []refs.Record
	for _, key := range order {
		if len(out) >= f.set.eagerCap {
			break
		}
		rec := f.current(latest[key])
		t := rec.Testimony
		switch {
		case claims.Expired(rec.URI), claims.Never(rec.URI), rec.Never,
			f.hook != nil && f.hook.Marked(rec.URI),
			rec.Saved != nil,
			!t.Has(convert.FieldSizeBytes), t.SizeBytes > f.set.eagerCeiling:
			continue
		}
		if _, fail := f.preDial(rec, f.set.eagerCeiling); fail != nil {
			continue
		}
		out = append(out, rec)
	}
	return out
}
