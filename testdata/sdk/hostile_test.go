package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplrefs/refcore/convert/capture"
)

// scriptedReply is a scripted server's reply to one message from the
// client: a plain initialize result, answer's text for a tools/call, an
// error for any other request, and nothing for a notification. toolCall
// says the message was the tools/call.
func scriptedReply(msg []byte, answer func(id string) string) (reply string, toolCall bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &m)
	switch {
	case m.Method == "initialize":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, m.ID), false
	case m.Method == "tools/call":
		return answer(string(m.ID)), true
	case len(m.ID) > 0 && m.Method != "":
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not here"}}`, m.ID), false
	}
	return "", false
}

// scriptedServer is a streamable-HTTP MCP server that answers with
// scriptedReply: every tools/call with the event stream answer writes for
// the call's id, or with an application/json body when that begins with
// jsonBody.
func scriptedServer(t *testing.T, answer func(id string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		reply, toolCall := scriptedReply(body, answer)
		switch {
		case toolCall:
			if j, ok := strings.CutPrefix(reply, jsonBody); ok {
				w.Header().Set("Content-Type", "application/json")
				reply = j
			} else {
				w.Header().Set("Content-Type", "text/event-stream")
			}
		case reply != "":
			w.Header().Set("Content-Type", "application/json")
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// jsonBody, before an answer, sends it as an application/json body.
const jsonBody = "\x00json\x00"

// textAnswer is a tools/call result holding one text block.
func textAnswer(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
}

// hostileStreams answer a call in ways the SDKs, or the event-stream
// format, read apart: each decoy is a different answer from the real one.
// plain is set for the one stream that every reader reads alike.
var hostileStreams = []struct {
	name   string
	plain  bool
	stream func(id string) string
}{
	{"plain", true, func(id string) string { return "data: " + textAnswer(id, "real") + "\n\n" }},
	{"bom-before-decoy", false, func(id string) string {
		return "\xEF\xBB\xBFdata: " + textAnswer(id, "decoy") + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"bom-line", false, func(id string) string { return "\xEF\xBB\xBF\ndata: " + textAnswer(id, "real") + "\n\n" }},
	{"decoy-with-form-feed", false, func(id string) string {
		d := textAnswer(id, "decoy")
		cut := strings.Index(d, `"result"`)
		return "data: " + d[:cut] + "\f\ndata: " + d[cut:] + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"undecodable-first", false, func(id string) string { return "data: starting\n\ndata: " + textAnswer(id, "real") + "\n\n" }},
	{"colonless-line", false, func(id string) string { return "starting\ndata: " + textAnswer(id, "real") + "\n\n" }},
	{"colonless-last-line", false, func(id string) string { return "data: " + textAnswer(id, "real") + "\nstarting" }},
	{"data-last-line", false, func(id string) string { return "data: " + textAnswer(id, "real") }},
	{"lone-cr", false, func(id string) string {
		return "data: " + textAnswer(id, "decoy") + "\r\rdata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"other-event-type", false, func(id string) string {
		return "event: decoy\ndata: " + textAnswer(id, "decoy") + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"no-version", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"jsonrpc":"2.0",`, "", 1) + "\n\n"
	}},
	{"id-in-upper-case", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"id"`, `"ID"`, 1) + "\n\n"
	}},
	// mcp-go hands a call the first response on its stream, whatever
	// its id; go-sdk reads a fractional id as the integer below it.
	{"decoy-other-id-first", false, func(id string) string {
		return "data: " + textAnswer(`"elsewhere"`, "decoy") + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"decoy-fractional-id-first", false, func(id string) string {
		return "data: " + textAnswer(id+".5", "decoy") + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	// Messages go-sdk decodes strictly (exact key case at every level,
	// typed members, a method key present meaning a request, nesting up
	// to 1000) and both SDKs read as failures.
	{"result-and-error", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"result"`, `"error":{"code":-32000,"message":"failed"},"result"`, 1) + "\n\n"
	}},
	{"result-twice-merged", false, func(id string) string {
		a := textAnswer(id, "decoy")
		return "data: " + a[:len(a)-1] + `,"result":{"isError":false}}` + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"nested-key-case-decoy", false, func(id string) string {
		a := textAnswer(id, "decoy")
		return "data: " + strings.Replace(a, `"content":[`, `"Content":[`, 1) + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"empty-method-decoy", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "decoy"), `"result"`, `"method":"","result"`, 1) + "\n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	{"method-not-a-string", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"result"`, `"method":5,"result"`, 1) + "\n\n"
	}},
	{"error-not-an-object", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"result"`, `"error":"x","result"`, 1) + "\n\n"
	}},
	{"nested-past-1000", false, func(id string) string {
		return "data: " + strings.Replace(textAnswer(id, "real"), `"result"`, `"pad":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`,"result"`, 1) + "\n\n"
	}},
	// An event with an id and empty data, as a resumable server primes
	// its client with: both SDKs skip it.
	{"priming-event", true, func(id string) string {
		return "id: 1\ndata: \n\ndata: " + textAnswer(id, "real") + "\n\n"
	}},
	// An application/json body: both SDKs decode its first JSON value
	// only, and fail on anything but white space before it.
	{"json-body-then-notification", false, func(id string) string {
		return jsonBody + textAnswer(id, "real") + "\n" + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	}},
	{"json-body-trailing-junk", false, func(id string) string { return jsonBody + textAnswer(id, "real") + "\nok" }},
	{"json-body-leading-junk-line", false, func(id string) string { return jsonBody + "ok\n" + textAnswer(id, "real") }},
	{"json-body-bom-line", false, func(id string) string { return jsonBody + "\xEF\xBB\xBF\n" + textAnswer(id, "real") }},
	{"json-body-notification-first", false, func(id string) string {
		return jsonBody + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n" + textAnswer(id, "real")
	}},
	{"json-body-result-and-error", false, func(id string) string {
		return jsonBody + strings.Replace(textAnswer(id, "real"), `"result"`, `"error":{"code":-32000,"message":"failed"},"result"`, 1)
	}},
}

// callThrough calls a tool through one SDK whose HTTP client goes through
// tap, and returns what the SDK returned (see sdkText), or its error.
type callThrough func(ctx context.Context, endpoint string, tap *capture.Capture) (string, int, error)

func goSDKCall(ctx context.Context, endpoint string, tap *capture.Capture) (string, int, error) {
	return goSDKCallOver(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tap.Transport(nil)}}, nil)
}

func mcpGoCall(ctx context.Context, endpoint string, tap *capture.Capture) (string, int, error) {
	c, err := client.NewStreamableHttpClient(endpoint, transport.WithHTTPBasicClient(&http.Client{Transport: tap.Transport(nil)}))
	if err != nil {
		return "", 0, err
	}
	return mcpGoCallWith(ctx, c, mcpgo.InitializeRequest{}, nil)
}

// goSDKCallOver calls the tool "scripted" through go-sdk over t, with meta
// in the call's _meta.
func goSDKCallOver(ctx context.Context, t mcp.Transport, meta map[string]any) (string, int, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	session, err := c.Connect(ctx, t, nil)
	if err != nil {
		return "", 0, err
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "scripted", Meta: mcp.Meta(meta)})
	if err != nil {
		return "", 0, err
	}
	var first any
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			first = tc.Text
		}
	}
	return sdkText(first, len(res.Content))
}

