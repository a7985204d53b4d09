package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// Check judges one render or fetch observation against its case, as the
// contract's checker does, and returns every problem found (none means the
// case passed). fx is what the fixture saw; maxViewChars is the observer's
// declared view bound.
func Check(c vectors.Case, obs *Observation, fx Record, token string, maxViewChars int) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	e := c.Expect

	// Schema side.
	if len(obs.Parsed) != len(c.Blocks) {
		bad("parsed has %d entries for %d blocks", len(obs.Parsed), len(c.Blocks))
	} else {
		for i, p := range obs.Parsed {
			if p.SchemaValid != c.SchemaValid[i] {
				bad("block %d: schemaValid %v, want %v (%s)", i, p.SchemaValid, c.SchemaValid[i], p.SchemaError)
			}
		}
	}
	if e.Kind != "" && len(obs.Parsed) > 0 && obs.Parsed[0].Kind != e.Kind {
		bad("kind %q, want %q", obs.Parsed[0].Kind, e.Kind)
	}
	if len(e.MissingFields) > 0 {
		ref := firstReference(obs.Parsed)
		if ref == nil {
			bad("missingFields: no reference was parsed")
		} else {
			present := presentKeys(ref.Testimony)
			for _, f := range e.MissingFields {
				if present[f] {
					bad("missingFields: %s is present in the testimony, want it absent", f)
				}
			}
			if ref.Testimony.Disposition == nil || *ref.Testimony.Disposition != "never" {
				bad("missingFields: disposition never did not survive the rejected field")
			}
		}
	}

	// Views.
	views := []struct {
		name string
		v    Views
	}{{"before", obs.Before}}
	if obs.After != nil {
		views = append(views, struct {
			name string
			v    Views
		}{"after", *obs.After})
	}
	for _, vw := range views {
		for _, part := range []struct{ name, text string }{
			{"push", string(vw.v.Push)}, {"wake", vw.v.Wake}, {"history", vw.v.History},
		} {
			where := vw.name + "." + part.name
			if n := len(utf16.Encode([]rune(part.text))); n > maxViewChars {
				bad("%s: %d characters, over maxViewChars %d", where, n, maxViewChars)
			}
			for _, h := range e.Hidden {
				if h != "" && strings.Contains(part.text, h) {
					bad("%s: carries hidden string %q", where, clip(h))
				}
			}
			for _, inc := range e.Includes {
				if !strings.Contains(part.text, inc) {
					bad("%s: lacks %q", where, inc)
				}
			}
			if e.Stub != nil && *e.Stub {
				for _, r := range obs.Records {
					if !strings.Contains(part.text, r.RefID) {
						bad("%s: no stub names %s", where, r.RefID)
					}
				}
			}
			if e.TruncationMarked != nil && *e.TruncationMarked && !strings.Contains(part.text, "…") {
				bad("%s: truncation not marked with …", where)
			}
		}
		if e.CleanLabel != nil && *e.CleanLabel {
			for _, r := range vw.v.History {
				if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) {
					bad("%s.history: carries control or bidi character %+q", vw.name, r)
					break
				}
			}
		}
	}

	// Host side of a fetch.
	switch c.Operation {
	case vectors.OpRender:
		if fx.Requests+fx.OtherRequests != 0 {
			bad("a render made %d requests, want 0 (F1)", fx.Requests+fx.OtherRequests)
		}
		if obs.Outcome != nil || obs.After != nil {
			bad("a render reported a fetch")
		}
	case vectors.OpFetch:
		probs = append(probs, checkFetch(c, obs, fx, token)...)
	}
	return probs
}

