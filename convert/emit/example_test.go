package emit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcplrefs/refcore/convert/emit"
)

// A tool answers with a reference block in place of the file it rendered.
// The part between the readme markers is the README's "For server
// authors" snippet (a test keeps the two equal). A plain handler stands in
// for the Go MCP SDK's streamable-HTTP handler, writing the tool result
// the way the SDK does.
func Example() {
	// readme:begin
	payload := []byte("RIFF$\x00\x00\x00WAVEfmt ") // the file, as a client will fetch it
	digest, size, err := emit.Digest(bytes.NewReader(payload))
	if err != nil {
		fmt.Println(err)
		return
	}
	ref := emit.Reference{
		URI:         "https://studio.example/files/take1.wav", // your own origin, no credentials in it
		MimeType:    "audio/wav",
		SizeBytes:   &size,
		Digest:      digest,
		Name:        "take1.wav",
		Disposition: emit.Never, // the model must get neither these bytes nor this address
	}
	block, err := json.Marshal(ref) // the block itself, for an SDK that sends raw JSON
	if err != nil {
		fmt.Println(err) // a reference the strict schema would refuse does not encode
		return
	}
	fmt.Println(string(block))

	// The Go MCP SDK cannot send that block, so the tool returns a
	// placeholder in a text content instead...
	text, err := emit.Placeholder(ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	//	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	// ...and the server's handler is wrapped, which swaps it for the block:
	//	http.Handle("/mcp", emit.Handler(mcp.NewStreamableHTTPHandler(getServer, nil)))
	// readme:end

	sdk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		content, _ := json.Marshal([]map[string]string{{"type": "text", "text": "Rendered take 1."}, {"type": "text", "text": text}})
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":1,"result":{"content":`+string(content)+`}}`+"\n\n")
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"render"}}`))
	emit.Handler(sdk).ServeHTTP(rec, req)
	fmt.Print(rec.Body.String())
	// Output:
	// {"type":"resource","uri":"https://studio.example/files/take1.wav","mimeType":"audio/wav","sizeBytes":16,"digest":"sha256:0Z0YqYOjY83OLUFiNGJ2DNSbK48GlOJjYDe1oQ7i6D0","name":"take1.wav","disposition":"never"}
	// event: message
	// data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"Rendered take 1.","type":"text"},{"type":"resource","uri":"https://studio.example/files/take1.wav","mimeType":"audio/wav","sizeBytes":16,"digest":"sha256:0Z0YqYOjY83OLUFiNGJ2DNSbK48GlOJjYDe1oQ7i6D0","name":"take1.wav","disposition":"never"}]}}
}
