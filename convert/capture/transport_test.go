package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The client reads exactly the bytes the server wrote, however the server
// splits them, and the call's blocks are captured by its context.
func TestTransportJSONAndSSE(t *testing.T) {
	for _, media := range []string{"application/json", "text/event-stream"} {
		for _, chunk := range []int{0, 1, 3, 17, 64} {
			t.Run(fmt.Sprintf("%s/chunk%d", media, chunk), func(t *testing.T) {
				f, srv := newFakeServer(t, media, chunk)
				tap := New(Options{})
				client := &http.Client{Transport: tap.Transport(nil)}
				ctx := WithCall(context.Background())
				got := post(t, client, ctx, srv.URL, toolCall("7", nil))
				if sent := f.sentFor("7"); !bytes.Equal(got, sent) {
					t.Fatalf("the client read %q, the server sent %q", got, sent)
				}
				res, err := tap.Take(ctx)
				wantBlocks(t, res.Content, err)
				if res.ID != "7" || res.Method != "tools/call" || res.IsError {
					t.Errorf("result %+v, want id 7, method tools/call, not an error", res)
				}
				if _, err := tap.Take(ctx); !errors.Is(err, ErrNotCaptured) {
					t.Errorf("a second Take: %v, want ErrNotCaptured", err)
				}
				if st := tap.Stats(); st.Pending != 0 || st.Dropped != 0 {
					t.Errorf("stats %+v, want nothing held or dropped", st)
				}
			})
		}
	}
}

// The server receives the request exactly as the client made it.
func TestTransportLeavesRequestAlone(t *testing.T) {
	f, srv := newFakeServer(t, "text/event-stream", 0)
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	body := toolCall("1", Meta(WithCall(context.Background())))
	post(t, client, WithCall(context.Background()), srv.URL, body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) != 1 || string(f.bodies[0]) != body {
		t.Fatalf("the server received %q, want %q", f.bodies, body)
	}
	h := f.headers[0]
	for k, v := range map[string]string{
		"Content-Type":         "application/json",
		"Accept":               "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2025-11-25",
		"Mcp-Session-Id":       "sess-1",
	} {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("header %s arrived as %q, want %q", k, got, v)
		}
	}
}

// A token in the request's _meta names the call when its context does
// not.
func TestTransportMetaToken(t *testing.T) {
	_, srv := newFakeServer(t, "application/json", 0)
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	call := WithCall(context.Background())
	post(t, client, context.Background(), srv.URL, toolCall(`"a1"`, Meta(call)))
	res, err := tap.Take(call)
	wantBlocks(t, res.Content, err)
	if res.ID != `"a1"` {
		t.Errorf("id %s, want \"a1\"", res.ID)
	}
}

// onlyReader hides what else a reader is, so that http.NewRequest sets no
// GetBody.
type onlyReader struct{ io.Reader }

// A request whose body cannot be read again is known by its context: the
// answer on its own stream goes to its call.
func TestTransportBlindRequest(t *testing.T) {
	f, srv := newFakeServer(t, "text/event-stream", 5)
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	ctx := WithCall(context.Background())
	body := toolCall("3", nil)
	got := postBody(t, client, ctx, srv.URL, onlyReader{strings.NewReader(body)})
	if sent := f.sentFor("3"); !bytes.Equal(got, sent) {
		t.Fatalf("the client read %q, the server sent %q", got, sent)
	}
	f.mu.Lock()
	arrived := string(f.bodies[0])
	f.mu.Unlock()
	if arrived != body {
		t.Fatalf("the server received %q, want %q", arrived, body)
	}
	blocks, err := tap.Blocks(ctx)
	wantBlocks(t, blocks, err)
}

// A request with no token leaves its result to be taken by id.
func TestTransportByID(t *testing.T) {
	_, srv := newFakeServer(t, "text/event-stream", 0)
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	post(t, client, context.Background(), srv.URL, toolCall("41", nil))
	post(t, client, context.Background(), srv.URL, toolCall("42", nil))
	post(t, client, context.Background(), srv.URL, toolCall(`"x"`, nil))
	if _, err := tap.TakeID("41"); !errors.Is(err, ErrNotCaptured) {
		t.Errorf("the string \"41\" is not the number 41: %v", err)
	}
	res, err := tap.TakeID(41)
	wantBlocks(t, res.Content, err)
	res, err = tap.TakeID(json.RawMessage(" 42 "))
	wantBlocks(t, res.Content, err)
	res, err = tap.TakeID("x")
	wantBlocks(t, res.Content, err)
	if _, err := tap.Take(context.Background()); !errors.Is(err, ErrNoCall) {
		t.Errorf("Take with no call: %v, want ErrNoCall", err)
	}
}