func checkFetch(c vectors.Case, obs *Observation, fx Record, token string) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	e := c.Expect
	out := obs.Outcome
	if out == nil || obs.After == nil {
		return []string{"a fetch case reported no outcome or no after views"}
	}
	if e.OK != nil && out.OK != *e.OK {
		bad("ok %v, want %v (error %q)", out.OK, *e.OK, out.Error)
	}
	if e.Requests != nil && fx.Requests != *e.Requests {
		bad("%d requests to the origin, want %d", fx.Requests, *e.Requests)
	}
	if fx.Requests > 0 {
		want := "Bearer " + token
		for _, a := range fx.OriginAuth {
			if a != want {
				bad("a request to the origin carried Authorization %q, want the connection's bearer token (F3)", clip(a))
			}
		}
	}
	for _, a := range fx.OtherAuth {
		if a != "" {
			bad("a credential reached the redirect target (F3, F4)")
		}
	}
	if e.RedirectSafe != nil && *e.RedirectSafe && fx.OtherRequests > 0 && len(fx.OtherAuth) > 0 {
		for _, a := range fx.OtherAuth {
			if a != "" {
				bad("redirect not safe: credential forwarded cross-origin")
			}
		}
	}
	if !out.OK {
		if len(obs.Saves) != 0 {
			bad("a failed fetch saved %d payload(s)", len(obs.Saves))
		}
		for _, r := range obs.Records {
			if r.FetchedPath != "" || r.VerifiedBytes != nil || r.DigestVerified != nil || r.VerifiedMimeType != "" {
				bad("a failed fetch left verified facts on %s", r.RefID)
			}
		}
		if out.Error == "" || out.Remedy == "" {
			bad("a failure must carry a clause and a remedy (F14)")
		}
	} else {
		if len(obs.Saves) != 1 {
			bad("a successful fetch saved %d payloads, want exactly 1", len(obs.Saves))
		}
		if e.DecodedBase64 != "" && len(obs.Saves) == 1 {
			want, _ := base64.StdEncoding.DecodeString(e.DecodedBase64)
			got, _ := base64.StdEncoding.DecodeString(obs.Saves[0].Base64)
			if !bytes.Equal(got, want) {
				bad("saved %d bytes differing from the %d decoded octets", len(got), len(want))
			}
		}
		if e.SavedMime != "" && len(obs.Saves) == 1 && obs.Saves[0].MimeType != e.SavedMime {
			bad("saved type %q, want %q", obs.Saves[0].MimeType, e.SavedMime)
		}
		if e.DigestVerified != nil && (out.DigestVerified == nil || *out.DigestVerified != *e.DigestVerified) {
			bad("digestVerified %v, want %v", ptrBool(out.DigestVerified), *e.DigestVerified)
		}
		if e.StorageFromID != nil && *e.StorageFromID && len(obs.Saves) == 1 {
			name := obs.Saves[0].Name
			ids := make([]string, 0, len(obs.Records))
			for _, r := range obs.Records {
				ids = append(ids, r.RefID)
			}
			stem, _, _ := strings.Cut(name, ".")
			switch {
			case strings.ContainsAny(name, `/\`):
				bad("storage name %q holds a path separator", clip(name))
			case !slices.Contains(ids, stem):
				bad("storage name %q is not <refId>.<ext>", clip(name))
			case strings.Contains(name, ServerName):
				bad("storage name %q holds the server's name", clip(name))
			}
		}
		if e.StubOrInlineBase64 != "" {
			after := string(obs.After.Push) + obs.After.Wake + obs.After.History
			hasStub := false
			for _, r := range obs.Records {
				hasStub = hasStub || strings.Contains(after, r.RefID)
			}
			if !hasStub && !strings.Contains(after, e.StubOrInlineBase64) {
				bad("after the fetch neither a stub nor the verified payload is shown")
			}
		}
	}
	if e.AbortStream != nil && *e.AbortStream && !fx.StreamAborted {
		bad("the continuing stream was not closed early (F6)")
	}
	if e.Unchanged != nil && *e.Unchanged {
		b, _ := json.Marshal(obs.Before)
		a, _ := json.Marshal(obs.After)
		if !bytes.Equal(a, b) {
			bad("the views changed across a fetch that should leave them unchanged")
		}
	}
	return probs
}

// CheckRegistry judges a registry observation (vector 20).
func CheckRegistry(c vectors.Case, obs *RegistryObservation) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if obs.FirstID == "" || obs.StableID != obs.FirstID {
		bad("re-registering a uri gave %q then %q; want one stable id (R2)", obs.FirstID, obs.StableID)
	}
	seen := map[string]bool{}
	for _, id := range obs.IDs {
		if seen[id] {
			bad("id %s issued twice (R1)", id)
		}
		seen[id] = true
	}
	if want := c.Registrations + 1; c.TouchAfter == nil && len(obs.IDs) != want+1 {
		bad("%d distinct ids issued, want %d", len(obs.IDs), want+1)
	}
	held := c.TouchAfter != nil
	if held {
		if obs.Evicted == nil || obs.Evicted.RefID != obs.FirstID {
			bad("a record touched after registration %d was evicted anyway (R3)", *c.TouchAfter)
		}
		if obs.Fresh.RefID != obs.FirstID {
			bad("the touched record's uri got a new id")
		}
	} else {
		if obs.Evicted != nil {
			bad("the evicted id %s still resolves, to %s (R4)", obs.FirstID, obs.Evicted.RefID)
		}
		if obs.Fresh.RefID == obs.FirstID || obs.Fresh.RefID == "" {
			bad("the uri registered after eviction reused or lacks an id: %q (R1)", obs.Fresh.RefID)
		}
		if obs.EvictedError == nil || !strings.HasPrefix(obs.EvictedError.Error, "unknown reference") || obs.EvictedError.Success || !obs.EvictedError.IsError {
			bad("the evicted id's lookup is not an unknown-reference error: %+v", obs.EvictedError)
		}
	}
	if obs.Unknown != nil {
		bad("the never-issued id resolves to %s (R4)", obs.Unknown.RefID)
	}
	if obs.UnknownError == nil || !strings.HasPrefix(obs.UnknownError.Error, "unknown reference") || obs.UnknownError.Success || !obs.UnknownError.IsError {
		bad("the unknown id's lookup is not an unknown-reference error: %+v", obs.UnknownError)
	}
	for _, h := range c.Expect.Hidden {
		b, _ := json.Marshal(obs.UnknownError)
		if h != "" && strings.Contains(string(b), h) {
			bad("the unknown-reference error carries hidden string %q", clip(h))
		}
	}
	return probs
}

func firstReference(ps []Parsed) *Parsed {
	for i := range ps {
		if ps[i].Kind == "reference" {
			return &ps[i]
		}
	}
	return nil
}

func presentKeys(t TestimonyObs) map[string]bool {
	return map[string]bool{
		"uri": t.URI != nil, "name": t.Name != nil, "mimeType": t.MimeType != nil, "sizeBytes": t.SizeBytes != nil,
		"digest": t.Digest != nil, "expiresAt": t.ExpiresAt != nil, "disposition": t.Disposition != nil,
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func ptrBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
