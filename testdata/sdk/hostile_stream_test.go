package sdk

import (
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

// scriptedServer is a streamable-HTTP MCP server that answers initialize
// plainly and every tools/call with the event stream that answer writes
// for the call's id.
func scriptedServer(t *testing.T, answer func(id string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, m.ID)
		case m.Method == "tools/call":
			a := answer(string(m.ID))
			if j, ok := strings.CutPrefix(a, jsonBody); ok {
				w.Header().Set("Content-Type", "application/json")
				a = j
			} else {
				w.Header().Set("Content-Type", "text/event-stream")
			}
			_, _ = io.WriteString(w, a)
		case len(m.ID) > 0:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not here"}}`, m.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
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
// tap, and returns the text of the SDK's first content block, or the
// SDK's error.
type callThrough func(ctx context.Context, endpoint string, tap *capture.Capture) (string, error)

func goSDKCall(ctx context.Context, endpoint string, tap *capture.Capture) (string, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	session, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tap.Transport(nil)}}, nil)
	if err != nil {
		return "", err
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "scripted"})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", fmt.Errorf("no content")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("content of type %T", res.Content[0])
	}
	return tc.Text, nil
}

func mcpGoCall(ctx context.Context, endpoint string, tap *capture.Capture) (string, error) {
	c, err := client.NewStreamableHttpClient(endpoint, transport.WithHTTPBasicClient(&http.Client{Transport: tap.Transport(nil)}))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", err
	}
	if _, err := c.Initialize(ctx, mcpgo.InitializeRequest{}); err != nil {
		return "", err
	}
	res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "scripted"}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", fmt.Errorf("no content")
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		return "", fmt.Errorf("content of type %T", res.Content[0])
	}
	return tc.Text, nil
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
				sdkText, sdkErr := call(callCtx, srv.URL, tap)
				blocks, err := tap.Blocks(callCtx)
				if err != nil {
					if tt.plain {
						t.Fatalf("the capture gave nothing for a plain stream: %v (the SDK read %q, %v)", err, sdkText, sdkErr)
					}
					return
				}
				var block struct{ Text string }
				if len(blocks) != 1 || json.Unmarshal(blocks[0], &block) != nil {
					t.Fatalf("captured %q", blocks)
				}
				if sdkErr != nil || sdkText != block.Text {
					t.Errorf("the capture handed the host %q; the SDK returned %q, %v", block.Text, sdkText, sdkErr)
				}
			})
		}
	}
}
