// Package emit is the server author's side of bulk content references: it
// builds the small reference block a server sends in place of a large
// payload, and helps a server built on an MCP SDK put that block into a
// tool result.
//
// What it offers:
//
//   - [Reference] is one reference block. Its JSON encoding is exactly the
//     block the strict schema of MCPL Appendix B.1, as RFC-005 section 8
//     amends it, accepts: {"type":"resource","uri":…} and only the fields
//     that are set. [Reference.Check] refuses, with an error naming the
//     field and the value's problem, anything that schema refuses, and
//     also an empty uri and a uri that carries a user name or password.
//     A reference that fails Check does not encode.
//   - [Digest] reads a payload once and returns the digest and byte count
//     the block's digest and sizeBytes fields want.
//   - [Placeholder] and [Handler] let a server whose SDK cannot send such
//     a block (the Go MCP SDK's content types are closed) send it anyway:
//     the tool puts the placeholder text in a text block, and Handler,
//     wrapped around the SDK's HTTP handler, swaps that block for the
//     reference block on the way out. [RewriteMessage] is the same swap
//     for one JSON-RPC message, for any other transport.
//
// What it does not do: it serves no payload, mints no credential and
// checks no host. A client that decodes content into an SDK's own types
// may drop the block's fields; a host that reads each raw block, as
// refcore's hosts do, sees it whole. A placeholder is sealed with a key
// drawn once per process, so only the process that made it can turn it
// back into a reference; anywhere else it stays opaque text that shows no
// uri. A placeholder kept past a restart, say in a persistent event store
// that replays old events, therefore goes out as that text.
package emit