// mcpGoCallWith starts c, initializes it with init, and calls the tool
// "scripted", with meta in the call's _meta.
func mcpGoCallWith(ctx context.Context, c *client.Client, init mcpgo.InitializeRequest, meta map[string]any) (string, int, error) {
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", 0, err
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		return "", 0, err
	}
	params := mcpgo.CallToolParams{Name: "scripted"}
	if meta != nil {
		params.Meta = &mcpgo.Meta{AdditionalFields: meta}
	}
	res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: params})
	if err != nil {
		return "", 0, err
	}
	var first any
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
			first = tc.Text
		}
	}
	return sdkText(first, len(res.Content))
}

// sdkText is what a call returned: the text of its first block and its
// number of blocks, or an error when the first block is no text block.
func sdkText(first any, n int) (string, int, error) {
	text, ok := first.(string)
	if !ok {
		return "", n, fmt.Errorf("%d blocks, the first no text block", n)
	}
	return text, n, nil
}

// checkCaptured fails when the capture's blocks for callCtx are not what
// the SDK returned: blocks for a call the SDK failed, or others than it
// returned. On a plain stream the capture must hand the SDK's blocks.
func checkCaptured(t *testing.T, tap *capture.Capture, callCtx context.Context, plain bool, text string, n int, sdkErr error) {
	t.Helper()
	blocks, err := tap.Blocks(callCtx)
	var first struct{ Text string }
	if len(blocks) > 0 {
		_ = json.Unmarshal(blocks[0], &first)
	}
	switch {
	case err != nil:
		if plain {
			t.Errorf("the capture gave nothing for a plain stream: %v (the SDK returned %d blocks, %v)", err, n, sdkErr)
		}
	case sdkErr != nil:
		t.Errorf("the SDK failed (%.120v) but the capture handed %d blocks", sdkErr, len(blocks))
	case len(blocks) != n || first.Text != text:
		t.Errorf("the capture handed %d blocks, the first %.30q; the SDK returned %d, the first %.30q", len(blocks), first.Text, n, text)
	}
}

