package emit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
)

var testRef = Reference{
	URI: "https://studio.example/files/take1.wav", MimeType: "audio/wav", SizeBytes: size(19),
	Name: "take1.wav", Disposition: Never,
}

const testBlock = `{"type":"resource","uri":"https://studio.example/files/take1.wav","mimeType":"audio/wav","sizeBytes":19,"name":"take1.wav","disposition":"never"}`

func placeholder(t testing.TB, ref Reference) string {
	t.Helper()
	p, err := Placeholder(ref)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// toolResult is a JSON-RPC response to tools/call, as an SDK writes it,
// whose content is the given items.
func toolResult(id int, items ...string) string {
	return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"result":{"content":[` + strings.Join(items, ",") + `],"isError":false}}`
}

func text(s string) string {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return string(b)
}

func TestPlaceholderIsOpaque(t *testing.T) {
	a, b := placeholder(t, testRef), placeholder(t, testRef)
	if a == b {
		t.Error("two placeholders of one reference are equal")
	}
	for _, leak := range []string{"studio.example", "take1", "audio/wav", "never"} {
		if strings.Contains(a, leak) {
			t.Errorf("placeholder %q shows %q", a, leak)
		}
	}
	if block, ok := unseal(a); !ok || string(block) != testBlock {
		t.Errorf("unseal = %s, %v", block, ok)
	}
}

func TestRewriteMessage(t *testing.T) {
	p := placeholder(t, testRef)
	forged := placeholderText + "AAAA" + strings.Repeat("B", 80)
	altered := p[:len(p)-2] + "AA"
	if altered == p {
		altered = p[:len(p)-2] + "BB"
	}
	cases := []struct {
		name, in, want string
	}{
		{"one placeholder among text",
			toolResult(1, text("Rendered."), text(p), text("done")),
			toolResult(1, text("Rendered."), testBlock, text("done"))},
		{"white space and key order kept",
			"{ \"result\" : { \"isError\": false, \"content\" : [ " + text(p) + " ] }, \"id\": 7, \"jsonrpc\": \"2.0\" }\n",
			"{ \"result\" : { \"isError\": false, \"content\" : [ " + testBlock + " ] }, \"id\": 7, \"jsonrpc\": \"2.0\" }\n"},
		{"annotations and _meta kept",
			toolResult(2, `{"type":"text","text":"`+p+`","annotations":{"audience":["user"]},"_meta":{"k":1}}`),
			toolResult(2, strings.TrimSuffix(testBlock, "}")+`,"annotations":{"audience":["user"]},"_meta":{"k":1}}`)},
		{"a batch",
			"[" + toolResult(1, text(p)) + "," + toolResult(2, text("x")) + "," + toolResult(3, text(p)) + "]",
			"[" + toolResult(1, testBlock) + "," + toolResult(2, text("x")) + "," + toolResult(3, testBlock) + "]"},
		{"escaped placeholder text",
			toolResult(1, strings.Replace(text(p), "[", `\u005b`, 1)),
			toolResult(1, testBlock)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed := RewriteMessage([]byte(c.in))
			if !changed || string(got) != c.want {
				t.Errorf("RewriteMessage:\n got  %s (%v)\n want %s", got, changed, c.want)
			}
		})
	}
	unchanged := []struct{ name, in string }{
		{"no placeholder", toolResult(1, text("hello"))},
		{"forged", toolResult(1, text(forged))},
		{"altered", toolResult(1, text(altered))},
		{"inside a longer text", toolResult(1, text("see "+p))},
		{"in structuredContent", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"type":"text","text":"` + p + `"}}}`},
		{"in a request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"content":[` + text(p) + `]}}`},
		{"not a text block", toolResult(1, `{"type":"image","text":"`+p+`","data":""}`)},
		{"not JSON", `{"result":{"content":[` + text(p)},
	}
	for _, c := range unchanged {
		t.Run(c.name, func(t *testing.T) {
			got, changed := RewriteMessage([]byte(c.in))
			if changed || string(got) != c.in {
				t.Errorf("RewriteMessage changed it: %s", got)
			}
		})
	}
}

