package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/convert/capture"
)

// mcpGoRun is what an mcp-go flow hands back to the test.
type mcpGoRun struct {
	tap     *capture.Capture
	client  *client.Client
	content *convert.Content
}

// start starts and initializes an mcp-go client, as any host does, with
// notes receiving each log notification's data.
func start(ctx context.Context, c *client.Client, notes chan<- string) error {
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" {
			data, _ := json.Marshal(n.Params.AdditionalFields["data"])
			notes <- string(data)
		}
	})
	if err := c.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "host", Version: "v1.0.0"}
	_, err := c.Initialize(ctx, init)
	return err
}

// mcpGoOverHTTP is the README's mcp-go section over streamable HTTP.
func mcpGoOverHTTP(ctx context.Context, endpoint string, notes chan<- string, conv *convert.Converter, run *mcpGoRun) error {
	// readme:mcp-go-http:begin
	tap := capture.New(capture.Options{})                     // glue
	httpClient := &http.Client{Transport: tap.Transport(nil)} // glue
	trans, err := transport.NewStreamableHTTP(endpoint,
		transport.WithHTTPBasicClient(httpClient), // glue
		transport.WithContinuousListening())
	if err != nil {
		return err
	}
	c := client.NewClient(trans)
	// readme:mcp-go-http:end
	run.tap, run.client = tap, c
	if err := start(ctx, c, notes); err != nil {
		return err
	}
	// readme:mcp-go-http:begin
	callCtx := capture.WithCall(ctx) // glue
	request := mcp.CallToolRequest{}
	request.Params.Name = "render"
	// mcp-go fails a call whose result holds a reference block; the
	// capture has the server's answer all the same.
	_, callErr := c.CallTool(callCtx, request) // glue
	blocks, err := tap.Blocks(callCtx)         // glue
	if err != nil {                            // glue
		return errors.Join(callErr, err) // glue
	} // glue
	content := conv.Ingest(ctx, blocks, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}) // glue
	// readme:mcp-go-http:end
	run.content = content
	return nil
}

// mcpGoOverStdio is the README's mcp-go section over stdio: cmd runs the
// server.
func mcpGoOverStdio(ctx context.Context, cmd *exec.Cmd, notes chan<- string, conv *convert.Converter, run *mcpGoRun) error {
	// readme:mcp-go-stdio:begin
	tap := capture.New(capture.Options{})                      // glue
	stdout, stdin := tap.Command(cmd)                          // glue
	c := client.NewClient(transport.NewIO(stdout, stdin, nil)) // glue
	// readme:mcp-go-stdio:end
	run.tap, run.client = tap, c
	if err := start(ctx, c, notes); err != nil {
		return err
	}
	// readme:mcp-go-stdio:begin
	callCtx := capture.WithCall(ctx) // glue
	request := mcp.CallToolRequest{}
	request.Params.Name = "render"
	request.Params.Meta = &mcp.Meta{AdditionalFields: capture.Meta(callCtx)} // glue
	_, callErr := c.CallTool(callCtx, request)                               // glue
	blocks, err := tap.Blocks(callCtx)                                       // glue
	if err != nil {                                                          // glue
		return errors.Join(callErr, err) // glue
	} // glue
	content := conv.Ingest(ctx, blocks, convert.Source{Server: "studio", Lane: convert.LaneToolResult, Tool: "render"}) // glue
	// readme:mcp-go-stdio:end
	run.content = content
	return nil
}

// TestMCPGo runs mcp-go's client against go-sdk's server over streamable
// HTTP and over stdio, through the capture, with the same checks as
// TestGoSDK.
func TestMCPGo(t *testing.T) {
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
			var (
				run    mcpGoRun
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
				err = mcpGoOverStdio(ctx, cmd, notes, h.conv, &run)
				defer h.checkModelSide(t, run.content, origin, p)
			} else {
				var srv *httptest.Server
				srv, w, p = httpServer(t, tc.json)
				origin = srv.URL
				h := newHost(t, origin)
				err = mcpGoOverHTTP(ctx, srv.URL+"/mcp", notes, h.conv, &run)
				defer h.checkModelSide(t, run.content, origin, p)
			}
			if run.client != nil {
				defer run.client.Close()
			}
			if err != nil {
				t.Fatal(err)
			}

			// The second call, and a notification sent outside it.
			level := mcp.SetLevelRequest{}
			level.Params.Level = mcp.LoggingLevelInfo
			if err := run.client.SetLevel(ctx, level); err != nil {
				t.Fatal(err)
			}
			callCtx := capture.WithCall(ctx)
			request := mcp.CallToolRequest{}
			request.Params.Name = "announce"
			request.Params.Meta = &mcp.Meta{AdditionalFields: capture.Meta(callCtx)}
			res, err := run.client.CallTool(callCtx, request)
			if err != nil {
				t.Fatal(err)
			}
			checkAnnounce(t, run.tap, callCtx, mcp.GetTextFromContent(res.Content[0]))
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

// TestMCPGoFailsTheCall pins what the README says of mcp-go: without the
// capture, a result holding a reference block fails the whole call.
// Should a release read it, this fails, and the README's mcp-go section
// needs a new look.
func TestMCPGoFailsTheCall(t *testing.T) {
	srv, _, _ := httpServer(t, false)
	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := start(ctx, c, make(chan string, 8)); err != nil {
		t.Fatal(err)
	}
	request := mcp.CallToolRequest{}
	request.Params.Name = "render"
	if _, err := c.CallTool(ctx, request); err == nil || !strings.Contains(err.Error(), "unmarshaling embedded resource") {
		t.Errorf("mcp-go's call: %v", err)
	}
}