// TestCaptureNeverOutguessesTheSDK runs each SDK against streams the
// readers read apart, and checks the capture's promise: when it hands the
// host blocks for a call, the SDK returned that call successfully, with
// the same text. On the plain stream it must hand them.
func TestCaptureNeverOutguessesTheSDK(t *testing.T) {
	for name, call := range map[string]callThrough{"go-sdk": goSDKCall, "mcp-go": mcpGoCall} {
		for _, tt := range hostileStreams {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				srv := scriptedServer(t, tt.stream)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				tap := capture.New(capture.Options{})
				callCtx := capture.WithCall(ctx)
				text, n, sdkErr := call(callCtx, srv.URL, tap)
				checkCaptured(t, tap, callCtx, tt.plain, text, n, sdkErr)
			})
		}
	}
}

// stdioPair runs serve on the server's ends of two pipes and returns the
// client's ends, through tap.
func stdioPair(t *testing.T, tap *capture.Capture, serve func(in io.Reader, out io.Writer)) (io.ReadCloser, io.WriteCloser) {
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	go func() { serve(sr, sw); sw.Close() }()
	t.Cleanup(func() { cw.Close(); sw.Close() })
	return tap.Stdio(cr, cw)
}

// TestCaptureNeverOutguessesTheSDKOverStdio answers a tool call over
// stdio with lines written by hand, through each SDK, and checks the
// capture's promise as TestCaptureNeverOutguessesTheSDK does: blocks it
// hands the host are what the SDK returned, and a plain line is read.
// go-sdk fails the connection at any byte but a line break after a
// message; mcp-go reads each line whole.
func TestCaptureNeverOutguessesTheSDKOverStdio(t *testing.T) {
	lines := map[string]func(id string) string{
		"plain":                func(id string) string { return textAnswer(id, "real") + "\n" },
		"space-before-newline": func(id string) string { return textAnswer(id, "real") + " \n" },
		"junk-after-on-line":   func(id string) string { return textAnswer(id, "real") + "ok\n" },
		"two-on-one-line": func(id string) string {
			return textAnswer(id, "real") + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n"
		},
		"tab-before-newline": func(id string) string { return textAnswer(id, "real") + "\t\n" },
		"crlf":               func(id string) string { return textAnswer(id, "real") + "\r\n" },
	}
	calls := map[string]func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) (string, int, error){
		"go-sdk": func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) (string, int, error) {
			return goSDKCallOver(ctx, &mcp.IOTransport{Reader: r, Writer: w}, capture.Meta(ctx))
		},
		"mcp-go": func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) (string, int, error) {
			c := client.NewClient(transport.NewIO(r, w, io.NopCloser(strings.NewReader(""))))
			return mcpGoCallWith(ctx, c, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ProtocolVersion: "2025-11-25"}}, capture.Meta(ctx))
		},
	}
	for cname, call := range calls {
		for name, answer := range lines {
			t.Run(cname+"/"+name, func(t *testing.T) {
				tap := capture.New(capture.Options{})
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				r, w := stdioPair(t, tap, func(in io.Reader, out io.Writer) {
					sc := bufio.NewScanner(in)
					sc.Buffer(nil, 1<<20)
					for sc.Scan() {
						reply, toolCall := scriptedReply(sc.Bytes(), answer)
						if reply != "" && !toolCall {
							reply += "\n" // the tools/call answer ends its line itself
						}
						_, _ = io.WriteString(out, reply)
					}
				})
				callCtx := capture.WithCall(ctx)
				text, n, err := call(callCtx, r, w)
				checkCaptured(t, tap, callCtx, name == "plain" || name == "crlf", text, n, err)
			})
		}
	}
}
