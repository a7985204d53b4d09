package sdk_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/convert/capture"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// The server's bearer token for its payloads, and the payloads.
const bearer = "s3cret"

var (
	take1 = []byte("RIFF0000WAVEtake one")
	take2 = []byte("RIFF0000WAVEtake two")
)

// serverOriginEnv, when set, makes the test binary the stdio server: it
// names the origin the server's references point at.
const serverOriginEnv = "REFCORE_SDK_E2E_ORIGIN"

func TestMain(m *testing.M) {
	if origin := os.Getenv(serverOriginEnv); origin != "" {
		if err := newServer(origin).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "stdio server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mcplBlock is a content block the server writes exactly as given: go-sdk
// has no type for MCPL's flat reference block, so this one borrows
// TextContent for the interface's unexported method and writes its own
// JSON.
type mcplBlock struct {
	*mcp.TextContent
	raw []byte
}

func (b *mcplBlock) MarshalJSON() ([]byte, error) { return b.raw, nil }

// reference returns an MCPL reference block to origin/name.
func reference(origin, name string, payload []byte, never bool) mcp.Content {
	sum := sha256.Sum256(payload)
	block := map[string]any{
		"type":      "resource",
		"uri":       origin + "/" + name,
		"name":      name,
		"mimeType":  "audio/wav",
		"sizeBytes": len(payload),
		"digest":    "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	if never {
		block["disposition"] = "never"
	}
	raw, _ := json.Marshal(block)
	return &mcplBlock{TextContent: &mcp.TextContent{}, raw: raw}
}

// The log notifications the announce tool sends: one within the call, and
// one outside any call (over streamable HTTP, on the background stream).
// Which of them a client gets over stdio depends on how its SDK carries
// the log level in the protocol version it negotiates there.
const (
	during = "announced during the call"
	after  = "announced after the call"
)

// newServer is the tool server, a go-sdk server: "render" answers with a
// text and two references (the second marked never); "announce" sends a
// log notification within the call, answers with a text, and sends
// another notification outside the call.
func newServer(origin string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "studio", Version: "v0.0.1"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "render", Description: "Renders two takes.", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Rendered two takes."},
				reference(origin, "take1.wav", take1, false),
				reference(origin, "take2.wav", take2, true),
			}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "announce", Description: "Announces.", InputSchema: object},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "studio", Data: during})
			go req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "studio", Data: after})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "announcing"}}}, nil
		})
	return s
}

// payloads serves the two takes to the bearer token and counts requests.
type payloads struct {
	fetched [2]atomic.Int32
}

func (p *payloads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+bearer {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	for i, body := range [][]byte{take1, take2} {
		if r.URL.Path == fmt.Sprintf("/take%d.wav", i+1) {
			p.fetched[i].Add(1)
			w.Header().Set("Content-Type", "audio/wav")
			w.Write(body)
			return
		}
	}
	http.NotFound(w, r)
}

// seenRequest is what the server saw of one HTTP request.
type seenRequest struct {
	method, rpc, version, session, accept string
}

// watch records each request reaching the MCP handler.
type watch struct {
	h    http.Handler
	mu   sync.Mutex
	seen []seenRequest
}

func (w *watch) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s := seenRequest{method: r.Method, version: r.Header.Get("Mcp-Protocol-Version"), session: r.Header.Get("Mcp-Session-Id"), accept: r.Header.Get("Accept")}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct{ Method string }
		json.Unmarshal(body, &m)
		s.rpc = m.Method
	}
	w.mu.Lock()
	w.seen = append(w.seen, s)
	w.mu.Unlock()
	w.h.ServeHTTP(rw, r)
}

// check fails unless the session stayed whole: every request after
// initialization carried the protocol version, every tool call the
// session id, and the client opened its background event stream.
func (w *watch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	background := false
	for _, s := range w.seen {
		switch {
		case s.method == http.MethodGet && strings.Contains(s.accept, "text/event-stream"):
			background = true
		case s.method == http.MethodPost && s.rpc != "initialize" && s.rpc != "server/discover" && s.version == "":
			t.Errorf("a %s request went out without Mcp-Protocol-Version", s.rpc)
		}
		if s.rpc == "tools/call" && s.session == "" {
			t.Error("a tool call went out without the session id")
		}
	}
	if !background {
		t.Error("the client never opened its background event stream")
	}
}

// httpServer serves the tool server at /mcp and its payloads at its own
// origin.
func httpServer(t *testing.T, jsonResponse bool) (*httptest.Server, *watch, *payloads) {
	p := &payloads{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	w := &watch{h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(srv.URL) },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})}
	mux.Handle("/mcp", w)
	mux.Handle("/", p)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv, w, p
}

// stdioServer returns the command that runs the tool server over stdio
// (this test binary again), and the server that serves its payloads.
func stdioServer(t *testing.T) (*exec.Cmd, *httptest.Server, *payloads) {
	p := &payloads{}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverOriginEnv+"="+srv.URL)
	cmd.Stderr = os.Stderr
	return cmd, srv, p
}

