package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/refs"
)

// blk is a resource block at $ORIGIN/payload with extra JSON members.
func blk(extra string) string {
	return `{"type":"resource","uri":"$ORIGIN/payload","name":"attachment.wav","mimeType":"audio/wav"` + extra + `}`
}

// blkURI is a resource block at uri with extra JSON members.
func blkURI(uri, extra string) string {
	return `{"type":"resource","uri":"` + uri + `","name":"attachment.wav","mimeType":"audio/wav"` + extra + `}`
}

var (
	wavBody   = []byte("RIFF0000WAVEpayload")
	wavDigest = "sha256:uM7OLD5sO8G3SeWw3LirIreZM71523d9_qXxkn8ewpM"
)

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := z.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipBody serves b gzip-encoded.
func gzipBody(b []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	}
}

func fixed(h http.HandlerFunc) func(*env) http.HandlerFunc {
	return func(*env) http.HandlerFunc { return h }
}

func status(code int) func(*env) http.HandlerFunc {
	return fixed(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
}

// failCase is one row of the failure table: one per row of the seed's
// table of fetch failures and per F-rule that fails.
type failCase struct {
	name, reason string
	mods         []func(*env)
	handler      func(*env) http.HandlerFunc
	server       string // default serverName; "-" for none
	block        string
	prep         func(*env)
	store        func(*env) Store
	req          Request
	code         Code
	remedy       RemedyKind
	requests     int64
	refusal      bool   // Refusal must report the same clause
	hidden       string // a string no clause or log may carry
	detail       string // text the failure's log line must give as its detail
	// loggedToken is set for the one row whose host-written error text
	// carries the token: that text is the operator's detail (see
	// TestFailures), so the log may carry it.
	loggedToken bool
	// aborts is how many times the store's Abort must have been called at
	// least, for the stores that count them.
	aborts int32
	// late is set for a call whose context's deadline has passed already.
	late bool
}

func failCases(t *testing.T) []failCase {
	bomb := gzipped(t, make([]byte, 16<<20))
	return []failCase{
		// Before dialing, in order: the request's own settings, then F2.
		{name: "negative-max-bytes", reason: "a negative max bytes is a wrong request, refused before anything else",
			block: blk(`,"sizeBytes":19,"disposition":"never"`), req: Request{MaxBytes: -1},
			code: CodeInvalidRequest, remedy: RemedyFixRequest},
		{name: "negative-timeout", reason: "a negative timeout is a wrong request, refused before anything else",
			server: "gone", block: blk(`,"sizeBytes":19`), req: Request{Timeout: -time.Second},
			code: CodeInvalidRequest, remedy: RemedyFixRequest},
		{name: "withheld", reason: "F18: a never-marked record is refused first under the zero Config",
			block: blk(`,"sizeBytes":19,"disposition":"never"`),
			code:  CodeWithheld, remedy: RemedyNothing, refusal: true},
		{name: "withheld-marks-unreadable", reason: "N7: a record made while the mark store cannot be read is refused, and no server is blamed",
			mods:  []func(*env){func(e *env) { e.regCfg.Marks = unreadableMarks{} }},
			block: blk(`,"sizeBytes":19`),
			code:  CodeWithheld, remedy: RemedyNothing, refusal: true},
		{name: "no-server", reason: "F2: serverless content names no origin",
			server: "-", block: blk(`,"sizeBytes":19`),
			code: CodeNoServer, remedy: RemedyFreshReference, refusal: true},
		{name: "unknown-server", reason: "F2: the host no longer has the server",
			server: "gone", block: blk(`,"sizeBytes":19`),
			code: CodeUnknownServer, remedy: RemedyAskOperator, refusal: true},
		{name: "server-lookup", reason: "the host's Servers failed; its error text (with a secret) is never shown to the model, only logged as the detail",
			server: "flaky", block: blk(`,"sizeBytes":19`), hidden: "lookup failed", loggedToken: true, detail: "lookup failed",
			code: CodeServerLookup, remedy: RemedyTryLaterThenAsk, refusal: true},
		{name: "no-network-address", reason: "F2: a stdio server has no address",
			server: "stdio", block: blk(`,"sizeBytes":19`),
			code: CodeNoNetworkAddress, remedy: RemedyNothing, refusal: true},
		{name: "bad-uri", reason: "F2: the reference's address does not parse",
			block: blkURI("http://[::1", ""),
			code:  CodeBadURI, remedy: RemedyNothing, refusal: true},
		{name: "bad-server-uri", reason: "F2: the server's address is no http origin",
			server: "broken", block: blk(""),
			code: CodeBadServerURI, remedy: RemedyAskOperator, refusal: true},
		{name: "credentials-in-url", reason: "F2: userinfo is refused without repeating it",
			block: blkURI("http://reader:hunter2@$HOST/payload", ""), hidden: "hunter2",
			code: CodeCredentialsInURL, remedy: RemedyNothing, refusal: true},
		{name: "credentials-user-only", reason: "F2: a user name alone is userinfo too",
			block: blkURI("http://reader@$HOST/payload", ""), hidden: "reader",
			code: CodeCredentialsInURL, remedy: RemedyNothing, refusal: true},
		{name: "scheme-ws-own-origin", reason: "F2: ws: is refused on the reference's own scheme, even at the server's origin",
			block: blkURI("ws://$HOST/payload", ""),
			code:  CodeSchemeNotAllowed, remedy: RemedyNothing, refusal: true},
		{name: "scheme-file", reason: "vector 11: file: is refused",
			block: blkURI("file:///private/fixture", ""),
			code:  CodeSchemeNotAllowed, remedy: RemedyNothing, refusal: true},
		{name: "scheme-server-chosen", reason: "a scheme off the fixed list is the server's own text and is not repeated",
			block: blkURI("x-tok3n+relay://$HOST/payload", ""), hidden: "tok3n",
			code: CodeSchemeNotAllowed, remedy: RemedyNothing, refusal: true},
		{name: "scheme-none", reason: "a relative address names no scheme",
			block: blkURI("/payload?sig=topsecret", ""), hidden: "topsecret",
			code: CodeSchemeNotAllowed, remedy: RemedyNothing, refusal: true},
		{name: "cross-origin-host", reason: "F2: another host is another origin",
			block: blkURI("http://cdn.example/payload?sig=topsecret", ""), hidden: "topsecret", detail: "http://cdn.example:80",
			code: CodeCrossOrigin, remedy: RemedyNothing, refusal: true},
		{name: "cross-origin-scheme", reason: "F2: https on the same host and port is another origin",
			block: blkURI("https://$HOST/payload", ""),
			code:  CodeCrossOrigin, remedy: RemedyNothing, refusal: true},
		{name: "cross-origin-wss-server", reason: "F2: wss compares as https, so an http reference is another origin",
			server: "secure", block: blkURI("http://$HOST/payload", ""),
			code: CodeCrossOrigin, remedy: RemedyNothing, refusal: true},
		{name: "expired-passed", reason: "E1: the expiry passed",
			block: blk(`,"expiresAt":"2000-01-01T00:00:00Z"`),
			code:  CodeExpired, remedy: RemedyFreshReference, refusal: true},
		{name: "expired-unparseable", reason: "vector 16: an unreadable expiry fails closed",
			block: blk(`,"expiresAt":"not-a-date"`),
			code:  CodeExpired, remedy: RemedyFreshReference, refusal: true},
		{name: "expired-rejected", reason: "E1: a rejected expiresAt fails closed",
			block: blk(`,"expiresAt":"` + strings.Repeat("9", 65) + `"`),
			code:  CodeExpired, remedy: RemedyFreshReference, refusal: true},
		{name: "claim-over-ceiling", reason: "F2, F5: a claim past the host ceiling; nothing raises it",
			mods: []func(*env){withConfig(func(c *Config) { c.Ceiling = 1000 })}, block: blk(`,"sizeBytes":1001`),
			code: CodeHostCeiling, remedy: RemedyHostCeiling, refusal: true},
		{name: "budget-spent", reason: "F2: the server's budget is used up",
			mods: []func(*env){withConfig(func(c *Config) { c.Budget = 100 })}, block: blk(`,"sizeBytes":1`),
			prep: func(e *env) { e.f.charge(serverName, 100) },
			code: CodeBudgetSpent, remedy: RemedyWaitForBudget, refusal: true},
		{name: "claim-over-budget", reason: "F2: the claim is more than the budget has left",
			mods: []func(*env){withConfig(func(c *Config) { c.Budget = 100 })}, block: blk(`,"sizeBytes":50`),
			prep: func(e *env) { e.f.charge(serverName, 60) },
			code: CodeOverBudget, remedy: RemedyWaitForBudget, refusal: true},
		{name: "claim-over-max", reason: "vector 04: the claim is more than the call allows",
			block: blk(`,"sizeBytes":129`), req: Request{MaxBytes: 128},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes},
		{name: "claim-over-max-budget-caps", reason: "F15: the larger max bytes offered stops at what the budget has left",
			mods: []func(*env){withConfig(func(c *Config) { c.Budget = 1000 })}, block: blk(`,"sizeBytes":200`),
			prep: func(e *env) { e.f.charge(serverName, 300) }, req: Request{MaxBytes: 100},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes},

		// Dialing and reading.
		{name: "redirect", reason: "F4, vector 12: a redirect is refused and its target never contacted",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
			}),
			block: blk(""), code: CodeRedirect, remedy: RemedyNothing, requests: 1},
		{name: "redirect-loop", reason: "F4: a redirect to itself is one request",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
			}),
			block: blk(""), code: CodeRedirect, remedy: RemedyNothing, requests: 1},
		{name: "status-401", reason: "F11: credentials",
			handler: status(401), block: blk(""), code: CodeStatus, remedy: RemedyAskOperator, requests: 1},
		{name: "status-403", reason: "F11: a fresh reference, then credentials",
			handler: status(403), block: blk(""), code: CodeStatus, remedy: RemedyFreshReferenceThenAsk, requests: 1},
		{name: "status-404", reason: "F11: other 4xx wait for a fresh reference",
			handler: status(404), block: blkURI("$ORIGIN/payload?token=fixture-secret", ""),
			code: CodeStatus, remedy: RemedyFreshReference, requests: 1},
		{name: "status-429", reason: "F11: try later",
			handler: status(429), block: blk(""), code: CodeStatus, remedy: RemedyTryLater, requests: 1},
		{name: "status-503", reason: "F11: 5xx try later",
			handler: status(503), block: blk(""), code: CodeStatus, remedy: RemedyTryLater, requests: 1},
		{name: "status-501", reason: "F11: nothing will change",
			handler: status(501), block: blk(""), code: CodeStatus, remedy: RemedyNothing, requests: 1},
		{name: "no-content", reason: "F11: 204 has no content",
			handler: status(204), block: blk(""), code: CodeNoContent, remedy: RemedyFreshReference, requests: 1},
		{name: "unknown-coding", reason: "F7: a coding the fetcher cannot decode fails closed",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "br")
				w.Write([]byte("whatever"))
			}),
			block: blk(""), detail: "content coding br", code: CodeBadEncoding, remedy: RemedyNothing, requests: 1},
		{name: "corrupt-gzip", reason: "F7: a gzip stream that does not decode keeps nothing",
			handler: fixed(gzipBody(append(gzipped(t, bytes.Repeat([]byte("x"), 4096))[:40], "garbage-garbage-garbage"...))),
			block:   blk(""), code: CodeBadEncoding, remedy: RemedyTryLaterThenFreshReference, requests: 1},
		{name: "digest-mismatch", reason: "vector 05: bytes that do not match the digest are not kept",
			handler: fixed(body(wavBody, "audio/wav")),
			block:   blk(`,"sizeBytes":12,"digest":"sha256:2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz_o"`),
			req:     Request{MaxBytes: 128}, detail: "claimed sha256:2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz_o, received " + wavDigest,
			code: CodeDigestMismatch, remedy: RemedyTryLaterThenFreshReference, requests: 1},
		{name: "announced-over-ceiling", reason: "F5: a Content-Length past the ceiling is refused before reading",
			mods:    []func(*env){withConfig(func(c *Config) { c.Ceiling = 1000 })},
			handler: fixed(body(make([]byte, 2000), "")), block: blk(""),
			code: CodeHostCeiling, remedy: RemedyHostCeiling, requests: 1},
		{name: "announced-over-budget", reason: "F5: a Content-Length past the budget is refused before reading",
			mods:    []func(*env){withConfig(func(c *Config) { c.Budget = 1000 })},
			handler: fixed(body(make([]byte, 2000), "")), block: blk(""),
			code: CodeOverBudget, remedy: RemedyWaitForBudget, requests: 1},
		{name: "announced-over-max", reason: "F5: a Content-Length past the call's max bytes",
			handler: fixed(body(make([]byte, 200), "")), block: blk(""), req: Request{MaxBytes: 100},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes, requests: 1},
		{name: "read-over-ceiling", reason: "F5: actual bytes past the host ceiling, checked first",
			mods:    []func(*env){withConfig(func(c *Config) { c.Ceiling = 1000; c.Budget = 1000 })},
			handler: fixed(chunked(5000, 'a')), block: blk(`,"sizeBytes":10`),
			code: CodeHostCeiling, remedy: RemedyHostCeiling, requests: 1},
		{name: "read-over-budget", reason: "F5: actual bytes run the budget out; the running total is shown",
			mods:    []func(*env){withConfig(func(c *Config) { c.Budget = 1000 })},
			handler: fixed(chunked(5000, 'a')), block: blk(`,"sizeBytes":10`), prep: func(e *env) { e.f.charge(serverName, 200) },
			code: CodeOverBudget, remedy: RemedyWaitForBudget, requests: 1},
		{name: "read-over-max", reason: "vector 10: a stream past the call's max bytes is stopped at max+1",
			handler: fixed(chunked(64*32, 'a')), block: blk(`,"sizeBytes":1`), req: Request{MaxBytes: 64},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes, requests: 1},
		{name: "read-over-max-budget-binds", reason: "F15: when the budget left is below the bytes seen, the budget binds",
			mods:    []func(*env){withConfig(func(c *Config) { c.Budget = 1000 })},
			handler: fixed(chunked(200, 'a')), block: blk(""), prep: func(e *env) { e.f.charge(serverName, 900) },
			req:  Request{MaxBytes: 50},
			code: CodeTooLarge, remedy: RemedyBudgetTooSmall, requests: 1},
		{name: "gzip-bomb", reason: "F7: a decompression bomb stops at the limit on decoded bytes",
			handler: fixed(gzipBody(bomb)), block: blk(""), req: Request{MaxBytes: 1 << 20},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes, requests: 1},
		{name: "gzip-decoded-ceiling", reason: "vector 19: a gzip body whose decoded size passes max bytes",
			handler: fixed(gzipBody(gzipped(t, append([]byte("RIFF0000WAVE"), bytes.Repeat([]byte("x"), 500)...)))),
			block:   blk(`,"sizeBytes":1`), req: Request{MaxBytes: 64},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes, requests: 1},
		{name: "gzip-empty-members", reason: "F7: endless empty gzip members decode to nothing and stop at the bound on encoded bytes, also when the call may receive up to the ceiling",
			mods:    []func(*env){withConfig(func(c *Config) { c.Ceiling = 1000 })},
			handler: fixed(endlessEmptyMembers(t)),
			block:   blk(""), code: CodeBadEncoding, remedy: RemedyTryLaterThenFreshReference, requests: 1},
		{name: "gzip-empty-members-max-bytes", reason: "F5, F7: endless empty gzip members stop near the call's max bytes, not the host ceiling",
			handler: fixed(endlessEmptyMembers(t)),
			block:   blk(""), req: Request{MaxBytes: 1000}, code: CodeBadEncoding, remedy: RemedyTryLaterThenFreshReference, requests: 1},
		{name: "endless-stream", reason: "F6: a stream that never ends stops at max bytes",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				buf := make([]byte, 8192)
				for {
					if _, err := w.Write(buf); err != nil {
						return
					}
				}
			}),
			block: blk(""), req: Request{MaxBytes: 64 << 10},
			code: CodeTooLarge, remedy: RemedyLargerMaxBytes, requests: 1},
		{name: "timeout", reason: "F12: a stalled server fails with the seconds allowed",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("RIFF"))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}),
			block: blk(""), req: Request{Timeout: 200 * time.Millisecond},
			code: CodeTimeout, remedy: RemedyTryLater, requests: 1},
		{name: "deadline-passed", reason: "F12: a call whose deadline had passed before it began says so, not \"0 seconds\"",
			handler: fixed(body(wavBody, "")), block: blk(""), late: true,
			code: CodeTimeout, remedy: RemedyTryLater, requests: 0},
		{name: "canceled", reason: "the caller's own cancellation",
			handler: func(e *env) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					e.cancel()
					<-r.Context().Done()
				}
			},
			block: blk(""),
			code:  CodeCanceled, remedy: RemedyTryLater, requests: 1},
		{name: "reset-mid-body", reason: "F13: a connection closed partway is a network failure in the cause's words",
			handler: fixed(hijacked("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n" + strings.Repeat("z", 100))),
			block:   blk(""), detail: "unexpected EOF", code: CodeNetwork, remedy: RemedyTryLaterThenAsk, requests: 1},
		{name: "lying-content-length", reason: "F6: a Content-Length longer than the body keeps nothing",
			handler: fixed(hijacked("HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n" + string(wavBody))),
			block:   blk(""), code: CodeNetwork, remedy: RemedyTryLaterThenAsk, requests: 1},
		{name: "huge-headers", reason: "1 MiB of response headers is refused, not buffered",
			handler: fixed(func(w http.ResponseWriter, r *http.Request) {
				for i := range 16 {
					w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("h", 64<<10))
				}
				w.Write(wavBody)
			}),
			block: blk(""), detail: "server response headers exceeded", code: CodeNetwork, remedy: RemedyTryLaterThenAsk, requests: 1},
		{name: "connection-refused", reason: "F13: a refused connection says so, with no query",
			server: "dead", block: blkURI("$DEAD/payload?sig=topsecret", ""), hidden: "topsecret", detail: "connection refused",
			code: CodeNetwork, remedy: RemedyTryLaterThenAsk},
		{name: "storage-error", reason: "F10: a store whose writes fail is a storage failure: the copy is aborted, not committed, and the log says why",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &failingStore{MemoryStore: e.mem} },
			code:  CodeStorage, remedy: RemedyAskOperator, requests: 1, detail: "disk quota exceeded", aborts: 1},
		{name: "storage-panic-begin", reason: "F10: a store that panics in Begin",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &panicStore{MemoryStore: e.mem, at: "begin"} },
			code:  CodeStorage, remedy: RemedyAskOperator, requests: 1, detail: "begin exploded"},
		{name: "storage-panic-write", reason: "F10: a store that panics in Write",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &panicStore{MemoryStore: e.mem, at: "write"} },
			code:  CodeStorage, remedy: RemedyAskOperator, requests: 1, detail: "write exploded", aborts: 1},
		{name: "storage-panic-commit", reason: "F10: a store that panics in Commit has the copy aborted, so it may discard what it began",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &panicStore{MemoryStore: e.mem, at: "commit"} },
			code:  CodeStorage, remedy: RemedyAskOperator, requests: 1, detail: "commit exploded", aborts: 1},
		{name: "storage-commit-error", reason: "F10: a store whose Commit fails has the copy aborted, so it may discard what it began",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &panicStore{MemoryStore: e.mem, at: "commit-error"} },
			code:  CodeStorage, remedy: RemedyAskOperator, requests: 1, detail: "commit refused", aborts: 1},
		{name: "gone", reason: "F20: a record evicted during the fetch keeps no copy",
			handler: func(e *env) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					e.reg.Remove(e.rec.ID)
					w.Write(wavBody)
				}
			},
			block: blk(""), code: CodeGone, remedy: RemedyFreshReference, requests: 1},
		{name: "reissued", reason: "F19, E3: a new digest during the fetch means the bytes answer old testimony",
			handler: func(e *env) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					e.ref(serverName, blk(`,"digest":"sha256:2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz_o"`))
					w.Write(wavBody)
				}
			},
			block: blk(`,"digest":"` + wavDigest + `"`), code: CodeGone, remedy: RemedyTryLater, requests: 1},
		{name: "withheld-mid-download", reason: "F18: a mark stops the download at its next chunk",
			handler: func(e *env) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Write(make([]byte, 4096))
					w.(http.Flusher).Flush()
					e.reg.MarkNever(context.Background(), e.rec.URI, serverName)
					for range 64 {
						if _, err := w.Write(make([]byte, 4096)); err != nil {
							return
						}
					}
				}
			},
			block: blk(""), code: CodeWithheld, remedy: RemedyNothing, requests: 1},
		{name: "withheld-after-last-chunk", reason: "F18: a mark after the last chunk saves nothing",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &markingStore{MemoryStore: e.mem, e: e, at: "begin"} },
			code:  CodeWithheld, remedy: RemedyNothing, requests: 1},
		{name: "withheld-while-saving", reason: "F18: a copy committed as the mark landed is removed",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			store: func(e *env) Store { return &markingStore{MemoryStore: e.mem, e: e, at: "commit"} },
			code:  CodeWithheld, remedy: RemedyNothing, requests: 1},
		{name: "withheld-in-shared-store", reason: "F18 with a host-only store: a mark that lands while the copy goes to the shared store fails the host's own fetch too, and fetching again may succeed",
			handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
			mods:  []func(*env){withHostStore(NewMemoryStore())},
			store: func(e *env) Store { return &markingStore{MemoryStore: e.mem, e: e, at: "commit"} },
			req:   Request{ForHost: true}, code: CodeWithheld, remedy: RemedyTryLater, requests: 1},
		uncheckedDuringCase("unchecked-mid-download", true),
		uncheckedDuringCase("unchecked-at-commit", false),
		uncheckedBeforeDialCase(),
	}
}

