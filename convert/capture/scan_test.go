package capture

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// emitted is what a stream handed on: each text, or a mark for a text too
// large, with the id and method noted on the way.
type emitted struct {
	text, id, method string
	over             bool
}

func collect(dst *[]emitted) func(*jsonScan) {
	return func(s *jsonScan) {
		*dst = append(*dst, emitted{text: string(s.buf), id: string(s.id), method: string(s.method), over: s.over})
	}
}

// alike is f as an SSE stream's emit that finds every text read alike by
// the SDKs.
func alike(f func(*jsonScan)) func(*jsonScan) bool {
	return func(s *jsonScan) bool {
		f(s)
		return true
	}
}

// splits feeds input to a fresh stream whole, byte by byte, and cut at
// every position, and checks that each way hands on the same texts.
func splits(t *testing.T, input string, run func(parts [][]byte) []emitted) []emitted {
	t.Helper()
	whole := run([][]byte{[]byte(input)})
	var bytewise [][]byte
	for i := range len(input) {
		bytewise = append(bytewise, []byte{input[i]})
	}
	check := func(how string, got []emitted) {
		t.Helper()
		if len(got) != len(whole) {
			t.Fatalf("%s: %d texts, whole: %d", how, len(got), len(whole))
		}
		for i := range got {
			if got[i] != whole[i] {
				t.Fatalf("%s: text %d is %+v, whole: %+v", how, i, got[i], whole[i])
			}
		}
	}
	check("byte by byte", run(bytewise))
	for cut := 1; cut < len(input); cut++ {
		check("cut", run([][]byte{[]byte(input[:cut]), []byte(input[cut:])}))
	}
	return whole
}

func runJSON(max int) func([][]byte) []emitted {
	return func(parts [][]byte) []emitted {
		var got []emitted
		f := newJSONStream(max, collect(&got))
		for _, p := range parts {
			f.write(p)
		}
		return got
	}
}

func runSSE(max int) func([][]byte) []emitted {
	return func(parts [][]byte) []emitted {
		var got []emitted
		f := newSSEStream(max, alike(collect(&got)), nil)
		for _, p := range parts {
			f.write(p)
		}
		f.end()
		return got
	}
}

