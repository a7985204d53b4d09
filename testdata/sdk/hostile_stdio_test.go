package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplrefs/refcore/convert/capture"
)

// stdioPair runs serve on the server's ends of two pipes and returns the
// client's ends, through tap.
func stdioPair(t *testing.T, tap *capture.Capture, serve func(in io.Reader, out io.Writer)) (io.ReadCloser, io.WriteCloser) {
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	go func() { serve(sr, sw); sw.Close() }()
	t.Cleanup(func() { cw.Close(); sw.Close() })
	return tap.Stdio(cr, cw)
}

// goSDKStdioCall and mcpGoStdioCall call the tool "many" through one SDK
// over the given stdio streams, and return the text of the first content
// block and the number of blocks, or the SDK's error.
func goSDKStdioCall(ctx context.Context, r io.ReadCloser, w io.WriteCloser, args map[string]any) (string, int, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	session, err := c.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		return "", 0, err
	}
	defer session.Close()
	p := &mcp.CallToolParams{Name: "many", Arguments: args, Meta: mcp.Meta(capture.Meta(ctx))}
	res, err := session.CallTool(ctx, p)
	if err != nil {
		return "", 0, err
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return "", len(res.Content), nil
	}
	return tc.Text, len(res.Content), nil
}

func mcpGoStdioCall(ctx context.Context, r io.ReadCloser, w io.WriteCloser, args map[string]any) (string, int, error) {
	c := client.NewClient(transport.NewIO(r, w, io.NopCloser(strings.NewReader(""))))
	if err := c.Start(ctx); err != nil {
		return "", 0, err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ProtocolVersion: "2025-11-25"}}); err != nil {
		return "", 0, err
	}
	meta := &mcpgo.Meta{AdditionalFields: capture.Meta(ctx)}
	res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "many", Arguments: args, Meta: meta}})
	if err != nil {
		return "", 0, err
	}
	tc, _ := res.Content[0].(mcpgo.TextContent)
	return tc.Text, len(res.Content), nil
}

// stdioCall is goSDKStdioCall or mcpGoStdioCall.
type stdioCall func(ctx context.Context, r io.ReadCloser, w io.WriteCloser, args map[string]any) (string, int, error)

// checkStdio fails when the capture's blocks for callCtx are not what the
// SDK returned: blocks for a call the SDK failed, or others than it
// returned. On a plain stream the capture must hand the SDK's blocks.
func checkStdio(t *testing.T, tap *capture.Capture, callCtx context.Context, plain bool, text string, n int, sdkErr error) {
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
		t.Errorf("capture %d blocks %.30q, SDK %d blocks %.30q", len(blocks), first.Text, n, text)
	}
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
	for cname, call := range map[string]stdioCall{"go-sdk": goSDKStdioCall, "mcp-go": mcpGoStdioCall} {
		for name, answer := range lines {
			t.Run(cname+"/"+name, func(t *testing.T) {
				tap := capture.New(capture.Options{})
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				r, w := stdioPair(t, tap, func(in io.Reader, out io.Writer) {
					sc := bufio.NewScanner(in)
					sc.Buffer(nil, 1<<20)
					for sc.Scan() {
						var m struct {
							ID     json.RawMessage `json:"id"`
							Method string          `json:"method"`
						}
						_ = json.Unmarshal(sc.Bytes(), &m)
						switch {
						case m.Method == "initialize":
							fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`+"\n", m.ID)
						case m.Method == "tools/call":
							io.WriteString(out, answer(string(m.ID)))
						case len(m.ID) > 0 && m.Method != "":
							fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not here"}}`+"\n", m.ID)
						}
					}
				})
				callCtx := capture.WithCall(ctx)
				text, n, err := call(callCtx, r, w, nil)
				checkStdio(t, tap, callCtx, name == "plain" || name == "crlf", text, n, err)
			})
		}
	}
}
