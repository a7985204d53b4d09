package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// shapeProblems is the judge's first check.
var shapeProblems = ValidateObservation

// ValidateObservation checks an observation's JSON against the observer
// contract's shape: the keys it must have, their types, and that absent
// values are left out rather than written as null where the contract says
// so. It returns what is wrong, or nothing.
func ValidateObservation(op string, raw json.RawMessage) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return []string{"observation is not a JSON object: " + err.Error()}
	}
	if op == vectors.OpRegistry {
		for _, k := range []string{"firstId", "stableId", "ids", "fresh", "evicted", "unknown", "evictedError", "unknownError"} {
			if _, ok := top[k]; !ok {
				bad("registry observation lacks %q", k)
			}
		}
		return probs
	}
	need := []string{"parsed", "before", "records"}
	if op == vectors.OpFetch {
		need = append(need, "outcome", "saves", "after")
	}
	for _, k := range need {
		if _, ok := top[k]; !ok {
			bad("observation lacks %q", k)
		}
	}
	var parsed []map[string]json.RawMessage
	if err := json.Unmarshal(top["parsed"], &parsed); err != nil {
		bad("parsed is not a list of objects")
	}
	kinds := map[string]bool{"text": true, "inline": true, "reference": true, "embedded": true, "invalid": true, "unknown": true}
	for i, p := range parsed {
		var kind string
		if json.Unmarshal(p["kind"], &kind) != nil || !kinds[kind] {
			bad("parsed[%d].kind is %s", i, p["kind"])
		}
		for _, k := range []string{"testimony", "rejectedFields", "schemaValid"} {
			if _, ok := p[k]; !ok {
				bad("parsed[%d] lacks %q", i, k)
			}
		}
		noNulls(p["testimony"], fmt.Sprintf("parsed[%d].testimony", i), bad)
	}
	for _, view := range []string{"before", "after"} {
		v, ok := top[view]
		if !ok {
			continue
		}
		var vs map[string]json.RawMessage
		if json.Unmarshal(v, &vs) != nil {
			bad("%s is not an object", view)
			continue
		}
		var push []any
		if json.Unmarshal(vs["push"], &push) != nil {
			bad("%s.push is not a list", view)
		}
		for _, k := range []string{"wake", "history"} {
			var s string
			if json.Unmarshal(vs[k], &s) != nil {
				bad("%s.%s is not a string", view, k)
			} else if strings.HasSuffix(s, "\n") {
				bad("%s.%s ends with a newline", view, k)
			}
		}
	}
	if saves, ok := top["saves"]; ok {
		var list []map[string]json.RawMessage
		if bytes.Equal(bytes.TrimSpace(saves), []byte("null")) || json.Unmarshal(saves, &list) != nil {
			bad("saves is not a list of objects")
		}
	}
	var records []map[string]json.RawMessage
	if json.Unmarshal(top["records"], &records) != nil {
		bad("records is not a list of objects")
	}
	for i, r := range records {
		var id string
		if json.Unmarshal(r["refId"], &id) != nil || !strings.HasPrefix(id, "ref_") {
			bad("records[%d].refId is %s", i, r["refId"])
		}
		var never bool
		if json.Unmarshal(r["neverMarked"], &never) != nil {
			bad("records[%d].neverMarked is not a boolean", i)
		}
		noNullKeys(r, fmt.Sprintf("records[%d]", i), bad)
	}
	if o, ok := top["outcome"]; ok {
		var out map[string]json.RawMessage
		if json.Unmarshal(o, &out) != nil {
			bad("outcome is not an object")
		} else {
			var okv bool
			if json.Unmarshal(out["ok"], &okv) != nil {
				bad("outcome.ok is not a boolean")
			}
			noNulls(o, "outcome", bad)
		}
	}
	return probs
}

// noNulls reports every null member of the object raw, if it is one.
func noNulls(raw json.RawMessage, where string, bad func(string, ...any)) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		noNullKeys(m, where, bad)
	}
}

// noNullKeys reports every null member of an object already decoded.
func noNullKeys(m map[string]json.RawMessage, where string, bad func(string, ...any)) {
	for k, v := range m {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			bad("%s.%s is null; an absent value must be left out", where, k)
		}
	}
}