// host is the refcore side, every setting at its zero value, as the
// README's quickstart wires it.
type host struct {
	conv *convert.Converter
	tool fetch.Tool
	dir  string
}

func newHost(t *testing.T, origin string) *host {
	t.Helper()
	reg, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := fetch.NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	servers := fetch.ServersFunc(func(name string) (fetch.Server, error) {
		if name != "studio" {
			return fetch.Server{}, fetch.CodeUnknownServer
		}
		return fetch.Server{Origin: origin, Token: bearer}, nil
	})
	fetcher, err := fetch.New(reg, servers, store, fetch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := convert.New(reg, convert.Policy{Refusal: fetcher.Refusal})
	if err != nil {
		t.Fatal(err)
	}
	return &host{conv: conv, tool: fetcher.Tool(), dir: dir}
}

// checkModelSide checks what the model sees of the render result and what
// the fetch tool does with each id.
func (h *host) checkModelSide(t *testing.T, content *convert.Content, origin string, p *payloads) {
	t.Helper()
	history := content.History()
	if strings.Contains(history, origin) || strings.Contains(history, "://") {
		t.Fatalf("the model's view shows a uri:\n%s", history)
	}
	ids := content.IDs()
	if len(ids) != 2 || !strings.HasPrefix(history, "Rendered two takes.\n") {
		t.Fatalf("ids %q in the model's view:\n%s", ids, history)
	}
	lines := strings.Split(history, "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], ids[0]) || !strings.Contains(lines[1], `"take1.wav" audio/wav, claimed 20 bytes, from tool render of studio; fetch it by this id`) {
		t.Errorf("the first reference's stub: %s", lines[1])
	}
	if len(lines) != 3 || !strings.Contains(lines[2], ids[1]) || !strings.Contains(lines[2], "withheld: its server marked it never") {
		t.Errorf("the never reference's stub: %s", lines[len(lines)-1])
	}

	ctx := context.Background()
	text, isError := h.tool.Handle(ctx, json.RawMessage(`{"id":"`+ids[0]+`"}`))
	if isError || !strings.Contains(text, "(20 bytes verified, audio/wav, digest matched)") {
		t.Errorf("fetching %s: %v %s", ids[0], isError, text)
	}
	saved, err := os.ReadFile(filepath.Join(h.dir, ids[0]+".wav"))
	if err != nil || !bytes.Equal(saved, take1) {
		t.Errorf("the saved payload: %q, %v", saved, err)
	}
	text, isError = h.tool.Handle(ctx, json.RawMessage(`{"id":"`+ids[1]+`"}`))
	if !isError || !strings.Contains(text, "never") {
		t.Errorf("fetching the never reference %s: %v %s", ids[1], isError, text)
	}
	if got := [2]int32{p.fetched[0].Load(), p.fetched[1].Load()}; got != [2]int32{1, 0} {
		t.Errorf("payload requests %v, want the first take once and the never one not at all", got)
	}
}

// waitNote waits until a log notification whose data is one of accept
// has arrived, both on the SDK's side (sdk) and in the capture's queue.
func waitNote(t *testing.T, sdk <-chan string, tap *capture.Capture, accept ...string) {
	t.Helper()
	ok := func(data string) bool {
		for _, a := range accept {
			if data == `"`+a+`"` {
				return true
			}
		}
		return false
	}
	gotSDK, gotCapture := false, false
	timeout := time.After(20 * time.Second)
	for !gotSDK || !gotCapture {
		select {
		case data := <-sdk:
			gotSDK = gotSDK || ok(data)
		case n := <-tap.Notifications():
			if n.Method == "notifications/message" {
				var p struct{ Data json.RawMessage }
				json.Unmarshal(n.Params, &p)
				gotCapture = gotCapture || ok(string(p.Data))
			}
		case <-timeout:
			t.Fatalf("no notification %q arrived (the SDK got one: %v, the capture: %v)", accept, gotSDK, gotCapture)
		}
	}
}

// checkAnnounce checks the second call: the SDK decoded it, and the
// capture kept its one block.
func checkAnnounce(t *testing.T, tap *capture.Capture, callCtx context.Context, sdkText string) {
	t.Helper()
	if sdkText != "announcing" {
		t.Errorf("the SDK's view of the second call: %q", sdkText)
	}
	blocks, err := tap.Blocks(callCtx)
	if err != nil || len(blocks) != 1 || string(blocks[0]) != `{"type":"text","text":"announcing"}` {
		t.Errorf("the second call's blocks: %q, %v", blocks, err)
	}
	if st := tap.Stats(); st.Pending != 0 || st.Dropped != 0 || st.TooLarge != 0 {
		t.Errorf("capture stats %+v", st)
	}
}
