package sdk_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/convert/capture"
	"github.com/mcplrefs/refcore/convert/emit"
)

// TestEmitThroughGoSDK runs the server kit end to end: a go-sdk tool
// answers with emit.Placeholder text, emit.Handler turns it into a
// reference block on the wire (event stream and plain JSON), and a go-sdk
// client reads it through the capture. The host must read back the very
// reference the server described, never mark and all, and show its model
// no uri.
func TestEmitThroughGoSDK(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(map[bool]string{false: "event-stream", true: "json"}[jsonResponse], func(t *testing.T) {
			size := int64(20)
			ref := emit.Reference{URI: "https://studio.example/f/take9.wav?sig=S3CR3T", MimeType: "audio/wav",
				SizeBytes: &size, Name: "take9.wav", Disposition: emit.Never}
			text, err := emit.Placeholder(ref)
			if err != nil {
				t.Fatal(err)
			}
			newServer := func(*http.Request) *mcp.Server {
				s := mcp.NewServer(&mcp.Implementation{Name: "studio", Version: "v0"}, nil)
				s.AddTool(&mcp.Tool{Name: "render", InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
					})
				return s
			}
			srv := httptest.NewServer(emit.Handler(mcp.NewStreamableHTTPHandler(newServer,
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})))
			t.Cleanup(func() {
				srv.CloseClientConnections()
				srv.Close()
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tap := capture.New(capture.Options{})
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL,
				HTTPClient: &http.Client{Transport: tap.Transport(nil)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			callCtx := capture.WithCall(ctx)
			if _, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: "render"}); err != nil {
				t.Fatal(err)
			}
			blocks, err := tap.Blocks(callCtx)
			if err != nil || len(blocks) != 1 {
				t.Fatalf("captured %q, %v; want the one reference block", blocks, err)
			}
			if err := convert.Validate(blocks[0]); err != nil {
				t.Errorf("the block on the wire fails the schema: %v\n%s", err, blocks[0])
			}
			b := convert.Classify(blocks[0])
			got := b.Testimony
			if !b.IsReference() || got.URI != ref.URI || got.Name != ref.Name || got.MimeType != ref.MimeType ||
				got.SizeBytes != size || !got.Never() {
				t.Fatalf("read back %+v from %s", got, blocks[0])
			}
			h := newHost(t, srv.URL)
			content := h.conv.Ingest(ctx, blocks, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"})
			if v := content.History(); strings.Contains(v, "S3CR3T") || strings.Contains(v, "studio.example") ||
				!strings.Contains(v, "withheld: its server marked it never") {
				t.Errorf("the model's view:\n%s", v)
			}
		})
	}
}
