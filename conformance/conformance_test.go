package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

func loadBundled(t *testing.T) *vectors.File {
	t.Helper()
	f, err := vectors.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestVectors runs every RFC-005 vector through the observer and the
// checker, one subtest per case id, each with its own fixture servers.
func TestVectors(t *testing.T) {
	f := loadBundled(t)
	if len(f.Cases) != 43 {
		t.Fatalf("the bundled file has %d cases, want 43", len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			r := RunCase(context.Background(), c, f.Fixtures.Token, ConformanceProfile())
			for _, p := range r.Problems {
				t.Errorf("case %s (rfc %d): %s", c.ID, c.RFC, p)
			}
			if r.Evidence == nil {
				t.Fatalf("case %s left no evidence", c.ID)
			}
		})
	}
}

// evidence runs the named cases once through the real observer and
// returns what the judge read for each, failing the test if any case does
// not pass as it is.
func evidence(t *testing.T, f *vectors.File, ids []string) map[string]Evidence {
	t.Helper()
	out := map[string]Evidence{}
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		r := RunCase(context.Background(), caseByID(t, f, id), f.Fixtures.Token, ConformanceProfile())
		if !r.Passed() || r.Evidence == nil {
			t.Fatalf("%s does not pass unperturbed: %v", id, r.Problems)
		}
		out[id] = *r.Evidence
	}
	return out
}

func caseByID(t *testing.T, f *vectors.File, id string) vectors.Case {
	t.Helper()
	for _, c := range f.Cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %q", id)
	return vectors.Case{}
}

// obj and list read into a decoded observation, failing loudly on a shape
// the perturbation did not expect.
func obj(v any, key string) map[string]any { return v.(map[string]any)[key].(map[string]any) }
func first(v any, key string) map[string]any {
	return v.(map[string]any)[key].([]any)[0].(map[string]any)
}

// perturbation stands for a library (or a vectors file) broken in one
// specific way: edit changes a good case's evidence, and the judge must
// then report the named check, and only it.
type perturbation struct {
	check, caseID, why string
	edit               func(ev *Evidence, obs map[string]any)
}

