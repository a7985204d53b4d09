package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestToolHandle pins the fetch tool's answers: a fetched copy in the
// stub's words, an unknown id, a failure's sentence, and malformed
// arguments, each answered in words (never a panic, never a Go error) and
// none carrying the reference's address, the server's origin or port, or
// the token.
func TestToolHandle(t *testing.T) {
	e := newEnv(t, body(wavBody, "audio/wav"))
	good := e.ref(serverName, blkURI("$ORIGIN/good?sig=topsecret", `,"sizeBytes":19,"digest":"`+wavDigest+`"`))
	expired := e.ref(serverName, blkURI("$ORIGIN/expired?sig=topsecret", `,"expiresAt":"2000-01-01"`))
	big := e.ref(serverName, blkURI("$ORIGIN/big?sig=topsecret", ""))
	_, expiredErr := e.fetch(context.Background(), expired, Request{})
	expiredFail := failureOf(t, expiredErr, CodeExpired)
	tool := e.f.Tool()
	id := func(rec string) string {
		b, _ := json.Marshal(rec)
		return string(b)
	}
	const malformed = "couldn't fetch: "
	tests := []struct {
		name    string
		args    string
		want    string // the whole answer, or a prefix when prefix is set
		prefix  bool
		isError bool
		// contains is what the answer must say besides.
		contains string
	}{
		{name: "fetched", args: `{"id":` + id(good.ID) + `}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		{name: "served-from-copy", args: `{"id":` + id(good.ID) + `,"maxBytes":0}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		{name: "unknown-id", args: `{"id":"ref_nothere"}`,
			want: `unknown reference: "ref_nothere"`, prefix: true, isError: true},
		{name: "failure", args: `{"id":` + id(expired.ID) + `}`,
			want: expiredFail.Sentence(expired.ID), isError: true},
		{name: "max-bytes-passed", args: `{"id":` + id(big.ID) + `,"maxBytes":10}`,
			want: "couldn't fetch " + big.ID + ": the ", prefix: true, isError: true, contains: "more than the 10 bytes this call allows"},
		{name: "max-bytes-exponent", args: `{"id":` + id(big.ID) + `,"maxBytes":1e1}`,
			want: "couldn't fetch " + big.ID + ": the ", prefix: true, isError: true, contains: "more than the 10 bytes this call allows"},
		{name: "not-json", args: `{"id":`, want: malformed, prefix: true, isError: true},
		{name: "empty", args: ``, want: malformed, prefix: true, isError: true},
		{name: "not-an-object", args: `["ref_x"]`, want: malformed, prefix: true, isError: true},
		{name: "two-objects", args: `{"id":"ref_x"} {"id":"ref_y"}`, want: malformed, prefix: true, isError: true},
		{name: "unknown-field", args: `{"id":"ref_x","uri":"http://elsewhere.example/"}`, want: malformed, prefix: true, isError: true},
		{name: "missing-id", args: `{"maxBytes":10}`, want: malformed, prefix: true, isError: true},
		{name: "empty-id", args: `{"id":""}`, want: malformed, prefix: true, isError: true},
		{name: "null", args: `null`, want: malformed, prefix: true, isError: true},
		{name: "id-not-a-string", args: `{"id":7}`, want: malformed, prefix: true, isError: true},
		{name: "negative-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":-1}`, want: malformed, prefix: true, isError: true, contains: "negative"},
		{name: "fractional-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":1.5}`, want: malformed, prefix: true, isError: true, contains: "whole number"},
		// Fractions too small or too fine for a float64 are still
		// fractions: 1e-400 must not read as zero (the default), nor
		// 10.000000000000000001 as 10.
		{name: "underflowing-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":1e-400}`, want: malformed, prefix: true, isError: true, contains: "whole number"},
		{name: "fine-fraction-max-bytes", args: `{"id":` + id(big.ID) + `,"maxBytes":10.000000000000000001}`, want: malformed, prefix: true, isError: true, contains: "whole number"},
		{name: "negative-fraction-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":-1e-400}`, want: malformed, prefix: true, isError: true, contains: "whole number"},
		{name: "whole-with-point", args: `{"id":` + id(big.ID) + `,"maxBytes":1000.000e-2}`,
			want: "couldn't fetch " + big.ID + ": the ", prefix: true, isError: true, contains: "more than the 10 bytes this call allows"},
		{name: "zero-with-exponent", args: `{"id":` + id(good.ID) + `,"maxBytes":0.0e-999}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		{name: "huge-exponent-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":1e99999999999999999999}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		// An exponent past what strconv.ParseFloat reads: this is 10.
		{name: "long-exponent-max-bytes", args: `{"id":` + id(big.ID) + `,"maxBytes":0.` + strings.Repeat("0", 100000) + `1e100002}`,
			want: "couldn't fetch " + big.ID + ": the ", prefix: true, isError: true, contains: "more than the 10 bytes this call allows"},
		{name: "tiny-exponent-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":1e-99999999999999999999}`, want: malformed, prefix: true, isError: true, contains: "whole number"},
		// A whole number past what int64 holds asks for more than the host
		// ceiling, which is what the call gets.
		{name: "huge-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":1e30}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		{name: "past-int64-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":99999999999999999999999}`,
			want: "fetched " + good.ID + ": saved at " + good.ID + ".wav (19 bytes verified, audio/wav, digest matched)"},
		{name: "huge-negative-max-bytes", args: `{"id":` + id(good.ID) + `,"maxBytes":-1e30}`, want: malformed, prefix: true, isError: true, contains: "negative"},
		{name: "max-bytes-as-string", args: `{"id":` + id(good.ID) + `,"maxBytes":"10"}`, want: malformed, prefix: true, isError: true, contains: "not a number"},
		{name: "duplicate-id", args: `{"id":"ref_nothere","id":` + id(good.ID) + `}`, want: malformed, prefix: true, isError: true},
		{name: "max-bytes-not-a-number", args: `{"id":` + id(good.ID) + `,"maxBytes":true}`, want: malformed, prefix: true, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := e.requests.Load()
			var (
				text    string
				isError bool
			)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Handle(%s) panicked: %v", tt.args, r)
					}
				}()
				text, isError = tool.Handle(context.Background(), json.RawMessage(tt.args))
			}()
			if isError != tt.isError {
				t.Errorf("Handle(%s) isError = %t, want %t: %s", tt.args, isError, tt.isError, text)
			}
			if tt.prefix && !strings.HasPrefix(text, tt.want) || !tt.prefix && text != tt.want {
				t.Errorf("Handle(%s) = %q, want %q", tt.args, text, tt.want)
			}
			if tt.want == malformed && e.requests.Load() != requests {
				t.Errorf("malformed arguments made a request")
			}
			if !strings.Contains(text, tt.contains) {
				t.Errorf("Handle(%s) = %q, want it to say %q", tt.args, text, tt.contains)
			}
			for _, rec := range []refs.Record{good, expired, big} {
				e.assertModelSafe(rec, "answer", text)
			}
			for _, s := range []string{"topsecret", token, e.srv.URL, e.host()} {
				if strings.Contains(text, s) {
					t.Errorf("answer %q carries %q", text, s)
				}
			}
		})
	}
}

// TestToolDescribed pins the tool's name, description and schema, and
// that the schema's bytes are the caller's.
func TestToolDescribed(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	tool := e.f.Tool()
	if tool.Name() != "fetch_reference" || tool.Name() != ToolName {
		t.Errorf("Name = %q", tool.Name())
	}
	if d := tool.Description(); d == "" || strings.ContainsAny(d, "\n\r") {
		t.Errorf("Description = %q, want one non-empty line", d)
	}
	schema := tool.InputSchema()
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("InputSchema is not JSON: %v", err)
	}
	if s.Type != "object" || len(s.Properties) != 2 || s.Properties["id"] == nil || s.Properties["maxBytes"] == nil ||
		len(s.Required) != 1 || s.Required[0] != "id" || s.Additional == nil || *s.Additional {
		t.Errorf("InputSchema = %s", schema)
	}
	for i := range schema {
		schema[i] = 'x'
	}
	if again := tool.InputSchema(); bytes.Contains(again, []byte("xxx")) || !json.Valid(again) {
		t.Errorf("changing the returned schema changed the tool's: %s", again)
	}
}

// TestClausesWithholdURIInServerName pins L1 and S2 for the name a host
// gives a server: a host that names its servers by their connection URL,
// which may carry a key, gets "[uri withheld]" for it in a stub's
// provenance, and must get the same in the refusal the same stub shows and
// in the fetch tool's answer, never the key.
func TestClausesWithholdURIInServerName(t *testing.T) {
	ctx := t.Context()
	for _, name := range []string{
		"https://mcp.example/mcp?api_key=SERVER-KEY",
		"studio at ht\u200btps://mcp.example/mcp?api_key=SERVER-KEY",
	} {
		reg, err := refs.New(refs.Config{})
		if err != nil {
			t.Fatal(err)
		}
		servers := ServersFunc(func(string) (Server, error) { return Server{}, CodeUnknownServer })
		f, err := New(reg, servers, NewMemoryStore(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := convert.New(reg, convert.Policy{Refusal: f.Refusal})
		if err != nil {
			t.Fatal(err)
		}
		ct := conv.Ingest(ctx, []json.RawMessage{json.RawMessage(`{"type":"resource","uri":"https://mcp.example/files/a.wav","name":"a.wav"}`)},
			convert.Source{Server: name, Tool: "render"})
		history := ct.History()
		if !strings.Contains(history, "not fetchable") || strings.Contains(history, "SERVER-KEY") {
			t.Errorf("S2: the stub's refusal shows the uri in the server's name %q:\n%s", name, history)
		}
		answer, _ := f.Tool().Handle(ctx, json.RawMessage(`{"id":"`+ct.IDs()[0]+`"}`))
		if !strings.Contains(answer, "[uri withheld]") || strings.Contains(answer, "SERVER-KEY") {
			t.Errorf("S2: the fetch tool's answer for server %q:\n%s", name, answer)
		}
	}
}

// TestWholeNumber reads whole numbers, and their values, from the digits
// of JSON numbers, where a float64 would round or give up (F5).
func TestWholeNumber(t *testing.T) {
	zeros := strings.Repeat("0", 100000)
	for _, tt := range []struct {
		in    string
		v     int64
		whole bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"0.0e-999", 0, true}, {"10", 10, true}, {"1.0", 1, true},
		{"10e-1", 1, true}, {"1E2", 100, true}, {"1e+2", 100, true}, {"5e-0", 5, true},
		{"123.4500e2", 12345, true}, {"0.001e3", 1, true}, {"-7", -7, true},
		{"9223372036854775807", math.MaxInt64, true}, {"9223372036854775808", math.MaxInt64, true},
		{"1e30", math.MaxInt64, true}, {"-1e30", math.MinInt64, true},
		{"1e99999999999999999999", math.MaxInt64, true},
		// Exponents past what strconv.ParseFloat reads.
		{"0." + zeros + "1e100001", 1, true},
		{"0." + zeros + "1024e100004", 1024, true},
		{"1" + zeros + "e-100000", 1, true},
		{"1.5", 0, false}, {"1e-1", 0, false}, {"123.4500e1", 0, false}, {"1e-400", 0, false},
		{"-1e-400", 0, false}, {"10.000000000000000001", 0, false}, {"0.00100e2", 0, false},
		{"1e-99999999999999999999", 0, false},
	} {
		if v, whole := wholeNumber(tt.in); v != tt.v || whole != tt.whole {
			t.Errorf("wholeNumber(%.40s) = %d, %v; want %d, %v", tt.in, v, whole, tt.v, tt.whole)
		}
	}
}
