package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcplrefs/refcore/label"
	"github.com/mcplrefs/refcore/refs"
)

// ToolName is the name the fetch tool is offered to the model under.
const ToolName = "fetch_reference"

const toolDescription = "Fetch the content behind a reference the conversation shows as a stub, such as " +
	"[ref_… \"take.wav\" audio/wav, claimed 1.2 MB, from …]. Pass the stub's id. The host downloads the " +
	"content from the server that sent the reference, checks its size and digest, and saves it; the answer " +
	"says where the copy was saved, with its verified size and type, or why it could not be fetched and " +
	"what might help. Pass maxBytes to allow a larger download than the default."

var toolSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"id":{"type":"string","description":"The reference id from a stub, such as ref_k2m4p6r8t0v2x."},` +
	`"maxBytes":{"type":"integer","minimum":0,"description":"The most bytes to download; zero or absent means the host's default."}` +
	`},"required":["id"],"additionalProperties":false}`)

// Tool is the fetch tool a host offers the model: its name, description
// and input schema, and a handler that looks the id up, fetches, and
// words the answer. Everything it answers is safe to show to the model.
// Get one from [Fetcher.Tool]; the zero Tool is not usable.
type Tool struct {
	f *Fetcher
}

// Tool returns the fetch tool for this fetcher.
func (f *Fetcher) Tool() Tool { return Tool{f: f} }

// Name returns [ToolName].
func (Tool) Name() string { return ToolName }

// Description returns the tool's description for the model.
func (Tool) Description() string { return toolDescription }

// InputSchema returns the JSON schema of the tool's arguments: an object
// with a required string "id" and an optional integer "maxBytes" of zero
// or more. The caller owns the returned bytes.
func (Tool) InputSchema() json.RawMessage { return bytes.Clone(toolSchema) }

// Handle runs one call of the tool with its raw JSON arguments and returns
// the text to give the model and whether it reports an error. It answers
// malformed arguments, an unknown id and every failure in words, never
// with a Go error; the operator's log has the detail.
func (t Tool) Handle(ctx context.Context, args json.RawMessage) (text string, isError bool) {
	id, maxBytes, problem := parseToolArgs(args)
	if problem != "" {
		return "couldn't fetch: " + problem + ". Pass {\"id\": \"ref_…\"}, with the id from a stub, and optionally \"maxBytes\".", true
	}
	res, err := t.f.Fetch(ctx, id, Request{MaxBytes: maxBytes})
	var fail *Failure
	switch {
	case err == nil:
		return "fetched " + label.Display(id, 80) + ": " + res.Summary(), false
	case errors.Is(err, refs.ErrUnknownReference):
		return err.Error() + ": this host holds no reference by that id; ids come from the stubs shown in this conversation, and an old one may have been let go.", true
	case errors.As(err, &fail):
		return fail.Sentence(id), true
	}
	return "couldn't fetch " + label.Display(id, 80) + ": the host failed in an unexpected way.", true
}

// parseToolArgs reads {"id": string, "maxBytes": integer >= 0}, strictly:
// no other key, no key twice, and maxBytes a JSON number, not a string.
func parseToolArgs(args json.RawMessage) (id string, maxBytes int64, problem string) {
	const notObject = "the arguments are not a JSON object with only \"id\" and \"maxBytes\""
	fields, ok := objectFields(args)
	if !ok {
		return "", 0, notObject
	}
	for k := range fields {
		if k != "id" && k != "maxBytes" {
			return "", 0, notObject
		}
	}
	if err := json.Unmarshal(fields["id"], &id); err != nil || id == "" {
		return "", 0, "the arguments name no \"id\""
	}
	raw, has := fields["maxBytes"]
	if !has {
		return id, 0, ""
	}
	var n json.Number
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &n) != nil {
		return "", 0, "\"maxBytes\" is not a number"
	}
	maxBytes, err := n.Int64()
	if err != nil {
		// Past int64, or written with a point or an exponent: read from
		// the digits, since a float64 rounds 1e-400 to zero and
		// 10.000000000000000001 to ten. A whole number past int64 asks
		// for more than the host ceiling, which Fetch then applies.
		v, whole := wholeNumber(string(n))
		if !whole {
			return "", 0, "\"maxBytes\" is not a whole number of bytes"
		}
		maxBytes = v
	}
	if maxBytes < 0 {
		return "", 0, "\"maxBytes\" is negative"
	}
	return id, maxBytes, ""
}

// wholeNumber reads the JSON number s exactly: whether it has an integer
// value and, if so, that value, held at the int64 bounds. The value is
// the number's significant digits times a power of ten; it is whole when
// that power, once the digits' own trailing zeros are counted in, is not
// negative.
func wholeNumber(s string) (v int64, whole bool) {
	neg := strings.HasPrefix(s, "-")
	held := int64(math.MaxInt64)
	if neg {
		held = math.MinInt64
	}
	mant, exp, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(s, "-")), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	lead := strings.TrimLeft(intPart+frac, "0")
	digits := strings.TrimRight(lead, "0")
	if digits == "" {
		return 0, true // zero, however written
	}
	power := len(lead) - len(digits) - len(frac)
	if exp != "" {
		e, err := strconv.ParseInt(exp, 10, 32)
		if err != nil { // past ±2^31, far beyond the digits either way
			if strings.HasPrefix(exp, "-") {
				return 0, false
			}
			return held, true
		}
		power += int(e)
	}
	switch {
	case power < 0:
		return 0, false
	case len(digits)+power > 19: // at least 10^19, past int64
		return held, true
	}
	u, _ := strconv.ParseUint(digits+strings.Repeat("0", power), 10, 64)
	if u > math.MaxInt64 {
		return held, true
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// objectFields reads one JSON object into its members, refusing anything
// else: trailing data, or a key given twice (a reader would have to pick
// one, and the model may have meant the other).
func objectFields(data []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return nil, false
		}
		if _, dup := fields[key]; dup {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fields[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return fields, true
}