// A response that is not JSON or an event stream is handed on untouched.
func TestTransportOtherMedia(t *testing.T) {
	f, srv := newFakeServer(t, "text/plain", 0)
	f.answer = func(rpcRequest) string { return "not json at all {" }
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(toolCall("1", nil)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, ok := resp.Body.(*tapBody); ok {
		t.Error("a text/plain body was wrapped")
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "not json at all {" {
		t.Errorf("read %q", b)
	}
}

// Notifications on the background stream are queued with their content,
// the stream's bytes reach the client untouched, and an answer that comes
// on the background stream (as after a broken stream resumes) still goes
// to its call.
func TestTransportBackgroundStream(t *testing.T) {
	f, srv := newFakeServer(t, "text/event-stream", 4)
	// The POST's own stream closes without the answer.
	f.answer = func(rpcRequest) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	}
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "sess-1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 5)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				read <- b.Bytes()
				return
			}
		}
	}()

	ctx := WithCall(context.Background())
	post(t, client, ctx, srv.URL, toolCall("9", nil))
	if _, err := tap.Take(ctx); !errors.Is(err, ErrNotCaptured) {
		t.Fatalf("before the answer: %v", err)
	}
	push := `{"jsonrpc":"2.0","method":"notifications/mcpl/push","params":{"event":"take","content":[` + refBlock + `]}}`
	answer := `{"jsonrpc":"2.0","id":9,"result":{"content":[` + textBlock + "," + refBlock + `]}}`
	stream := "event: message\r\ndata: " + push + "\r\n\r\n: keep-alive\n\nid: 5\ndata: " + answer + "\n\n"
	f.push <- stream

	notes := tap.Notifications()
	var got []Notification
	for len(got) < 2 {
		select {
		case n := <-notes:
			got = append(got, n)
		case <-time.After(5 * time.Second):
			t.Fatalf("notifications: got %d, want 2", len(got))
		}
	}
	if got[0].Method != "notifications/progress" || got[0].Content != nil {
		t.Errorf("first notification %+v", got[0])
	}
	if got[1].Method != "notifications/mcpl/push" || len(got[1].Content) != 1 || string(got[1].Content[0]) != refBlock {
		t.Errorf("push notification %+v, want its reference block byte for byte", got[1])
	}
	if !strings.Contains(string(got[1].Params), `"event":"take"`) {
		t.Errorf("params %s", got[1].Params)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		blocks, err := tap.Blocks(ctx)
		if err == nil {
			wantBlocks(t, blocks, err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answer on the background stream was not captured: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.CloseClientConnections()
	if b := <-read; string(b) != stream {
		t.Errorf("the background stream read %q, the server sent %q", b, stream)
	}
}

// Many calls at once each get their own result.
func TestTransportConcurrentCalls(t *testing.T) {
	f, srv := newFakeServer(t, "text/event-stream", 9)
	f.answer = func(r rpcRequest) string {
		return `{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"content":[{"type":"text","text":"for ` + string(r.ID) + `"}]}}`
	}
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			ctx := WithCall(context.Background())
			id := strconv.Itoa(i)
			post(t, client, ctx, srv.URL, toolCall(id, nil))
			blocks, err := tap.Blocks(ctx)
			if err != nil || len(blocks) != 1 || string(blocks[0]) != `{"type":"text","text":"for `+id+`"}` {
				t.Errorf("call %s got %q, %v", id, blocks, err)
			}
		})
	}
	wg.Wait()
	if st := tap.Stats(); st.Pending != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A tool result that says isError is kept as it is.
func TestTransportIsError(t *testing.T) {
	f, srv := newFakeServer(t, "application/json", 0)
	f.answer = func(r rpcRequest) string {
		return `{"result":{"isError":true,"content":[` + textBlock + `]},"jsonrpc":"2.0","id":` + string(r.ID) + `}`
	}
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	ctx := WithCall(context.Background())
	post(t, client, ctx, srv.URL, toolCall("2", nil))
	res, err := tap.Take(ctx)
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Fatalf("result %+v, %v", res, err)
	}
}

