package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"github.com/mcplrefs/refcore/conformance/vectors"
	"github.com/mcplrefs/refcore/internal/jsonschema"
)

// Problem is one way an observation fails its case.
type Problem struct {
	// Check names the check that failed, such as "view-hidden" or
	// "success-bytes". [Checks] lists every name.
	Check string
	// Detail says what was found.
	Detail string
}

// String reads "<check>: <detail>".
func (p Problem) String() string { return p.Check + ": " + p.Detail }

// Evidence is everything the judge reads for one case: the expanded case,
// the observation's JSON as the observer printed it, and what the fixture
// servers saw.
type Evidence struct {
	// Case is the case with its blocks expanded against the fixture origin.
	Case vectors.Case
	// Observation is the observer's output.
	Observation json.RawMessage
	// Network is what the fixture servers saw while the case ran.
	Network Network
	// Token is the fixture server's connection credential.
	Token string
	// MaxViewChars is the observer's declared bound on one view, in UTF-16
	// code units.
	MaxViewChars int
}

// judged is Evidence with the observation decoded, as each check reads it.
type judged struct {
	Evidence
	obs Observation
	reg RegistryObservation
	// views pairs each present view set with its name.
	views []namedViews
}

type namedViews struct {
	name string
	v    Views
}

type check struct {
	name string
	// when reports whether the check applies to the case; nil means always.
	when func(j *judged) bool
	run  func(j *judged, bad func(format string, args ...any))
}

// Judge checks one case's evidence and returns every problem found; none
// means the case passed. It first checks the observation's shape against
// the observer contract; an observation of the wrong shape is judged no
// further. Then every check of [Checks] that applies to the case runs: each
// assertion MCPL's own checker makes, and more.
func Judge(ev Evidence) []Problem {
	j := &judged{Evidence: ev}
	if probs := shapeProblems(ev.Case.Operation, ev.Observation); len(probs) > 0 {
		out := make([]Problem, len(probs))
		for i, p := range probs {
			out[i] = Problem{Check: "shape", Detail: p}
		}
		return out
	}
	table := contentChecks
	if ev.Case.Operation == vectors.OpRegistry {
		table = registryChecks
		if err := json.Unmarshal(ev.Observation, &j.reg); err != nil {
			return []Problem{{Check: "shape", Detail: err.Error()}}
		}
	} else {
		if err := json.Unmarshal(ev.Observation, &j.obs); err != nil {
			return []Problem{{Check: "shape", Detail: err.Error()}}
		}
		j.views = []namedViews{{"before", j.obs.Before}}
		if j.obs.After != nil {
			j.views = append(j.views, namedViews{"after", *j.obs.After})
		}
	}
	var probs []Problem
	for _, c := range table {
		if c.when != nil && !c.when(j) {
			continue
		}
		c.run(j, func(format string, args ...any) {
			probs = append(probs, Problem{Check: c.name, Detail: fmt.Sprintf(format, args...)})
		})
	}
	return probs
}

// Checks lists the name of every check [Judge] may report, "shape" first.
func Checks() []string {
	names := []string{"shape"}
	for _, t := range [][]check{contentChecks, registryChecks} {
		for _, c := range t {
			names = append(names, c.name)
		}
	}
	return names
}

func isFetch(j *judged) bool  { return j.Case.Operation == vectors.OpFetch }
func isRender(j *judged) bool { return j.Case.Operation == vectors.OpRender }
func succeeded(j *judged) bool {
	return isFetch(j) && j.obs.Outcome.OK
}
func failedFetch(j *judged) bool { return isFetch(j) && !j.obs.Outcome.OK }
func set(b *bool) bool           { return b != nil && *b }

