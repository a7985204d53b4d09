// Package fetch is the host-mediated fetcher of MCPL RFC-005 (§6, §7): the
// only part of refcore that dials. Given a reference record from package
// refs, it decides whether the reference may be fetched, fetches it from
// the origin of the server that delivered it, verifies what arrives, hands
// the bytes to the host's [Store] and records the verified facts on the
// record.
//
// # What it guarantees
//
//   - Nothing is fetched on receipt: a request happens only when the host
//     calls [Fetcher.Fetch] (F1). [Fetcher.Refusal] and
//     [Fetcher.EagerPlan] never dial.
//   - Refusals before dialing come in one fixed order (see
//     [Fetcher.Fetch]), and a refused fetch makes no request at all (F2).
//   - A server's bearer token goes only to the origin (scheme, host, port)
//     the host dialed that server at, never anywhere else, and never into
//     a log line, an error, a clause or a uri (F3). Redirects are never
//     followed (F4). No proxy is taken from the environment, and a host's
//     *http.Client is copied, never changed (F21). Given the addresses a
//     connection resolved, the fetcher dials only those.
//   - Three limits apply to actual decoded bytes: the host ceiling first,
//     then the server's budget, then the call's max bytes (F5). The body is
//     streamed with memory bounded by the chunk size; the moment a limit is
//     passed the transfer is stopped, the connection closed and nothing is
//     kept (F6). gzip is decoded as it streams, so a decompression bomb
//     stops at the ceiling; a coding it cannot decode fails closed (F7).
//   - A claimed sha256 digest must match the decoded bytes (F8). The
//     observed type comes from the bytes, then the response's
//     Content-Type, then the claim (F9), and names the copy
//     "<refId>.<ext>" (F10).
//   - Every failure is a [*Failure] with a clause and a [Remedy]; the only
//     constructor of a Failure takes a Remedy (F14, F15). Failures unwrap
//     to the sentinels listed with [ErrWithheld], to be tested with
//     errors.Is.
//   - Concurrent fetches of one record share one download, while each
//     caller keeps its own deadline and max bytes (F17). The verified facts
//     are saved on the record only when every check passed (F19); a copy
//     whose record was let go or marked never meanwhile is removed (when
//     the store can remove) and logged (F18, F20).
//   - Each failed call writes one operator line through the host's
//     [log/slog] logger with the reference id, the code and the clause; a
//     storage failure also says why the store failed (O1).
//
// A [Fetcher] is safe for concurrent use by multiple goroutines, and so
// are [MemoryStore] and [DirStore]. Host implementations of [Servers],
// [Store] and [Withholder] must be too.
//
// # What it does not reach
//
// It shows nothing to a model: stubs and notices belong to package
// convert, and a [Failure]'s Sentence is for the host's tool to pass on.
// It does not decide when to fetch; eager fetching is the host's policy,
// for which [Fetcher.EagerPlan] only picks candidates. It keeps no state
// across restarts: budgets live as long as the Fetcher. It cannot bound a
// host-supplied HTTP transport's own behaviour (headers, dialing) beyond
// what it configures on a copy, and it cannot pin dialing to resolved
// addresses for a transport that is not an *http.Transport (it refuses
// such a fetch instead).
package fetch
