// Package capture gives a host the raw JSON of each content block a tool
// result carries, read beneath its MCP client SDK, so that refcore sees a
// reference block the SDK would drop or fail on. The Go SDKs decode
// MCPL's flat {"type":"resource","uri":…} block as an embedded resource:
// one keeps an empty block, the other fails the whole call. The capture
// reads the same bytes the SDK reads, as they pass, and keeps each
// result's content for the host to hand to convert.Converter.Ingest.
//
// Wire it in once per client, then mark each call:
//
//	tap := capture.New(capture.Options{})
//	httpClient := &http.Client{Transport: tap.Transport(nil)} // streamable HTTP
//	// … connect the SDK with httpClient, then for each call:
//	callCtx := capture.WithCall(ctx)
//	// … call the tool with callCtx through the SDK …
//	blocks, err := tap.Blocks(callCtx)
//
// Over stdio, hand the SDK the streams from [Capture.Command] or
// [Capture.Stdio], and put [Meta] in each call's _meta as well: there the
// capture sees only bytes, not the call's context.
//
// What it guarantees:
//
//   - The SDK reads and writes exactly the bytes it would without the
//     capture, when it would: no header or body is changed, nothing is
//     held back or buffered on the way, and the session keeps its
//     protocol version, its session id and its background event stream.
//     A response body is read only in the reads the SDK makes; a request
//     body is read from a second copy (req.GetBody).
//   - When the SDK's call returns, its result is already captured: the
//     capture follows each byte before the SDK receives it.
//   - Each result goes to the call it answers: by the call's context
//     ([WithCall]), carried to the HTTP request or, over stdio, in the
//     request's _meta ([Meta]); a result whose request carried neither is
//     kept by its JSON-RPC id ([Capture.TakeID]). A call gets the first
//     answer, as the SDKs take it. Where the SDKs read a stream
//     differently, the capture cannot know which answer the SDK took and
//     gives none: [ErrAmbiguous]. That is so for an answer in an
//     event-stream event of a type other than "message" (go-sdk skips
//     it, mcp-go reads it); for any event from a line the SDKs split or
//     read apart on (a lone carriage return, which ends a line for the
//     event-stream format but not for the SDKs; a line with no colon,
//     where go-sdk ends the stream and mcp-go skips the line; a last
//     line the body leaves without a line break, which only go-sdk
//     reads); for any event from one go-sdk cannot decode on (not JSON,
//     a batch, a message without "jsonrpc": "2.0", with a member named
//     twice, in another letter case or of another type than go-sdk
//     takes, or nested 1000 deep), where go-sdk ends the stream and
//     mcp-go reads on (in a JSON body or over stdio, for the call that
//     message answers); for a call whose stream first carries a
//     response to another request, which mcp-go takes as the call's
//     answer whatever its id; over stdio, for a message spanning lines,
//     which go-sdk decodes whole and mcp-go line by line, and for a
//     message followed on its line by another byte than a line break
//     (go-sdk fails the connection there, mcp-go cannot parse the line),
//     and every message after it; and for a call held by its id that is
//     answered twice, differently. A byte order mark
//     at the start of an event stream is not taken off, as neither SDK
//     takes it off; an event of one blank data line, which both skip, is
//     skipped; a numeric id is read as go-sdk reads it, cut to an
//     integer (1.5 answers the request 1); a response with an error
//     gives no result, as the call fails for both; and of an
//     application/json body only the first JSON value is read, and none
//     after other bytes than white space, as both SDKs decode it.
//   - Over stdio the capture reads JSON across lines, as go-sdk does. A
//     server's stray line that starts like JSON but is none ("[starting
//     up") leaves it unable to find later messages: their calls get
//     [ErrNotCaptured], while mcp-go skips such a line and goes on.
//   - Memory is bounded: a message larger than [Options.MaxBytes] is not
//     kept (a too-large result leaves a mark, [ErrTooLarge]); untaken
//     results are bounded in number and bytes, and notifications in
//     number, the oldest let go first and counted in [Stats].
//   - Content blocks are the bytes the server wrote, untouched: the
//     capture judges nothing, and package convert reads them as testimony.
//
// Notifications the servers send (a log message, a push event) are
// queued on [Capture.Notifications], with params.content as raw blocks
// when it is an array.
//
// What it does not reach: it reads MCP's streamable HTTP and stdio
// transports, not the older HTTP+SSE one, and only the traffic that passes
// through it. A response body that reaches the SDK still compressed (when
// the SDK asked for compression itself) is passed on but not read.
//
// A Capture is safe for concurrent use; it starts no goroutines.
package capture