// fakeServer stands in for an MCP SDK's streamable-HTTP handler: it
// answers every request with the given messages, as one JSON body or as
// server-sent events, writing each in the given pieces and flushing after
// each event.
func fakeServer(contentType string, messages []string, pieces int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Mcp-Session-Id", "s1")
		var body []string
		if contentType == "application/json" {
			w.Header().Set("Content-Length", itoa(len(messages[0])))
			body = messages
		} else {
			for i, m := range messages {
				body = append(body, "event: message\nid: "+itoa(i)+"\ndata: "+m+"\n\n")
			}
		}
		w.WriteHeader(http.StatusOK)
		for _, b := range body {
			step := max(1, len(b)/pieces)
			for i := 0; i < len(b); i += step {
				_, _ = io.WriteString(w, b[i:min(len(b), i+step)])
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func post(t *testing.T, h http.Handler) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestHandlerJSON(t *testing.T) {
	p := placeholder(t, testRef)
	for _, pieces := range []int{1, 7} {
		resp, body := post(t, Handler(fakeServer("application/json", []string{toolResult(1, text("ok"), text(p))}, pieces)))
		want := toolResult(1, text("ok"), testBlock)
		if body != want {
			t.Errorf("body %s\nwant %s", body, want)
		}
		if resp.ContentLength != int64(len(want)) || resp.Header.Get("Mcp-Session-Id") != "s1" || resp.StatusCode != 200 {
			t.Errorf("length %d, headers %v, status %d", resp.ContentLength, resp.Header, resp.StatusCode)
		}
		assertBlocksValid(t, body)
	}
}

func TestHandlerEvents(t *testing.T) {
	p := placeholder(t, testRef)
	msgs := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		toolResult(1, text(p), text("and "+p)),
	}
	for _, pieces := range []int{1, 3, 50} {
		resp, body := post(t, Handler(fakeServer("text/event-stream", msgs, pieces)))
		want := "event: message\nid: 0\ndata: " + msgs[0] + "\n\n" +
			"event: message\nid: 1\ndata: " + toolResult(1, testBlock, text("and "+p)) + "\n\n"
		if body != want {
			t.Errorf("%d pieces: body\n%q\nwant\n%q", pieces, body, want)
		}
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("content type %q", resp.Header.Get("Content-Type"))
		}
	}
}

// TestHandlerSendsEachEventAtOnce reads a stream whose server blocks after
// the first event: the rewritten event must arrive before the handler
// returns, or a client would wait for a tool result that is already sent.
func TestHandlerSendsEachEventAtOnce(t *testing.T) {
	p := placeholder(t, testRef)
	release := make(chan struct{})
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+toolResult(1, text(p))+"\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(release)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := "data: " + toolResult(1, testBlock) + "\n\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != want {
		t.Errorf("first event %q, %v", got, err)
	}
}

// TestHandlerEventInPiecesLinear pins that an event written in many small
// pieces, as a buffered writer sends a large one, is searched for its end
// once: searching all that is held again at each piece took time
// quadratic in the event (3 s for 4 MB in 4 KiB pieces, and minutes for
// this test's 24 MiB, past any test timeout).
func TestHandlerEventInPiecesLinear(t *testing.T) {
	p := placeholder(t, testRef)
	// A long comment makes the event long and leaves the message short.
	comment := ": " + strings.Repeat("x", 24<<20) + "\n"
	in := comment + "data: " + toolResult(1, text(p)) + "\n\n"
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for rest := in; rest != ""; {
			n := min(4096, len(rest))
			_, _ = io.WriteString(w, rest[:n])
			rest = rest[n:]
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if want := comment + "data: " + toolResult(1, testBlock) + "\n\n"; rec.Body.String() != want {
		t.Errorf("the event came out as %d bytes, not rewritten as one event of %d", rec.Body.Len(), len(want))
	}
}

func TestEventShapes(t *testing.T) {
	p := placeholder(t, testRef)
	msg := toolResult(1, text(p))
	cut := strings.Index(msg, "[") + 1
	split := msg[:cut] + "\ndata:" + msg[cut:]
	rewritten := toolResult(1, testBlock)
	cases := []struct{ in, want string }{
		{"data: " + msg + "\r\n\r\n", "data: " + rewritten + "\n\n"},
		{": note\rretry: 5\rdata: " + msg + "\r\r", ": note\nretry: 5\ndata: " + rewritten + "\n\n"},
		{"id: 3\ndata: " + split + "\nevent: message\n\n", "id: 3\ndata: " + rewritten[:cut] + "\ndata: " + rewritten[cut:] + "\nevent: message\n\n"},
		{"data: " + msg + "\n", "data: " + msg + "\n"}, // never closed: sent as it is at the end
	}
	for _, c := range cases {
		h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			for i := 0; i < len(c.in); i++ {
				_, _ = w.Write([]byte{c.in[i]})
			}
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Body.String() != c.want {
			t.Errorf("in %q\n got %q\nwant %q", c.in, rec.Body.String(), c.want)
		}
	}
}

func TestHandlerPassesOtherResponses(t *testing.T) {
	p := placeholder(t, testRef)
	msg := toolResult(1, text(p))
	for _, h := range []http.Header{
		{"Content-Type": {"text/plain"}},
		{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}},
		{},
	} {
		rec := httptest.NewRecorder()
		Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range h {
				w.Header()[k] = v
			}
			_, _ = io.WriteString(w, msg)
		})).ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
		if rec.Body.String() != msg {
			t.Errorf("%v: body changed to %s", h, rec.Body.String())
		}
	}
	// A status without a body, as for an accepted notification.
	rec := httptest.NewRecorder()
	Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
	})).ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
		t.Errorf("202: got %d %q", rec.Code, rec.Body.String())
	}
}

