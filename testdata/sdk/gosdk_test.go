package sdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/convert/capture"
)

// goSDKRun is what a go-sdk flow hands back to the test.
type goSDKRun struct {
	tap     *capture.Capture
	session *mcp.ClientSession
	content *convert.Content
}

// goSDKOverHTTP is the README's go-sdk section over streamable HTTP: opts
// are the host's client options, conv its converter.
func goSDKOverHTTP(ctx context.Context, endpoint string, opts *mcp.ClientOptions, conv *convert.Converter, run *goSDKRun) error {
	// readme:go-sdk-http:begin
	tap := capture.New(capture.Options{}) // glue
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1.0.0"}, opts)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: tap.Transport(nil)}, // glue
	}, nil)
	if err != nil {
		return err
	}
	// readme:go-sdk-http:end
	run.tap, run.session = tap, session
	// readme:go-sdk-http:begin
	callCtx := capture.WithCall(ctx)                                                          // glue
	if _, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: "render"}); err != nil { // glue
		return err
	}
	blocks, err := tap.Blocks(callCtx) // glue
	if err != nil {                    // glue
		return err // glue
	} // glue
	content := conv.Ingest(ctx, blocks, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}) // glue
	// readme:go-sdk-http:end
	run.content = content
	return nil
}

// goSDKOverStdio is the README's go-sdk section over stdio: cmd runs the
// server.
func goSDKOverStdio(ctx context.Context, cmd *exec.Cmd, opts *mcp.ClientOptions, conv *convert.Converter, run *goSDKRun) error {
	// readme:go-sdk-stdio:begin
	tap := capture.New(capture.Options{}) // glue
	stdout, stdin := tap.Command(cmd)     // glue
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1.0.0"}, opts)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil) // glue
	if err != nil {
		return err
	}
	// readme:go-sdk-stdio:end
	run.tap, run.session = tap, session
	// readme:go-sdk-stdio:begin
	callCtx := capture.WithCall(ctx)                                                                                       // glue
	if _, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: "render", Meta: capture.Meta(callCtx)}); err != nil { // glue
		return err
	}
	blocks, err := tap.Blocks(callCtx) // glue
	if err != nil {                    // glue
		return err // glue
	} // glue
	content := conv.Ingest(ctx, blocks, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}) // glue
	// readme:go-sdk-stdio:end
	run.content = content
	return nil
}

// TestGoSDK runs go-sdk's client against go-sdk's server over streamable
// HTTP (event-stream and JSON responses) and over stdio, through the
// capture, and checks the model's side, the fetch tool, and that the
// session keeps working: a second call and a notification sent outside
// any call both arrive.
func TestGoSDK(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdio bool
		json  bool
	}{
		{name: "http-sse"},
		{name: "http-json", json: true},
		{name: "stdio", stdio: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			notes := make(chan string, 8)
			opts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				data, _ := json.Marshal(req.Params.Data)
				notes <- string(data)
			}}
			var (
				run    goSDKRun
				err    error
				origin string
				p      *payloads
				w      *watch
			)
			if tc.stdio {
				var cmd *exec.Cmd
				var srv *httptest.Server
				cmd, srv, p = stdioServer(t)
				origin = srv.URL
				h := newHost(t, origin)
				err = goSDKOverStdio(ctx, cmd, opts, h.conv, &run)
				defer h.checkModelSide(t, run.content, origin, p)
			} else {
				var srv *httptest.Server
				srv, w, p = httpServer(t, tc.json)
				origin = srv.URL
				h := newHost(t, origin)
				err = goSDKOverHTTP(ctx, srv.URL+"/mcp", opts, h.conv, &run)
				defer h.checkModelSide(t, run.content, origin, p)
			}
			if run.session != nil {
				defer run.session.Close()
			}
			if err != nil {
				t.Fatal(err)
			}

			// The second call, and a notification sent outside it.
			if err := run.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			callCtx := capture.WithCall(ctx)
			res, err := run.session.CallTool(callCtx, &mcp.CallToolParams{Name: "announce", Meta: capture.Meta(callCtx)})
			if err != nil {
				t.Fatal(err)
			}
			text := ""
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
			checkAnnounce(t, run.tap, callCtx, text)
			if tc.stdio {
				waitNote(t, notes, run.tap, during, after)
			} else {
				// The notification outside the call, on the background
				// stream.
				waitNote(t, notes, run.tap, after)
			}
			if w != nil {
				w.check(t)
			}
		})
	}
}

// TestGoSDKLosesTheBlock pins what the README says of go-sdk: without the
// capture, a reference block reaches the host as an empty embedded
// resource. Should a release keep the block, this fails, and the README's
// go-sdk section needs a new look.
func TestGoSDKLosesTheBlock(t *testing.T) {
	srv, _, _ := httpServer(t, false)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "render"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 3 {
		t.Fatalf("%d blocks", len(res.Content))
	}
	b, _ := json.Marshal(res.Content[1])
	if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource != nil || string(b) != `{"type":"resource"}` {
		t.Errorf("go-sdk now reads the reference block as %T %s", res.Content[1], b)
	}
}