// uncheckedDuringCase is a model's fetch during which the mark store
// stops answering once the fetch has passed its never check. With a
// host-only store it answers again as the copy begins there (the copy
// went to the host store, no mark is known, and only the host could have
// taken it); without one it stays down through the commit's check.
func uncheckedDuringCase(name string, hostStore bool) failCase {
	marks := &switchMarks{}
	mods := []func(*env){
		func(e *env) { e.regCfg.Marks = marks },
		func(e *env) { e.lookup = func(string) { marks.down.Store(true) } },
	}
	if hostStore {
		mods = append(mods, withHostStore(&beginCounter{MemoryStore: NewMemoryStore(), onBegin: func() { marks.down.Store(false) }}))
	}
	return failCase{name: name, reason: "N7 and F18: a mark store that cannot be read during a fetch counts as a mark, and is not called one",
		handler: fixed(body(wavBody, "audio/wav")), block: blk(""), mods: mods,
		code: CodeWithheld, remedy: RemedyTryLater, requests: 1}
}

// uncheckedBeforeDialCase is a model's fetch of a reference registered
// while the mark store could be read, asked for once it cannot: the fetch
// is refused as for a mark, in words that say why.
func uncheckedBeforeDialCase() failCase {
	marks := &switchMarks{}
	return failCase{name: "unchecked-before-dial", reason: "N7: a mark store that cannot be read counts as a mark, and is not called one",
		handler: fixed(body(wavBody, "audio/wav")), block: blk(""),
		mods: []func(*env){func(e *env) { e.regCfg.Marks = marks }},
		prep: func(*env) { marks.down.Store(true) },
		code: CodeWithheld, remedy: RemedyTryLater, requests: 0}
}

