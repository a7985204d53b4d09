// Package fetch is the host's own fetcher for RFC-005 references: the only
// part of refcore that dials. Given the id a model names, it decides
// whether the reference may be fetched, fetches it from the origin of the
// server that delivered it (or, without credentials, from another origin
// the host allows for that server), verifies what arrives, hands the bytes
// to the host's [Store] and records what it verified. It also offers the
// model a ready-made fetch tool ([Fetcher.Tool]).
//
// # What it guarantees
//
//   - Nothing is fetched on receipt: a request happens only when the host
//     calls [Fetcher.Fetch] (or the model calls the tool).
//     [Fetcher.Refusal] and [Fetcher.EagerPlan] never dial.
//   - A reference a server marked never is not fetched for the model or
//     its tools. The host may fetch it for its own use by asking so on the
//     request ([Request.ForHost]); the zero [Config] never does it for the
//     model. With a host-only store ([Config.HostStore]) a download of a
//     reference known to be marked never when it starts goes there, and
//     no record marked never names a copy in the store whose paths views
//     show.
//   - Refusals before dialing come in one fixed order (see
//     [Fetcher.Fetch]), and a refused fetch makes no request at all.
//   - By default a reference is fetched only from the origin (scheme, host
//     and port) the host dialed its server at, and a server without a
//     network address (stdio) has no fetchable references. The host may
//     name other origins for a server's references
//     ([Server.UnauthenticatedOrigins]); those, and only those, are
//     fetched too, without the server's token and without cookies. The
//     list is the host's own policy, never something a server declares.
//   - A server's bearer token goes only to the origin the host dialed that
//     server at, never anywhere else (not to an allowed other origin, even
//     on the same host), and never into a log line, an error or a clause.
//     The fetcher sends and keeps no cookies. Redirects are never
//     followed. No proxy is taken from the environment, and a host's
//     *http.Client is copied, never changed. Given the addresses a
//     connection resolved, the fetcher dials only those for that server's
//     own origin; other origins resolve as usual.
//   - [Fetcher.EagerPlan] picks only references at the server's own
//     origin.
//   - Three limits apply to decoded bytes: the host ceiling first, then the
//     server's budget (which renews every budget window, and also counts
//     bytes fetched from the server's other allowed origins), then the
//     call's max bytes. The body is streamed through about 1 MiB of
//     buffers, whatever the payload's size; the moment a limit is passed
//     the transfer is stopped, the connection closed and nothing is
//     kept. A finished download's buffers wait about a second for the
//     next download to reuse them; after that the garbage collector frees
//     them at its next collection, which in an idle program may come
//     only after a couple of minutes. gzip is decoded as it streams, so a
//     decompression bomb stops at the first limit it passes. Encoded
//     bytes are bounded too: a body may send at most twice the decoded
//     bytes the limits still allow, plus 1 MiB, so encoded data that
//     decodes to nothing cannot go on for long. Gzip as servers write it
//     stays far below that; a body that more than doubles its content (a
//     flush every few bytes, members of a few bytes each) is refused. The
//     bound counts the body as HTTP delivers it, after chunked framing is
//     removed, so a server can make the bytes on the network larger still
//     by cutting the body into chunks of a byte or two.
//   - A claimed sha256 digest must match the decoded bytes. The media type
//     comes from the bytes, then the response's Content-Type, then the
//     claim, and the copy is named "<id>.<ext>".
//   - Every failure for a held reference is a [*Failure] with a clause and
//     a [Remedy] that are safe to show the model: they name no address,
//     host, port or credential, and no text a server sent. Test failures
//     with errors.Is against a [Code]. The operator's log line for each
//     failure keeps the detail.
//   - When Fetch returns, the download's partial copy is already gone from
//     the store; a copy whose record was let go or marked never meanwhile
//     is removed (when the store can remove) and logged.
//   - Concurrent fetches of one record share one download, while each
//     caller keeps its own deadline and max bytes. A fetch for another of
//     the record's servers than the running download's waits for it to
//     end instead, and then downloads with its own server's credentials.
//
// A [Fetcher] is safe for concurrent use by multiple goroutines, and so
// are [MemoryStore] and [DirStore]. Host implementations of [Servers] and
// [Store] must be too. A fetcher keeps connections open for reuse; a host
// that drops one (a fetcher per session, say) closes them first with
// [Fetcher.CloseIdleConnections].
//
// # What it does not reach
//
// It renders no stub: those belong to package convert. It does not decide
// when to fetch; eager fetching is the host's policy, for which
// [Fetcher.EagerPlan] only picks candidates. Budgets live as long as the
// Fetcher. It cannot bound a host-supplied HTTP transport's own behaviour
// beyond what it configures on a copy, and it cannot hold dialing to
// resolved addresses for a transport that is not an *http.Transport (it
// refuses such a fetch from the server's own origin instead). The
// fetcher's own log lines go through Config.Logger with the reference's
// address, query and token cut, but net/http itself writes a few lines to
// the standard library's log package that the fetcher cannot reach: a
// server that sends bytes on a connection kept open between fetches has
// their start printed there, and it can make them echo its own request.
// A host that keeps that log should treat it as server-written text.
package fetch