// contentChecks judge render and fetch cases, in the order they report.
var contentChecks = []check{
	// The schema side.
	{name: "schema-valid", run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Parsed) != len(j.Case.Blocks) {
			bad("parsed has %d entries for %d blocks", len(j.obs.Parsed), len(j.Case.Blocks))
			return
		}
		for i, p := range j.obs.Parsed {
			if p.SchemaValid != j.Case.SchemaValid[i] {
				bad("block %d: schemaValid %v, want %v (%s)", i, p.SchemaValid, j.Case.SchemaValid[i], p.SchemaError)
			}
		}
	}},
	{name: "schema-amended", run: func(j *judged, bad func(string, ...any)) {
		// The observer's verdicts come from the library's own strict
		// check; this one comes from the schema file itself, read by a
		// separate evaluator, as an outside checker's Ajv reads it.
		s, err := amendedSchema()
		if err != nil {
			bad("the bundled schema does not compile: %v", err)
			return
		}
		for i, b := range j.Case.Blocks {
			if got := s.Validate(b) == nil; got != j.Case.SchemaValid[i] {
				bad("block %d: the schema file says valid %v, the case says %v", i, got, j.Case.SchemaValid[i])
			}
		}
	}},
	{name: "legacy-schema", when: func(j *judged) bool { return j.Case.LegacySchemaValid != nil }, run: func(j *judged, bad func(string, ...any)) {
		s, err := legacySchema()
		if err != nil {
			bad("the bundled pre-RFC-005 schema does not compile: %v", err)
			return
		}
		if got := s.Validate(j.Case.Blocks[0]) == nil; got != *j.Case.LegacySchemaValid {
			bad("the pre-RFC-005 schema says block 0 valid %v, the case says %v", got, *j.Case.LegacySchemaValid)
		}
	}},
	{name: "embedded-credential", when: func(j *judged) bool { return j.Case.KnownEmbeddedCredential != "" }, run: checkEmbeddedCredential},
	{name: "emitter-conformant", when: func(j *judged) bool { return j.Case.EmitterConformant != nil }, run: checkEmitterConformant},

	// The host's reading of the blocks.
	{name: "kind", when: func(j *judged) bool { return j.Case.Expect.Kind != "" }, run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Parsed) == 0 || j.obs.Parsed[0].Kind != j.Case.Expect.Kind {
			got := ""
			if len(j.obs.Parsed) > 0 {
				got = j.obs.Parsed[0].Kind
			}
			bad("parsed[0].kind %q, want %q", got, j.Case.Expect.Kind)
		}
	}},
	{name: "missing-fields", when: func(j *judged) bool { return len(j.Case.Expect.MissingFields) > 0 }, run: checkMissingFields},

	// Every view, before and after a fetch.
	{name: "view-bound", run: func(j *judged, bad func(string, ...any)) {
		j.eachText(func(where, text string) {
			if n := utf16Len(text); n > j.MaxViewChars {
				bad("%s: %d characters, over maxViewChars %d", where, n, j.MaxViewChars)
			}
		})
	}},
	{name: "view-hidden", when: func(j *judged) bool { return len(j.Case.Expect.Hidden) > 0 }, run: func(j *judged, bad func(string, ...any)) {
		j.eachText(func(where, text string) {
			for _, h := range j.Case.Expect.Hidden {
				if h != "" && strings.Contains(text, h) {
					bad("%s: carries hidden string %q", where, clip(h))
				}
			}
		})
	}},
	{name: "view-includes", when: func(j *judged) bool { return len(j.Case.Expect.Includes) > 0 }, run: func(j *judged, bad func(string, ...any)) {
		j.eachText(func(where, text string) {
			for _, inc := range j.Case.Expect.Includes {
				if !strings.Contains(text, inc) {
					bad("%s: lacks %q", where, clip(inc))
				}
			}
		})
	}},
	{name: "view-stub", when: func(j *judged) bool { return set(j.Case.Expect.Stub) }, run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Records) == 0 {
			bad("no reference record was observed")
			return
		}
		j.eachText(func(where, text string) {
			for _, r := range j.obs.Records {
				if !strings.Contains(text, r.RefID) {
					bad("%s: no stub names %s", where, r.RefID)
				}
			}
		})
	}},
	{name: "view-stub-or-inline", when: func(j *judged) bool { return j.Case.Expect.StubOrInlineBase64 != "" }, run: checkStubOrInline},
	{name: "view-truncation-marked", when: func(j *judged) bool { return set(j.Case.Expect.TruncationMarked) }, run: func(j *judged, bad func(string, ...any)) {
		j.eachText(func(where, text string) {
			if !strings.Contains(text, "…") {
				bad("%s: truncation not marked with …", where)
			}
		})
	}},
	{name: "view-clean-label", when: func(j *judged) bool { return set(j.Case.Expect.CleanLabel) }, run: func(j *judged, bad func(string, ...any)) {
		for _, v := range j.views {
			for _, r := range v.v.History {
				if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) {
					bad("%s.history: carries control or bidi character %+q", v.name, r)
					break
				}
			}
		}
	}},
	{name: "view-bounded", when: func(j *judged) bool { return set(j.Case.Expect.Bounded) }, run: checkBounded},

	// A render dereferences nothing.
	{name: "render-no-requests", when: isRender, run: func(j *judged, bad func(string, ...any)) {
		if n := j.Network.Requests + j.Network.OtherRequests; n != 0 {
			bad("a render made %d requests, want 0", n)
		}
	}},
	{name: "render-no-fetch", when: isRender, run: func(j *judged, bad func(string, ...any)) {
		if j.obs.Outcome != nil || j.obs.After != nil || j.obs.Saves != nil {
			bad("a render reported an outcome, saves or after views")
		}
	}},

	// A fetch, whatever its outcome.
	{name: "fetch-records", when: isFetch, run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Records) == 0 {
			bad("a fetch case observed no record")
		}
	}},
	{name: "fetch-ok", when: func(j *judged) bool { return isFetch(j) && j.Case.Expect.OK != nil }, run: func(j *judged, bad func(string, ...any)) {
		if j.obs.Outcome.OK != *j.Case.Expect.OK {
			bad("ok %v, want %v (error %q)", j.obs.Outcome.OK, *j.Case.Expect.OK, j.obs.Outcome.Error)
		}
	}},
	{name: "fetch-requests", when: func(j *judged) bool { return isFetch(j) && j.Case.Expect.Requests != nil }, run: func(j *judged, bad func(string, ...any)) {
		if j.Network.Requests != *j.Case.Expect.Requests {
			bad("%d requests to the origin, want %d", j.Network.Requests, *j.Case.Expect.Requests)
		}
	}},
	{name: "fetch-bearer", when: isFetch, run: func(j *judged, bad func(string, ...any)) {
		want := "Bearer " + j.Token
		for i, a := range j.Network.OriginAuth {
			if a != want {
				bad("request %d to the origin carried Authorization %q, want the connection's bearer token", i, clip(a))
			}
		}
	}},
	{name: "redirect-no-credential", when: isFetch, run: func(j *judged, bad func(string, ...any)) {
		for _, a := range j.Network.OtherAuth {
			if a != "" {
				bad("a credential reached the redirect target")
			}
		}
	}},
	{name: "redirect-safe", when: func(j *judged) bool { return isFetch(j) && set(j.Case.Expect.RedirectSafe) }, run: func(j *judged, bad func(string, ...any)) {
		if j.Network.Requests != 1 {
			bad("%d requests to the origin, want exactly the one that answers with the redirect", j.Network.Requests)
		}
		if j.Network.OtherRequests > 1 {
			bad("%d requests reached the redirect target, want at most 1", j.Network.OtherRequests)
		}
		if j.Network.OtherRequests == 0 && j.obs.Outcome.OK {
			bad("the fetch succeeded without following the redirect")
		}
	}},

	// A failed fetch presents nothing.
	{name: "failure-no-saves", when: failedFetch, run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Saves) != 0 {
			bad("a failed fetch saved %d payload(s)", len(j.obs.Saves))
		}
	}},
	{name: "failure-no-facts", when: failedFetch, run: func(j *judged, bad func(string, ...any)) {
		for _, r := range j.obs.Records {
			if r.FetchedPath != nil || r.VerifiedBytes != nil || r.DigestVerified != nil || r.VerifiedMimeType != nil {
				bad("a failed fetch left verified facts on %s", r.RefID)
			}
		}
	}},
	{name: "failure-clause", when: failedFetch, run: func(j *judged, bad func(string, ...any)) {
		if j.obs.Outcome.Error == "" || j.obs.Outcome.Remedy == "" {
			bad("a failure must carry a clause and a remedy")
		}
	}},

	// A successful fetch presents exactly the verified copy.
	{name: "success-one-save", when: succeeded, run: func(j *judged, bad func(string, ...any)) {
		if len(j.obs.Saves) != 1 {
			bad("a successful fetch saved %d payloads, want exactly 1", len(j.obs.Saves))
		}
	}},
	{name: "success-bytes", when: succeeded, run: func(j *judged, bad func(string, ...any)) {
		saved, ok := j.savedBytes()
		if !ok {
			return
		}
		n := int64(len(saved))
		if o := j.obs.Outcome.Bytes; o == nil || *o != n {
			bad("outcome.bytes %v, want the saved length %d", ptrInt(o), n)
		}
		if r := j.firstRecord(); r != nil && (r.VerifiedBytes == nil || *r.VerifiedBytes != n) {
			bad("records[0].verifiedBytes %v, want the saved length %d", ptrInt(r.VerifiedBytes), n)
		}
	}},
	{name: "success-path", when: succeeded, run: func(j *judged, bad func(string, ...any)) {
		r, out := j.firstRecord(), j.obs.Outcome
		if r == nil {
			return
		}
		if r.FetchedPath == nil || out.Path == nil || *r.FetchedPath != *out.Path {
			bad("records[0].fetchedPath %v differs from outcome.path %v", ptrStr(r.FetchedPath), ptrStr(out.Path))
		}
	}},
	{name: "decoded-bytes", when: func(j *judged) bool { return succeeded(j) && j.Case.Expect.DecodedBase64 != "" }, run: func(j *judged, bad func(string, ...any)) {
		got, ok := j.savedBytes()
		if !ok {
			return
		}
		want, err := base64.StdEncoding.DecodeString(j.Case.Expect.DecodedBase64)
		if err != nil {
			bad("the case's decodedBase64 does not decode: %v", err)
			return
		}
		if !bytes.Equal(got, want) {
			bad("saved %d bytes differing from the %d decoded octets", len(got), len(want))
		}
	}},
	{name: "saved-mime", when: func(j *judged) bool { return succeeded(j) && j.Case.Expect.SavedMime != "" }, run: func(j *judged, bad func(string, ...any)) {
		want := j.Case.Expect.SavedMime
		if r := j.firstRecord(); r != nil && ptrStr(r.VerifiedMimeType) != want {
			bad("records[0].verifiedMimeType %q, want %q", ptrStr(r.VerifiedMimeType), want)
		}
		if got := ptrStr(j.obs.Outcome.MimeType); got != want {
			bad("outcome.mimeType %q, want %q", got, want)
		}
		if len(j.obs.Saves) == 1 && j.obs.Saves[0].MimeType != want {
			bad("saved type %q, want %q", j.obs.Saves[0].MimeType, want)
		}
	}},
	{name: "digest-verified", when: func(j *judged) bool { return succeeded(j) && set(j.Case.Expect.DigestVerified) }, run: func(j *judged, bad func(string, ...any)) {
		if r := j.firstRecord(); r != nil && !set(r.DigestVerified) {
			bad("records[0].digestVerified %v, want true", ptrBool(r.DigestVerified))
		}
		if !set(j.obs.Outcome.DigestVerified) {
			bad("outcome.digestVerified %v, want true", ptrBool(j.obs.Outcome.DigestVerified))
		}
	}},
	{name: "storage-from-id", when: func(j *judged) bool { return succeeded(j) && set(j.Case.Expect.StorageFromID) }, run: checkStorageName},
	{name: "abort-stream", when: func(j *judged) bool { return isFetch(j) && set(j.Case.Expect.AbortStream) }, run: func(j *judged, bad func(string, ...any)) {
		if !j.Network.StreamAborted {
			bad("the continuing stream was not closed early")
		}
		chunks := 0
		if r := j.Case.Response; r != nil && r.Stream != nil {
			chunks = r.Stream.Chunks
		}
		if n := j.Network.ChunksSent; n <= 0 || n >= chunks {
			bad("%d of %d chunks sent, want the stream read and cut off before its end", n, chunks)
		}
	}},
	{name: "unchanged", when: func(j *judged) bool { return isFetch(j) && set(j.Case.Expect.Unchanged) }, run: func(j *judged, bad func(string, ...any)) {
		if !sameJSON(j.obs.Before, *j.obs.After) {
			bad("the views changed across a fetch that should leave them unchanged")
		}
	}},
}