var perturbations = []perturbation{
	{"shape", "04-claim-over-ceiling", "a failed fetch's saves left out, as MCPL's checker once caught",
		func(ev *Evidence, obs map[string]any) { delete(obs, "saves") }},
	{"schema-valid", "01-never", "the strict schema check accepting what it must refuse, or the reverse",
		func(ev *Evidence, obs map[string]any) { first(obs, "parsed")["schemaValid"] = false }},
	{"schema-amended", "01-never", "a block the schema file refuses under a case that calls it valid",
		func(ev *Evidence, obs map[string]any) {
			var blk map[string]any
			if err := json.Unmarshal(ev.Case.Blocks[0], &blk); err != nil {
				panic(err)
			}
			blk["sizeBytes"] = -1
			ev.Case.Blocks[0], _ = json.Marshal(blk)
		}},
	{"legacy-schema", "07-legacy-resource", "a vectors file that says the old schema refuses a block it accepts",
		func(ev *Evidence, obs map[string]any) { ev.Case.LegacySchemaValid = new(bool) }},
	{"embedded-credential", "06-embedded-server-credential", "a vectors file naming a credential its uri does not carry",
		func(ev *Evidence, obs map[string]any) { ev.Case.KnownEmbeddedCredential = "another-secret" }},
	{"emitter-conformant", "07-legacy-resource", "a vectors file calling an emitter broken without saying how",
		func(ev *Evidence, obs map[string]any) { ev.Case.EmitterConformant = new(bool) }},
	{"kind", "schema-uri-4097", "an over-long uri read as a reference",
		func(ev *Evidence, obs map[string]any) { first(obs, "parsed")["kind"] = "reference" }},
	{"missing-fields", "field-rule-name", "an over-long name truncated instead of rejected",
		func(ev *Evidence, obs map[string]any) {
			first(obs, "parsed")["testimony"].(map[string]any)["name"] = strings.Repeat("a", 255)
		}},
	{"view-bound", "01-never", "a view past the declared bound",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["wake"] = b["wake"].(string) + strings.Repeat("x", MaxViewChars)
		}},
	{"view-hidden", "01-never", "the uri in a stub",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["history"] = b["history"].(string) + " at " + ev.Case.Expect.Hidden[0] + "/payload"
		}},
	{"view-includes", "08-push-size-0", "a claimed size left out of the stub",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["history"] = strings.ReplaceAll(b["history"].(string), ev.Case.Expect.Includes[0], "")
		}},
	{"view-stub", "01-never", "a stub that does not name its record",
		func(ev *Evidence, obs map[string]any) {
			id := first(obs, "records")["refId"].(string)
			b := obj(obs, "before")
			b["history"] = strings.ReplaceAll(b["history"].(string), id, "ref_elsewhere")
		}},
	{"view-stub-or-inline", "03-verified-ref", "a verified reference shown as neither stub nor payload",
		func(ev *Evidence, obs map[string]any) {
			id := first(obs, "records")["refId"].(string)
			a := obj(obs, "after")
			a["history"] = strings.ReplaceAll(a["history"].(string), id, "ref_elsewhere")
		}},
	{"view-truncation-marked", "schema-name-255", "a name cut without a mark",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["history"] = strings.ReplaceAll(b["history"].(string), "…", "...")
		}},
	{"view-clean-label", "18-label-controls", "a bidi override left in a label",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["history"] = b["history"].(string) + "\u202e"
		}},
	{"view-bounded", "17-oversized-name", "a megabyte name shown whole up to the view bound",
		func(ev *Evidence, obs map[string]any) {
			b := obj(obs, "before")
			b["wake"] = b["wake"].(string) + strings.Repeat("x", 2000)
		}},
	{"render-no-requests", "01-never", "a render that dereferences the uri",
		func(ev *Evidence, obs map[string]any) { ev.Network.Requests = 1 }},
	{"render-no-fetch", "01-never", "a render that reports a fetch",
		func(ev *Evidence, obs map[string]any) { obs["after"] = obs["before"] }},
	{"fetch-records", "04-claim-over-ceiling", "a fetch that forgets its record (the stub expectation dropped so only this check speaks)",
		func(ev *Evidence, obs map[string]any) { ev.Case.Expect.Stub = nil; obs["records"] = []any{} }},
	{"fetch-ok", "03-verified-ref", "a fetch refused that the case expects to succeed",
		func(ev *Evidence, obs map[string]any) {
			obs["outcome"] = map[string]any{"ok": false, "error": "refused", "remedy": "none"}
			obs["saves"] = []any{}
			r := first(obs, "records")
			for _, k := range []string{"fetchedPath", "verifiedBytes", "verifiedMimeType", "digestVerified"} {
				delete(r, k)
			}
		}},
	{"fetch-requests", "11-file-refused", "a refused scheme dialed anyway",
		func(ev *Evidence, obs map[string]any) {
			ev.Network.Requests, ev.Network.OriginAuth = 1, []string{"Bearer " + ev.Token}
		}},
	{"fetch-bearer", "03-verified-never", "the connection's credential not sent to its own origin",
		func(ev *Evidence, obs map[string]any) { ev.Network.OriginAuth[0] = "" }},
	{"redirect-no-credential", "12-cross-origin-redirect", "the bearer forwarded across a redirect",
		func(ev *Evidence, obs map[string]any) {
			ev.Network.OtherRequests, ev.Network.OtherAuth = 1, []string{"Bearer " + ev.Token}
		}},
	{"redirect-safe", "12-cross-origin-redirect", "a redirect answered by asking the origin again",
		func(ev *Evidence, obs map[string]any) {
			ev.Network.Requests++
			ev.Network.OriginAuth = append(ev.Network.OriginAuth, "Bearer "+ev.Token)
		}},
	{"failure-no-saves", "04-claim-over-ceiling", "partial bytes kept after a failure",
		func(ev *Evidence, obs map[string]any) {
			obs["saves"] = []any{map[string]any{"name": "ref_x.bin", "base64": "AAAA", "mimeType": "application/octet-stream"}}
		}},
	{"failure-no-facts", "04-claim-over-ceiling", "verified facts left on a record after a failure",
		func(ev *Evidence, obs map[string]any) { first(obs, "records")["verifiedBytes"] = 19 }},
	{"failure-clause", "04-claim-over-ceiling", "a failure without a remedy",
		func(ev *Evidence, obs map[string]any) { delete(obs["outcome"].(map[string]any), "remedy") }},
	{"success-one-save", "03-verified-never", "one fetch saved twice",
		func(ev *Evidence, obs map[string]any) {
			s := obs["saves"].([]any)
			obs["saves"] = append(s, s[0])
		}},
	{"success-bytes", "03-verified-never", "a reported size that is not the saved size",
		func(ev *Evidence, obs map[string]any) { obj(obs, "outcome")["bytes"] = 18 }},
	{"success-path", "03-verified-never", "a record naming another path than the fetch returned",
		func(ev *Evidence, obs map[string]any) { first(obs, "records")["fetchedPath"] = "elsewhere.wav" }},
	{"decoded-bytes", "03-verified-never", "saved octets that differ from the verified ones",
		func(ev *Evidence, obs map[string]any) {
			s := first(obs, "saves")
			b, _ := base64.StdEncoding.DecodeString(s["base64"].(string))
			b[0] ^= 1
			s["base64"] = base64.StdEncoding.EncodeToString(b)
		}},
	{"saved-mime", "13-observed-mime", "the record's type taken from testimony, not the bytes",
		func(ev *Evidence, obs map[string]any) { first(obs, "records")["verifiedMimeType"] = "text/plain" }},
	{"digest-verified", "03-verified-never", "a digest check that went unrecorded",
		func(ev *Evidence, obs map[string]any) { first(obs, "records")["digestVerified"] = false }},
	{"storage-from-id", "14-path-label", "a storage name built from the server's label",
		func(ev *Evidence, obs map[string]any) {
			s := first(obs, "saves")
			s["name"] = "../" + s["name"].(string)
		}},
	{"abort-stream", "10-stream-ceiling", "a continuing stream read to its end before the ceiling was applied",
		func(ev *Evidence, obs map[string]any) { ev.Network.ChunksSent = ev.Case.Response.Stream.Chunks }},
	{"unchanged", "04-claim-over-ceiling", "a refused fetch that rewrote the stub",
		func(ev *Evidence, obs map[string]any) {
			a := obj(obs, "after")
			a["history"] = a["history"].(string) + " (refused)"
		}},
	{"registry-stable", "20-eviction-and-unknown", "a second registration of a live uri given a new id",
		func(ev *Evidence, obs map[string]any) { obs["stableId"] = "ref_second" }},
	{"registry-distinct-ids", "20-eviction-and-unknown", "an id handed out twice",
		func(ev *Evidence, obs map[string]any) {
			ids := obs["ids"].([]any)
			obs["ids"] = append(ids, ids[1])
		}},
	{"registry-evicted-miss", "20-eviction-and-unknown", "an evicted id that still resolves",
		func(ev *Evidence, obs map[string]any) {
			obs["evicted"] = map[string]any{"refId": obs["firstId"], "testimony": map[string]any{}}
		}},
	{"registry-touched-held", "20-eviction-and-unknown", "a recently used record evicted (the case given touchAfter)",
		func(ev *Evidence, obs map[string]any) { k := 5; ev.Case.TouchAfter = &k }},
	{"registry-fresh-id", "20-eviction-and-unknown", "an evicted id reused for the same uri",
		func(ev *Evidence, obs map[string]any) { obj(obs, "fresh")["refId"] = obs["firstId"] }},
	{"registry-fresh-uri", "20-eviction-and-unknown", "a fresh record holding another uri",
		func(ev *Evidence, obs map[string]any) {
			obj(obs, "fresh")["testimony"] = map[string]any{"uri": "https://elsewhere.example/x"}
		}},
	{"registry-unknown-miss", "20-eviction-and-unknown", "a never-issued id that resolves",
		func(ev *Evidence, obs map[string]any) {
			obs["unknown"] = map[string]any{"refId": "ref_unknown_fixture", "testimony": map[string]any{}}
		}},
	{"registry-hidden", "20-eviction-and-unknown", "an unknown-reference error quoting the uri",
		func(ev *Evidence, obs map[string]any) {
			e := obj(obs, "unknownError")
			e["error"] = e["error"].(string) + " " + ev.Case.Expect.Hidden[0]
		}},
}