func TestFailures(t *testing.T) {
	var out strings.Builder
	for _, tc := range failCases(t) {
		if tc.reason == "" || strings.Contains(tc.name, "#") {
			panic("every case needs a name and a reason")
		}
		t.Run(tc.name, func(t *testing.T) {
			h := func(w http.ResponseWriter, r *http.Request) { w.Write(wavBody) }
			var e *env
			handler := func(w http.ResponseWriter, r *http.Request) {
				if tc.handler != nil {
					tc.handler(e)(w, r)
					return
				}
				h(w, r)
			}
			mods := append([]func(*env){}, tc.mods...)
			if tc.store != nil {
				mods = append(mods, func(e *env) { e.store = tc.store(e) })
			}
			dead := deadOrigin(t)
			mods = append(mods, func(e *env) { e.extra["dead"] = Server{Origin: dead, Token: token} })
			e = newEnv(t, handler, mods...)
			server := tc.server
			switch server {
			case "":
				server = serverName
			case "-":
				server = ""
			}
			e.rec = e.ref(server, strings.ReplaceAll(tc.block, "$DEAD", dead))
			if tc.prep != nil {
				tc.prep(e)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.cancel = cancel
			if tc.late {
				var stop context.CancelFunc
				ctx, stop = context.WithDeadline(ctx, time.Now().Add(-time.Second))
				defer stop()
			}

			res, err := e.fetch(ctx, e.rec, tc.req)
			if err == nil {
				t.Fatalf("fetch succeeded (%+v); want %s (%s)", res, tc.code, tc.reason)
			}
			f := failureOf(t, err, tc.code)
			if f.Code != tc.code {
				t.Errorf("code = %s, want %s (%s)", f.Code, tc.code, tc.reason)
			}
			// A timeout also matches the context's deadline error, and a
			// cancellation the context's cancel error; nothing else does.
			if got := errors.Is(err, context.DeadlineExceeded); got != (tc.code == CodeTimeout) {
				t.Errorf("errors.Is(err, context.DeadlineExceeded) = %t for %s", got, f.Code)
			}
			if got := errors.Is(err, context.Canceled); got != (tc.code == CodeCanceled) {
				t.Errorf("errors.Is(err, context.Canceled) = %t for %s", got, f.Code)
			}
			if f.Remedy.Kind() != tc.remedy {
				t.Errorf("remedy = %d (%s), want %d", f.Remedy.Kind(), f.Remedy, tc.remedy)
			}
			if got := e.requests.Load(); got != tc.requests {
				t.Errorf("requests = %d, want %d", got, tc.requests)
			}
			if (res != Result{}) {
				t.Errorf("a failure returned a result: %+v", res)
			}
			e.assertNothingKept(e.rec)
			// The sentence a host returns holds the clause and the remedy,
			// and Error() is the clause; none may repeat a secret, an
			// address or any part of the reference's (e.fetch checked the
			// clause and remedy against the fixture's addresses already).
			hidden := []string{}
			if tc.hidden != "" {
				hidden = append(hidden, tc.hidden)
			}
			sentence := f.Sentence(e.rec.ID)
			for _, s := range append([]string{token}, hidden...) {
				if strings.Contains(sentence, s) {
					t.Errorf("the failure's sentence carries %q: %s", s, sentence)
				}
			}
			if tc.loggedToken {
				// The host's own error text is the operator's detail, and
				// is logged as the host wrote it; no other attribute of
				// any line carries it.
				for _, l := range e.logs.Lines(t) {
					for k, v := range l {
						if s, _ := v.(string); k != "detail" && (strings.Contains(s, token) || strings.Contains(s, tc.hidden)) {
							t.Errorf("log attribute %s carries the host's error text: %q", k, s)
						}
					}
				}
			} else {
				e.assertNoSecrets(hidden...)
			}
			logs := e.logs.String()
			var failLines []map[string]any
			for _, l := range e.logs.Lines(t) {
				if l["msg"] == "fetch: reference not fetched" {
					failLines = append(failLines, l)
				}
			}
			if len(failLines) != 1 {
				t.Fatalf("%d failure lines logged, want 1:\n%s", len(failLines), logs)
			}
			if l := failLines[0]; l["ref"] != e.rec.ID || l["code"] != string(tc.code) || l["clause"] != f.Clause {
				t.Errorf("failure line lacks the ref id, code or clause:\n%s", logs)
			}
			if detail, _ := failLines[0]["detail"].(string); tc.code == CodeStorage && detail == "" {
				t.Errorf("storage failure line does not give the detail:\n%s", logs)
			} else if !strings.Contains(detail, tc.detail) {
				t.Errorf("failure line's detail %q does not give %q:\n%s", detail, tc.detail, logs)
			}
			if fs, ok := e.store.(*failingStore); ok {
				if begun, aborted := fs.begun.Load(), fs.aborted.Load(); begun != 1 || aborted != 1 {
					t.Errorf("the failing store began %d copies and had %d aborted, want 1 and 1", begun, aborted)
				}
			}
			if ps, ok := e.store.(*panicStore); ok {
				if aborted := ps.aborted.Load(); aborted < tc.aborts || (tc.aborts == 0 && aborted != 0) {
					t.Errorf("the store had %d copies aborted, want %d", aborted, tc.aborts)
				}
			}
			if tc.refusal {
				r := e.f.Refusal(e.entry(e.rec))
				if r != f.Clause {
					t.Errorf("Refusal = %q, want the clause Fetch gave, %q", r, f.Clause)
				}
				e.assertModelSafe(e.rec, "refusal", r)
			}
			norm := strings.NewReplacer(e.host(), "$HOST", strings.TrimPrefix(dead, "http://"), "$DEAD").Replace
			fmt.Fprintf(&out, "== %s\ncode: %s\nclause: %s\nremedy: %s\n\n", tc.name, string(f.Code), norm(f.Clause), norm(f.Remedy.String()))
		})
	}
	if !t.Failed() {
		golden(t, "failures", out.String())
	}
}

// failingStore is a MemoryStore whose copies cannot be written, as on a
// full disk. It counts the copies begun and those the fetcher aborted; a
// copy committed despite the failure would show in the MemoryStore.
type failingStore struct {
	*MemoryStore
	begun, aborted atomic.Int32
}

func (s *failingStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	if err != nil {
		return nil, err
	}
	s.begun.Add(1)
	return &failingPending{Pending: p, s: s}, nil
}

type failingPending struct {
	Pending
	s *failingStore
}

func (p *failingPending) Write([]byte) (int, error) {
	return 0, errors.New("disk quota exceeded")
}

func (p *failingPending) Abort(ctx context.Context) error {
	p.s.aborted.Add(1)
	return p.Pending.Abort(ctx)
}

// panicStore panics at one step ("begin", "write" or "commit"), or fails
// its Commit with an error ("commit-error"). It counts the copies the
// fetcher aborted.
type panicStore struct {
	*MemoryStore
	at      string
	aborted atomic.Int32
}

func (s *panicStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	if s.at == "begin" {
		panic("begin exploded")
	}
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	return &panicPending{Pending: p, s: s}, err
}

type panicPending struct {
	Pending
	s *panicStore
}

func (p *panicPending) Write(b []byte) (int, error) {
	if p.s.at == "write" {
		panic("write exploded")
	}
	return p.Pending.Write(b)
}

func (p *panicPending) Commit(ctx context.Context) (string, error) {
	switch p.s.at {
	case "commit":
		panic("commit exploded")
	case "commit-error":
		return "", errors.New("commit refused")
	}
	return p.Pending.Commit(ctx)
}

func (p *panicPending) Abort(ctx context.Context) error {
	p.s.aborted.Add(1)
	return p.Pending.Abort(ctx)
}

// markingStore marks the record under test never at one step, standing in
// for a mark that lands concurrently.
type markingStore struct {
	*MemoryStore
	e  *env
	at string
}

func (s *markingStore) Begin(ctx context.Context, name, mime string) (Pending, error) {
	if s.at == "begin" {
		s.e.reg.MarkNever(ctx, s.e.rec.URI, serverName)
	}
	p, err := s.MemoryStore.Begin(ctx, name, mime)
	return &markingPending{Pending: p, s: s}, err
}

type markingPending struct {
	Pending
	s *markingStore
}

func (p *markingPending) Commit(ctx context.Context) (string, error) {
	path, err := p.Pending.Commit(ctx)
	if p.s.at == "commit" {
		p.s.e.reg.MarkNever(ctx, p.s.e.rec.URI, serverName)
	}
	return path, err
}

var _ refs.Remover = (*markingStore)(nil)

// TestRemedyKindNames pins the names RemedyKind.String gives for logs and
// metrics: one of its own for each kind (F14), "none" for no remedy, and
// the number for a value outside the constants.
func TestRemedyKindNames(t *testing.T) {
	seen := map[string]RemedyKind{}
	for k := RemedyKind(0); k <= RemedyFixRequest; k++ {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "RemedyKind(") {
			t.Errorf("kind %d has no name: %q", int(k), name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("kinds %d and %d share the name %q", int(other), int(k), name)
		}
		seen[name] = k
	}
	if got := RemedyTryLater.String(); got != "try-later" {
		t.Errorf("RemedyTryLater = %q, want try-later", got)
	}
	if got := (RemedyFixRequest + 1).String(); got != fmt.Sprintf("RemedyKind(%d)", int(RemedyFixRequest)+1) {
		t.Errorf("a kind past the constants = %q", got)
	}
}

// TestCodingNames pins what the log says of a Content-Encoding the
// fetcher cannot decode: registered names only, never the server's other
// words (F3, F14).
func TestCodingNames(t *testing.T) {
	for in, want := range map[string]string{
		"br":                               "br",
		"gzip, gzip":                       "gzip",
		"identity, br":                     "identity, br",
		"bearer fixture-secret-token":      "another coding",
		"br, x, y, zstd":                   "br, another coding, zstd",
		"a,br,a,br,a,br,a,br":              "another coding, br, another coding, br, another coding, br, another coding, br",
		"a,br,a,br,a,br,a,br,deflate,zstd": "another coding, br, another coding, br, another coding, br, another coding, br, …",
		"":                                 "another coding",
	} {
		if got := codingNames(in); got != want {
			t.Errorf("codingNames(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLogCutsPartsOfTheAddress pins F3 and F14 for parts of a reference's
// address that a server echoes into a malformed response: the path, or
// one value of the query, reaches the operator's log no more than the
// whole address or the whole query does.
func TestLogCutsPartsOfTheAddress(t *testing.T) {
	const path, value = "/files/capability-path-77", "capability-secret-42"
	for name, status := range map[string]string{
		"path":          path,
		"path-segment":  "capability-path-77",
		"query-value":   value,
		"escaped":       "capability%2Dsecret%2D42",
		"upper-case":    "CAPABILITY-SECRET-42",
		"lower-escapes": "capability%2dsecret%2d42",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, hijacked("HTTP/1.1 "+status+" OK\r\n\r\n"))
			rec := e.ref(serverName, blkURI("$ORIGIN"+path+"?sig="+strings.ReplaceAll(value, "-", "%2D")+"&n=1", ""))
			_, err := e.fetch(t.Context(), rec, Request{})
			failureOf(t, err, CodeNetwork)
			logs := e.logs.String()
			for _, s := range []string{"capability-path-77", "capability-secret-42", "capability%2dsecret%2d42"} {
				if strings.Contains(strings.ToLower(logs), s) {
					t.Errorf("the operator's log carries %q:\n%s", s, logs)
				}
			}
			if !strings.Contains(logs, "malformed HTTP status code") {
				t.Errorf("the log lost the cause:\n%s", logs)
			}
		})
	}
}

// endlessEmptyMembers answers with gzip members that hold nothing,
// without end.
func endlessEmptyMembers(t *testing.T) http.HandlerFunc {
	member := gzipped(t, nil)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		for {
			if _, err := w.Write(bytes.Repeat(member, 256)); err != nil {
				return
			}
		}
	}
}

// TestLogKeepsOrdinaryWords is the other side of
// TestLogCutsPartsOfTheAddress: a query value that is an ordinary word
// ("unexpected") is no secret worth cutting from a cause's text, which
// would lose the cause ("unexpected EOF" shown as "… EOF").
func TestLogKeepsOrdinaryWords(t *testing.T) {
	e := newEnv(t, hijacked("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"+string(hostilePayload[:4096])))
	rec := e.ref(serverName, blkURI("$ORIGIN/payload?x=unexpected", ""))
	_, err := e.fetch(t.Context(), rec, Request{})
	failureOf(t, err, CodeNetwork)
	if logs := e.logs.String(); !strings.Contains(logs, "unexpected EOF") {
		t.Errorf("the log lost the cause:\n%s", logs)
	}
}
