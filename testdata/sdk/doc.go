// Package sdk holds refcore's end-to-end tests with the real Go MCP SDKs:
// the official go-sdk and mark3labs' mcp-go, each reaching a go-sdk server
// through package capture, and the README's SDK sections, which are copied
// from these tests. It is a module of its own so that the SDKs stay out of
// refcore's dependencies; .ci/run runs its tests explicitly.
package sdk