func TestJSONStream(t *testing.T) {
	input := "  \n" +
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a } ] { [ \" \\ \u00e9"}]}}` + "\n" +
		"a line that is not JSON {\"id\":5}\n" +
		`{"method":"notifications/message","params":{"data":[1,[2,{"id":3}]]}}` +
		`[{"jsonrpc":"2.0","id":"b\"2","result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]` + "\r\n" +
		`{ "id" : -4.5e1 , "method" : "x\/y" }` +
		`{"id":true,"method":{"a":1},"key\"id":7}` +
		`{"unfinished":`
	got := splits(t, input, runJSON(1<<20))
	want := []emitted{
		{text: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a } ] { [ \" \\ \u00e9"}]}}`, id: "1"},
		{text: `{"method":"notifications/message","params":{"data":[1,[2,{"id":3}]]}}`, method: `"notifications/message"`},
		{text: `[{"jsonrpc":"2.0","id":"b\"2","result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]`},
		{text: `{ "id" : -4.5e1 , "method" : "x\/y" }`, id: "-4.5e1", method: `"x\/y"`},
		{text: `{"id":true,"method":{"a":1},"key\"id":7}`, id: "true"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d texts: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("text %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// A text past the bound is handed on as a mark, with its id and method,
// and the stream goes on with the next text.
func TestJSONStreamOver(t *testing.T) {
	input := `{"method":"m","params":"` + strings.Repeat("x", 100) + `","id":"late"}` + "\n" + `{"id":2}`
	got := splits(t, input, runJSON(64))
	if len(got) != 2 || !got[0].over || got[0].id != `"late"` || got[0].method != `"m"` || got[0].text != "" {
		t.Fatalf("got %+v", got)
	}
	if got[1] != (emitted{text: `{"id":2}`, id: "2"}) {
		t.Errorf("the next text: %+v", got[1])
	}
}

// Ids and methods longer than the note bound are not noted.
func TestJSONStreamLongNote(t *testing.T) {
	long := `"` + strings.Repeat("i", noteMax+5) + `"`
	got := splits(t, `{"id":`+long+`,"method":`+long+`,"`+strings.Repeat("k", 300)+`":1}`, runJSON(1<<20))
	if len(got) != 1 || got[0].id != "" || got[0].method != "" {
		t.Fatalf("got %+v", got)
	}
}

func TestSSEStream(t *testing.T) {
	input := "data: {\"id\":1}\n\n" +
		": a comment with data: {\"id\":9}\n" +
		"event: message\r\nid: 7\r\nretry: 10\r\ndata:{\"id\":2,\r\ndata: \"method\":\"m\"}\r\n\r\n" +
		"data: {\"id\":3}\r\n\r\n" +
		"event: empty\n\n" +
		"data: {\"id\":4}\n\n" +
		"datum: {\"id\":8}\n" +
		"data:  {\"id\":5}\n\n" +
		"data: {\"id\":6}\n"
	got := splits(t, input, runSSE(1<<20))
	want := []emitted{
		{text: `{"id":1}`, id: "1"},
		{text: "{\"id\":2,\n\"method\":\"m\"}", id: "2", method: `"m"`},
		{text: `{"id":3}`, id: "3"},
		{text: `{"id":4}`, id: "4"},
		{text: ` {"id":5}`, id: "5"},
		{text: `{"id":6}`, id: "6"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestSSEStreamEventTypes: only events of type "message", the type of an
// event that names none, are handed on as messages; the last "event"
// field of an event sets its type, wherever it stands, and white space
// around the type is trimmed, as both SDKs trim it.
func TestSSEStreamEventTypes(t *testing.T) {
	input := "event: decoy\ndata: {\"id\":1}\n\n" +
		"event: message\ndata: {\"id\":2}\n\n" +
		"data: {\"id\":3}\nevent: other\n\n" +
		"event: other\nevent: message\ndata: {\"id\":4}\n\n" +
		"event:message\r\ndata: {\"id\":5}\r\n\r\n" +
		"event: messages\ndata: {\"id\":6}\n\n" +
		"event: Message\ndata: {\"id\":7}\n\n" +
		"event: \ndata: {\"id\":9}\n\n" +
		"event: a-much-longer-type-than-message\ndata: {\"id\":10}\n\n" +
		"data: {\"id\":11}\n\n" +
		"event: message \ndata: {\"id\":12}\n\n" +
		"event:\tmessage\ndata: {\"id\":13}\n\n" +
		"event:   message\t \ndata: {\"id\":14}\n\n"
	var ids []string
	for _, e := range splits(t, input, runSSE(1<<20)) {
		ids = append(ids, e.id)
	}
	if want := []string{"2", "4", "5", "9", "11", "12", "13", "14"}; !slices.Equal(ids, want) {
		t.Errorf("handed on ids %v; want %v", ids, want)
	}
}

// TestSSEStreamDiverges: after a line the SDKs read apart from each
// other or from the capture, they may read other events than the capture,
// so the event it stands in and every later one are handed to other, not
// read as messages. The event-stream format ends a line at a lone
// carriage return, where the SDKs split lines at line feeds only; a line
// with no colon is a field with an empty value for the format, the end of
// the stream for go-sdk, and nothing for mcp-go; a last line without a
// line break is read by go-sdk and dropped by mcp-go.
func TestSSEStreamDiverges(t *testing.T) {
	for _, input := range []string{
		"data: {\"id\":1}\n\nx\rdata: {\"id\":2}\n\ndata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\ndata: {\"id\":2,\r\"result\":{}}\n\ndata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\ndata: {\"id\":2}\r\rdata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\ndata\ndata: {\"id\":2}\n\ndata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\nevent\ndata: {\"id\":2}\n\ndata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\ndata: {\"id\":2}\ngarbage\n\ndata: {\"id\":3}\n\n",
		"data: {\"id\":1}\n\ndata: {\"id\":2}\r\nid\r\n\r\ndata: {\"id\":3}\r\n\r\n",
		// A last line left without a line break: go-sdk reads it,
		// mcp-go drops it.
		"data: {\"id\":1}\n\ndata: {\"id\":3}",
		"data: {\"id\":1}\n\ndata: {\"id\":3}\r",
		"data: {\"id\":1}\n\ndata: {\"id\":3}\nid: 4",
	} {
		var messages, others []emitted
		f := newSSEStream(1<<20, alike(collect(&messages)), collect(&others))
		f.write([]byte(input))
		f.end()
		if len(messages) != 1 || messages[0].id != "1" || len(others) == 0 || others[len(others)-1].id != "3" {
			t.Errorf("%q: messages %+v, others %+v; want only the first as a message", input, messages, others)
		}
	}
}

// A byte order mark at the start of a stream is not taken off, as
// neither SDK takes it off: it begins the first field's name, so that
// field is not data.
func TestSSEStreamKeepsBOM(t *testing.T) {
	got := splits(t, "\xEF\xBB\xBFdata: {\"id\":1}\n\ndata: {\"id\":2}\n\n", runSSE(1<<20))
	if len(got) != 1 || got[0].id != "2" {
		t.Fatalf("got %+v", got)
	}
}

// A stream that starts with part of a byte order mark keeps those bytes
// as the first field's name.
func TestSSEStreamNotABOM(t *testing.T) {
	got := splits(t, "\xEFdata: {\"id\":1}\n\ndata: {\"id\":2}\n\n", runSSE(1<<20))
	if len(got) != 1 || got[0].id != "2" {
		t.Fatalf("got %+v", got)
	}
}

func TestSSEStreamOver(t *testing.T) {
	input := "data: {\"result\":\"" + strings.Repeat("y", 200) + "\",\ndata: \"id\":11}\n\ndata: {\"id\":12}\n\n"
	got := splits(t, input, runSSE(64))
	if len(got) != 2 || !got[0].over || got[0].id != "11" || got[1].id != "12" || got[1].over {
		t.Fatalf("got %+v", got)
	}
}

// TestScansLinear pins that following a stream costs one pass over each
// write, however the server shapes it. Searching the rest of a write for
// the next quote at every escape, or for the next line feed at every
// line a lone carriage return ends, took time quadratic in the write:
// about 9 s per MiB-sized read of such a body, and minutes for the 8 MiB
// writes here, which would run past any test timeout.
func TestScansLinear(t *testing.T) {
	const n = 8 << 20
	escapes := `{"id":1,"result":{"s":"` + strings.Repeat(`\\`, n/2) + `"}}`
	crLines := strings.Repeat(":\r", n/2) + "\ndata: {\"id\":2}\n\n"
	for _, tt := range []struct {
		name, input string
		run         func([][]byte) []emitted
		id          string
	}{
		{"json-escapes", escapes + "\n", runJSON(64 << 20), "1"},
		{"sse-escapes", "data: " + escapes + "\n\n", runSSE(64 << 20), "1"},
		{"sse-lone-cr-comments", crLines, runSSE(64 << 20), ""},
		{"sse-lone-cr-data", strings.Repeat("data:\r", n/6) + "\n\n", runSSE(64 << 20), ""},
	} {
		got := tt.run([][]byte{[]byte(tt.input)})
		if tt.id != "" && (len(got) != 1 || got[0].id != tt.id) {
			t.Errorf("%s: handed on %d texts; want the one message with id %s", tt.name, len(got), tt.id)
		}
	}
}

// FuzzStreams checks that however the bytes arrive, both streams hand on
// the same texts, and never fail.
func FuzzStreams(f *testing.F) {
	f.Add([]byte("data: {\"id\":1}\r\n\r\n{\"id\":2}\n"), uint16(3), uint8(40))
	f.Add([]byte("{\"a\":\"\\\"}\",\"id\":[1]}\n[{}]"), uint16(9), uint8(8))
	f.Add([]byte("\xEF\xBB\xBF: x\ndata\n\n"), uint16(1), uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, max uint8) {
		at := int(cut) % (len(data) + 1)
		for _, run := range []func([][]byte) []emitted{runJSON(int(max) + 1), runSSE(int(max) + 1)} {
			whole := run([][]byte{data})
			split := run([][]byte{data[:at], data[at:]})
			if len(whole) != len(split) {
				t.Fatalf("whole %d texts, split %d", len(whole), len(split))
			}
			for i := range whole {
				if whole[i] != split[i] {
					t.Fatalf("text %d: whole %+v, split %+v", i, whole[i], split[i])
				}
				if !whole[i].over && len(whole[i].text) > int(max)+1 {
					t.Fatalf("text %d of %d bytes passed the bound", i, len(whole[i].text))
				}
			}
		}
		// Whatever the bytes, the capture reads them without failing.
		tap := New(Options{MaxBytes: int(max) + 1})
		r, w := tap.Stdio(bytes.NewReader(data), &bytes.Buffer{})
		w.Write(data)
		buf := make([]byte, 3)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	})
}