// TestJudgeCatchesEachBreakage shows that no check is a rubber stamp: for
// every check the judge has, one perturbation of a passing case makes that
// check, and only that check, report a problem.
func TestJudgeCatchesEachBreakage(t *testing.T) {
	f := loadBundled(t)
	covered := map[string]bool{}
	var ids []string
	for _, p := range perturbations {
		covered[p.check] = true
		ids = append(ids, p.caseID)
	}
	for _, name := range Checks() {
		if !covered[name] {
			t.Errorf("check %q has no perturbation showing it can fail", name)
		}
	}
	good := evidence(t, f, ids)
	for _, p := range perturbations {
		t.Run(p.check, func(t *testing.T) {
			ev := good[p.caseID]
			ev.Case = cloneCase(t, ev.Case)
			ev.Network.OriginAuth = slices.Clone(ev.Network.OriginAuth)
			ev.Network.OtherAuth = slices.Clone(ev.Network.OtherAuth)
			var obs map[string]any
			if err := json.Unmarshal(ev.Observation, &obs); err != nil {
				t.Fatal(err)
			}
			p.edit(&ev, obs)
			raw, err := json.Marshal(obs)
			if err != nil {
				t.Fatal(err)
			}
			ev.Observation = raw
			probs := Judge(ev)
			var got []string
			for _, pr := range probs {
				if !slices.Contains(got, pr.Check) {
					got = append(got, pr.Check)
				}
			}
			if !slices.Equal(got, []string{p.check}) {
				t.Errorf("%s (%s): the judge reported %v, want exactly [%s]; problems: %v", p.caseID, p.why, got, p.check, probs)
			}
		})
	}
}

// cloneCase copies a case deeply enough that a perturbation's edits stay
// its own.
func cloneCase(t *testing.T, c vectors.Case) vectors.Case {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out vectors.Case
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRunRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"mcpl-bulk-references-9","cases":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, _, err := Run(context.Background(), RunOptions{Files: []string{bad}}, &out); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("Run on an unknown format: err = %v", err)
	}
	if _, _, err := Run(context.Background(), RunOptions{Only: []string{"no-such-case"}}, &out); err == nil {
		t.Error("an -only id naming no case must be an error")
	}
}