// Each byte reaches the client as soon as the server has sent it: the
// server sends half an event and waits until the client has read that
// half before it sends the rest.
func TestTransportNoDelay(t *testing.T) {
	first := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res"
	rest := "ult\":{\"content\":[" + refBlock + "]}}\n\n"
	gotFirst := make(chan struct{})
	srv := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-gotFirst:
		case <-time.After(10 * time.Second):
			return
		}
		io.WriteString(w, rest)
	}))
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	ctx := WithCall(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(toolCall("1", nil)))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != first {
		t.Fatalf("the first half: %q, %v", buf, err)
	}
	close(gotFirst)
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != rest {
		t.Fatalf("the rest: %q, %v", b, err)
	}
	blocks, err := tap.Blocks(ctx)
	if err != nil || len(blocks) != 1 || string(blocks[0]) != refBlock {
		t.Fatalf("%q, %v", blocks, err)
	}
}

// TestAmbiguousAnswers: an SDK takes the first answer to a call, and the
// capture gives that one, except when the first came in an event-stream
// event of a type other than "message": go-sdk skips such an event and
// mcp-go reads it, so which answer the SDK took is not known, and the
// capture gives none.
func TestAmbiguousAnswers(t *testing.T) {
	result := func(block string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[` + block + `]}}`
	}
	decoy, real := result(textBlock), result(refBlock)
	for _, tt := range []struct {
		name, stream string
		want         error
		block        string
	}{
		{"decoy-first", "event: decoy\ndata: " + decoy + "\n\nevent: message\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"decoy-after", "data: " + real + "\n\nevent: decoy\ndata: " + decoy + "\n\n", nil, refBlock},
		{"lone-cr", "data: " + decoy + "\r\rdata: " + real + "\n\n", ErrAmbiguous, ""},
		{"colonless-line", "starting\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"colonless-line-after", "data: " + real + "\n\nstarting\ndata: " + decoy + "\n\n", nil, refBlock},
		{"two-messages", "data: " + decoy + "\n\ndata: " + real + "\n\n", nil, textBlock},
		{"other-type-notification", "event: log\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\ndata: " + real + "\n\n", nil, refBlock},
		// Neither SDK takes a byte order mark off the stream: the first
		// line names a field they ignore.
		{"bom-before-decoy", "\xEF\xBB\xBFdata: " + decoy + "\n\ndata: " + real + "\n\n", nil, refBlock},
		{"bom-line", "\xEF\xBB\xBF\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		// go-sdk trims each data line of all white space, form feeds
		// included, and so reads the decoy, which mcp-go cannot decode
		// and skips.
		{"decoy-with-form-feed", "data: " + decoy[:10] + "\f\ndata: " + decoy[10:] + "\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		// go-sdk fails the stream at an event it cannot decode; mcp-go
		// skips it.
		{"undecodable-first", "data: starting\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"no-version", "data: " + strings.Replace(real, `"jsonrpc":"2.0",`, "", 1) + "\n\n", ErrAmbiguous, ""},
		{"other-version", "data: " + strings.Replace(real, `"2.0"`, `"1.0"`, 1) + "\n\n", ErrAmbiguous, ""},
		{"key-in-upper-case", "data: " + strings.Replace(real, `"id"`, `"ID"`, 1) + "\n\n", ErrAmbiguous, ""},
		{"key-folded", "data: " + strings.Replace(real, `"result"`, `"re\u017fult"`, 1) + "\n\n", ErrAmbiguous, ""},
		// At the end of the body, go-sdk reads a last line with no line
		// break and mcp-go drops it.
		{"colonless-last-line", "data: " + real + "\nstarting", ErrAmbiguous, ""},
		{"data-last-line", "data: " + real, ErrAmbiguous, ""},
		{"cr-last", "data: " + real + "\r", ErrAmbiguous, ""},
		{"ends-after-data-line", "data: " + real + "\n", nil, refBlock},
		// mcp-go hands a call the first response on its stream, whatever
		// its id; go-sdk reads 1.5 as the id 1, so both take that decoy.
		{"other-id-first", "data: " + strings.Replace(decoy, `"id":1`, `"id":"elsewhere"`, 1) + "\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"fractional-id-first", "data: " + strings.Replace(decoy, `"id":1`, `"id":1.5`, 1) + "\n\ndata: " + real + "\n\n", nil, textBlock},
		// A method member, even empty, makes a request for both SDKs.
		{"empty-method", "data: " + strings.Replace(decoy, `"result"`, `"method":"","result"`, 1) + "\n\ndata: " + real + "\n\n", nil, refBlock},
		// An error fails the call for both SDKs, whatever else is there.
		{"result-and-error", "data: " + strings.Replace(real, `"result"`, `"error":{"code":-1,"message":"no"},"result"`, 1) + "\n\n", ErrNotCaptured, ""},
		{"error-null", "data: " + strings.Replace(real, `"result"`, `"error":null,"result"`, 1) + "\n\n", nil, refBlock},
		// What go-sdk's strict decoding refuses and mcp-go reads.
		{"error-not-an-object", "data: " + strings.Replace(real, `"result"`, `"error":"x","result"`, 1) + "\n\n", ErrAmbiguous, ""},
		{"method-not-a-string", "data: " + strings.Replace(real, `"result"`, `"method":5,"result"`, 1) + "\n\n", ErrAmbiguous, ""},
		{"result-twice", "data: " + strings.TrimSuffix(decoy, "}") + `,"result":{"isError":false}}` + "\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"is-error-not-a-boolean", "data: " + strings.Replace(real, `"result":{`, `"result":{"isError":"no",`, 1) + "\n\n", ErrAmbiguous, ""},
		// The last content counts, as for both SDKs: here no list.
		{"content-twice", "data: " + strings.Replace(decoy, `]}}`, `],"content":5}}`, 1) + "\n\n", ErrNotCaptured, ""},
		{"content-key-case", "data: " + strings.Replace(decoy, `"content"`, `"Content"`, 1) + "\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		{"nested-1000-deep", "data: " + strings.Replace(real, `"result"`, `"pad":`+strings.Repeat("[", 1000)+strings.Repeat("]", 1000)+`,"result"`, 1) + "\n\n", ErrAmbiguous, ""},
		{"id-missing", "data: " + strings.Replace(decoy, `"id":1,`, "", 1) + "\n\ndata: " + real + "\n\n", ErrAmbiguous, ""},
		// An event of one blank data line, as a server priming its
		// client to resume writes: both SDKs skip it.
		{"priming-event", "id: 1\ndata: \n\ndata: " + real + "\n\n", nil, refBlock},
	} {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := answeredWith(t, "text/event-stream", tt.stream)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Blocks = %q, %v; want error %v", blocks, err, tt.want)
			}
			if tt.want == nil && (len(blocks) != 1 || string(blocks[0]) != tt.block) {
				t.Errorf("Blocks = %q; want the first answer's block %s", blocks, tt.block)
			}
		})
	}
}

// answeredWith makes tool call 1 over HTTP, through a fresh capture, to a
// server that answers with body as contentType, and returns what the
// capture gives for the call.
func answeredWith(t *testing.T, contentType, body string) ([]json.RawMessage, error) {
	t.Helper()
	srv := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	tap := New(Options{})
	client := &http.Client{Transport: tap.Transport(nil)}
	ctx := WithCall(context.Background())
	post(t, client, ctx, srv.URL, toolCall("1", nil))
	return tap.Blocks(ctx)
}

// TestJSONBodyFirstValue: of an application/json body both SDKs decode
// the first JSON value only, and nothing when other bytes than white
// space come before it; the capture reads the body as they do.
func TestJSONBodyFirstValue(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[` + refBlock + `]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`
	for _, tt := range []struct {
		name, body string
		want       error
	}{
		{"alone", " \n" + answer + "\n", nil},
		{"then-more", answer + "\n" + note + "\nok", nil},
		{"junk-first", "ok\n" + answer, ErrNotCaptured},
		{"bom-first", "\xEF\xBB\xBF" + answer, ErrNotCaptured},
		{"notification-first", note + "\n" + answer, ErrNotCaptured},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := answeredWith(t, "application/json", tt.body); !errors.Is(err, tt.want) {
				t.Errorf("Blocks: %v; want %v", err, tt.want)
			}
		})
	}
}

// TestAmbiguousByID: two different answers kept by their id, for a
// request that carried no call, leave only the ambiguity; the same answer
// twice, as a resumed stream may replay it, is one answer.
func TestAmbiguousByID(t *testing.T) {
	answerWith := func(block string) string {
		return `{"jsonrpc":"2.0","id":7,"result":{"content":[` + block + `]}}` + "\n"
	}
	for _, tt := range []struct {
		name, in string
		want     error
	}{
		{"different", answerWith(textBlock) + answerWith(refBlock), ErrAmbiguous},
		{"replayed", answerWith(refBlock) + answerWith(refBlock), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tap := New(Options{})
			feed(t, tap, "", tt.in)
			if _, err := tap.TakeID(7); !errors.Is(err, tt.want) {
				t.Errorf("TakeID = %v; want %v", err, tt.want)
			}
		})
	}
}
