package capture_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcplrefs/refcore/convert/capture"
)

// A host's HTTP client carries the capture; each call's context is made
// by WithCall, and after the SDK's call returns, the host takes the raw
// blocks. Here a bare POST stands in for the SDK.
func ExampleCapture_Transport() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: "+
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","uri":"https://studio.example/take1.wav","sizeBytes":19}]}}`+"\n\n")
	}))
	defer server.Close()

	tap := capture.New(capture.Options{})
	httpClient := &http.Client{Transport: tap.Transport(nil)}

	ctx := capture.WithCall(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, server.URL,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render"}}`))
	resp, err := httpClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body) // the SDK reads the response
	resp.Body.Close()

	blocks, err := tap.Blocks(ctx)
	fmt.Println(len(blocks), err)
	fmt.Println(string(blocks[0]))
	// Output:
	// 1 <nil>
	// {"type":"resource","uri":"https://studio.example/take1.wav","sizeBytes":19}
}
