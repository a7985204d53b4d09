package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// refBlock is an MCPL reference block, the block the Go SDKs lose.
const refBlock = `{"type":"resource","uri":"https://studio.example/take1.wav","name":"take1.wav","mimeType":"audio/wav","sizeBytes":19}`

// textBlock is a plain text block.
const textBlock = `{"type":"text","text":"Rendered one take."}`

// rpcRequest is a JSON-RPC message as a fake server reads it.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fakeServer is a streamable HTTP MCP server in miniature: it answers each
// POSTed request with the body answer returns, written in pieces of at
// most chunk bytes with a flush after each, and keeps every byte it
// wrote. A GET opens an event stream that sends what is put on push.
type fakeServer struct {
	t      *testing.T
	media  string // "application/json" or "text/event-stream"
	chunk  int
	answer func(r rpcRequest) string
	push   chan string

	mu      sync.Mutex
	sent    map[string][]byte // by request id: the bytes of each POST's response
	headers []http.Header     // each request's headers as they arrived
	bodies  [][]byte          // each POST's body as it arrived
}

func newFakeServer(t *testing.T, media string, chunk int) (*fakeServer, *httptest.Server) {
	f := &fakeServer{t: t, media: media, chunk: chunk, push: make(chan string, 16), sent: map[string][]byte{}}
	f.answer = func(r rpcRequest) string {
		return `{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"content":[` + textBlock + `,` + refBlock + `]}}`
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case ev := <-f.push:
				f.write(w, []byte(ev))
			}
		}
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	var req rpcRequest
	if json.Unmarshal(body, &req) != nil || req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	msg := f.answer(req)
	var out []byte
	if f.media == "text/event-stream" {
		out = []byte("event: message\ndata: " + msg + "\n\n")
	} else {
		out = []byte(msg)
	}
	f.mu.Lock()
	f.sent[string(req.ID)] = out
	f.mu.Unlock()
	w.Header().Set("Content-Type", f.media)
	w.Header().Set("Mcp-Session-Id", "sess-1")
	w.WriteHeader(http.StatusOK)
	f.write(w, out)
}

// write sends b in pieces of at most f.chunk bytes, flushing each.
func (f *fakeServer) write(w http.ResponseWriter, b []byte) {
	n := f.chunk
	if n <= 0 {
		n = len(b)
	}
	for len(b) > 0 {
		k := min(n, len(b))
		w.Write(b[:k])
		w.(http.Flusher).Flush()
		b = b[k:]
	}
}

func (f *fakeServer) sentFor(id string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[id]
}

// smallReads reads r to the end in reads of at most n bytes, as an SDK's
// small buffer would.
func smallReads(t *testing.T, r io.Reader, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, n)
	for {
		k, err := r.Read(buf)
		out.Write(buf[:k])
		if err == io.EOF {
			return out.Bytes()
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
}

// post sends one JSON-RPC message the way an SDK does and returns the
// response body's bytes as the client read them.
func post(t *testing.T, client *http.Client, ctx context.Context, url, body string) []byte {
	t.Helper()
	return postBody(t, client, ctx, url, strings.NewReader(body))
}

// postBody is post with a body reader of the caller's choice: a reader
// http.NewRequest does not know gets no GetBody.
func postBody(t *testing.T, client *http.Client, ctx context.Context, url string, body io.Reader) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", "sess-1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return smallReads(t, resp.Body, 7)
}

// toolCall is a tools/call request with id and, when meta is set, that
// _meta.
func toolCall(id string, meta map[string]any) string {
	params := map[string]any{"name": "render", "arguments": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/call", "params": params})
	return string(b)
}

// wantBlocks checks that blocks are exactly the text and reference blocks.
func wantBlocks(t *testing.T, blocks []json.RawMessage, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("captured: %v", err)
	}
	if len(blocks) != 2 || string(blocks[0]) != textBlock || string(blocks[1]) != refBlock {
		t.Fatalf("captured blocks %q, want the text and the reference block byte for byte", blocks)
	}
}

func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