func TestHandlerReleasesOversizedJSON(t *testing.T) {
	p := placeholder(t, testRef)
	big := toolResult(1, text(p), text(strings.Repeat("x", maxHeld)))
	rec := httptest.NewRecorder()
	Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, big[:len(big)/2])
		_, _ = io.WriteString(w, big[len(big)/2:])
	})).ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Body.String() != big {
		t.Error("an oversized JSON response was not passed through whole")
	}
}

// assertBlocksValid holds every reference block in a tool result body to
// the strict schema.
func assertBlocksValid(t *testing.T, body string) {
	t.Helper()
	var msg struct {
		Result struct{ Content []json.RawMessage }
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatal(err)
	}
	for _, c := range msg.Result.Content {
		if err := convert.Validate(c); err != nil {
			t.Errorf("%s: %v", c, err)
		}
		if bytes.Contains(c, []byte(placeholderTag)) {
			t.Errorf("a placeholder is left: %s", c)
		}
	}
}

// FuzzRewriteMessage feeds the rewrite arbitrary messages with a real
// placeholder spliced in: it never panics, leaves a message it does not
// change byte for byte as it was, and turns valid JSON into valid JSON
// with no placeholder of this process left in a result's content.
func FuzzRewriteMessage(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{"content":[%s]}}`)
	f.Add(`[{"result":{"content":[{"type":"text","text":"x"},%s]}},{"result":5}]`)
	f.Add(`{"result":{"content":[%s,%s],"content":[%s]}}`)
	f.Add(`{"result":{"content":[{"type":"text","text":"%s"}]}}`)
	p := text(placeholder(f, testRef))
	f.Fuzz(func(t *testing.T, shape string) {
		msg := []byte(strings.ReplaceAll(shape, "%s", p))
		orig := bytes.Clone(msg)
		got, changed := RewriteMessage(msg)
		if !bytes.Equal(msg, orig) {
			t.Fatal("RewriteMessage changed its input")
		}
		if !changed {
			if !bytes.Equal(got, msg) {
				t.Fatalf("unchanged, yet %q became %q", msg, got)
			}
			return
		}
		if json.Valid(msg) != json.Valid(got) {
			t.Fatalf("validity changed: %q became %q", msg, got)
		}
		if !bytes.Contains(got, []byte(`"type":"resource"`)) {
			t.Fatalf("changed without a block: %q", got)
		}
	})
}