var (
	amendedSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return jsonschema.CompileWrapped(vectors.SchemaJSON())
	})
	legacySchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return jsonschema.CompileWrapped(vectors.LegacySchemaJSON())
	})
)

// eachText calls fn with every view text the checker reads: the push view
// as JavaScript's JSON.stringify prints it, and the wake and history texts,
// of the before views and, after a fetch, the after views.
func (j *judged) eachText(fn func(where, text string)) {
	for _, v := range j.views {
		fn(v.name+".push", jsText(v.v.Push))
		fn(v.name+".wake", v.v.Wake)
		fn(v.name+".history", v.v.History)
	}
}

func (j *judged) firstRecord() *RecordObs {
	if len(j.obs.Records) == 0 {
		return nil
	}
	return &j.obs.Records[0]
}

// savedBytes decodes the one save, reporting false when there is not
// exactly one (success-one-save reports that).
func (j *judged) savedBytes() ([]byte, bool) {
	if len(j.obs.Saves) != 1 {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(j.obs.Saves[0].Base64)
	return b, err == nil
}

func checkMissingFields(j *judged, bad func(string, ...any)) {
	ref := firstReference(j.obs.Parsed)
	if ref == nil {
		bad("no reference was parsed")
		return
	}
	present := presentKeys(ref.Testimony)
	for _, f := range j.Case.Expect.MissingFields {
		if present[f] {
			bad("%s is present in the testimony, want it absent", f)
		}
	}
	if ref.Testimony.Disposition == nil || *ref.Testimony.Disposition != "never" {
		bad("disposition never did not survive the rejected field")
	}
}

func checkStubOrInline(j *judged, bad func(string, ...any)) {
	b64 := j.Case.Expect.StubOrInlineBase64
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		bad("the case's stubOrInlineBase64 does not decode: %v", err)
		return
	}
	inline := strings.ToValidUTF8(string(raw), "\uFFFD")
	j.eachText(func(where, text string) {
		for _, r := range j.obs.Records {
			if strings.Contains(text, r.RefID) {
				return
			}
		}
		if !strings.Contains(text, inline) && !strings.Contains(text, b64) {
			bad("%s: neither a stub nor the verified payload is shown", where)
		}
	})
}

// checkBounded is the bounded expectation: no view carries a long string
// of a block whole (a name of a megabyte must not reach the model as it
// came), beyond the view bound view-bound already checks.
func checkBounded(j *judged, bad func(string, ...any)) {
	const long = 1024
	var strs []string
	for _, b := range j.Case.Blocks {
		var obj map[string]any
		if json.Unmarshal(b, &obj) != nil {
			continue
		}
		for k, v := range obj {
			if s, ok := v.(string); ok && len([]rune(s)) > long && k != "type" {
				strs = append(strs, s[:long])
			}
		}
	}
	j.eachText(func(where, text string) {
		for _, s := range strs {
			if strings.Contains(text, s) {
				bad("%s: carries %d characters of a block's string unshortened", where, long)
			}
		}
	})
}

func checkStorageName(j *judged, bad func(string, ...any)) {
	if len(j.obs.Saves) != 1 || len(j.obs.Records) == 0 {
		return
	}
	name := j.obs.Saves[0].Name
	if !strings.HasPrefix(name, j.obs.Records[0].RefID+".") {
		bad("storage name %q does not start with records[0].refId and a dot", clip(name))
	}
	if strings.ContainsAny(name, `/\`) {
		bad("storage name %q holds a path separator", clip(name))
	}
	if strings.Contains(name, ServerName) {
		bad("storage name %q holds the server's name", clip(name))
	}
	var blk struct {
		Name string `json:"name"`
	}
	if len(j.Case.Blocks) > 0 && json.Unmarshal(j.Case.Blocks[0], &blk) == nil && blk.Name != "" && strings.Contains(name, blk.Name) {
		bad("storage name %q holds the reference's name", clip(name))
	}
}

func checkEmbeddedCredential(j *judged, bad func(string, ...any)) {
	var blk struct {
		URI string `json:"uri"`
	}
	if len(j.Case.Blocks) == 0 || json.Unmarshal(j.Case.Blocks[0], &blk) != nil {
		bad("blocks[0] has no readable uri")
		return
	}
	u, err := url.Parse(blk.URI)
	if err != nil || u.Query().Get("token") != j.Case.KnownEmbeddedCredential {
		bad("blocks[0].uri does not carry the known credential in its token parameter")
	}
	if j.Case.EmitterConformant == nil || *j.Case.EmitterConformant {
		bad("a block with a credential in its uri must be marked emitterConformant false")
	}
}

// checkEmitterConformant holds a case that says its emitter broke the RFC
// to naming how: today the only known way is a credential minted into the
// uri (RFC-005 section 6.1), which a schema alone cannot see.
func checkEmitterConformant(j *judged, bad func(string, ...any)) {
	if !*j.Case.EmitterConformant && j.Case.KnownEmbeddedCredential == "" {
		bad("emitterConformant false without a known violation (knownEmbeddedCredential) to check")
	}
}

// registryChecks judge the registry operation (vector 20).
var registryChecks = []check{
	{name: "registry-stable", run: func(j *judged, bad func(string, ...any)) {
		if j.reg.FirstID == "" || j.reg.StableID != j.reg.FirstID {
			bad("registering a uri again gave %q then %q; want one stable id", j.reg.FirstID, j.reg.StableID)
		}
	}},
	{name: "registry-distinct-ids", run: func(j *judged, bad func(string, ...any)) {
		seen := map[string]bool{}
		for _, id := range j.reg.IDs {
			if seen[id] {
				bad("id %s issued twice", id)
			}
			seen[id] = true
		}
		if want := j.Case.Registrations + 2; j.Case.TouchAfter == nil && len(j.reg.IDs) != want {
			bad("%d distinct ids issued, want %d", len(j.reg.IDs), want)
		}
	}},
	{name: "registry-evicted-miss", when: func(j *judged) bool { return j.Case.TouchAfter == nil }, run: func(j *judged, bad func(string, ...any)) {
		if j.reg.Evicted != nil {
			bad("the evicted id %s still resolves, to %s", j.reg.FirstID, j.reg.Evicted.RefID)
		}
		if !unknownError(j.reg.EvictedError) {
			bad("the evicted id's lookup is not an unknown-reference error: %+v", j.reg.EvictedError)
		}
	}},
	{name: "registry-touched-held", when: func(j *judged) bool { return j.Case.TouchAfter != nil }, run: func(j *judged, bad func(string, ...any)) {
		if j.reg.Evicted == nil || j.reg.Evicted.RefID != j.reg.FirstID {
			bad("a record touched after registration %d was evicted anyway", *j.Case.TouchAfter)
		}
		if j.reg.Fresh.RefID != j.reg.FirstID {
			bad("the touched record's uri got a new id")
		}
	}},
	{name: "registry-fresh-id", when: func(j *judged) bool { return j.Case.TouchAfter == nil }, run: func(j *judged, bad func(string, ...any)) {
		if j.reg.Fresh.RefID == j.reg.FirstID || j.reg.Fresh.RefID == "" {
			bad("the uri registered after eviction reused or lacks an id: %q", j.reg.Fresh.RefID)
		}
	}},
	{name: "registry-fresh-uri", run: func(j *judged, bad func(string, ...any)) {
		var blk struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(j.Case.Blocks[0], &blk)
		if got := ptrStr(j.reg.Fresh.Testimony.URI); got != blk.URI {
			bad("the fresh record's uri %q is not blocks[0].uri", clip(got))
		}
	}},
	{name: "registry-unknown-miss", run: func(j *judged, bad func(string, ...any)) {
		if j.reg.Unknown != nil {
			bad("the never-issued id resolves to %s", j.reg.Unknown.RefID)
		}
		if !unknownError(j.reg.UnknownError) {
			bad("the unknown id's lookup is not an unknown-reference error: %+v", j.reg.UnknownError)
		}
	}},
	{name: "registry-hidden", run: func(j *judged, bad func(string, ...any)) {
		for _, e := range []*ToolError{j.reg.EvictedError, j.reg.UnknownError} {
			b, _ := json.Marshal(e)
			for _, h := range j.Case.Expect.Hidden {
				if h != "" && strings.Contains(string(b), h) {
					bad("an unknown-reference error carries hidden string %q", clip(h))
				}
			}
		}
	}},
}

// unknownError reports whether e is a fetch tool's unknown-reference
// answer: not a success, an error, and saying "unknown reference".
func unknownError(e *ToolError) bool {
	return e != nil && !e.Success && e.IsError && strings.Contains(strings.ToLower(e.Error), "unknown reference")
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

// sameJSON reports whether a and b are deeply equal as JSON values, as a
// JavaScript checker's deepEqual over parsed JSON compares them.
func sameJSON(a, b any) bool {
	var x, y any
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil || json.Unmarshal(ab, &x) != nil || json.Unmarshal(bb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func clip(s string) string {
	if len(s) > 60 {
		return strings.ToValidUTF8(s[:60], "") + "…"
	}
	return s
}

func ptrBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func ptrInt(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

func ptrStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
