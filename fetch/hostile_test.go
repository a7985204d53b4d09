package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// The hostile-input suite: every attack on the fetcher a server (or a
// local process sharing the store's disk) can mount, one table row each,
// with the outcome it must come to. A row that fails names a guard that
// is gone. Every row checks, besides its Code:
//
//   - the clause and remedy are non-empty and name no address, port, uri
//     or credential (assertNoAddress, and env.assertModelSafe);
//   - nothing was saved: the MemoryStore holds no copy, the DirStore's
//     directory holds no file, and the record names no copy;
//   - no ".tmp-*" partial copy was in the DirStore the moment Fetch
//     returned (read on Fetch's own goroutine);
//   - no goroutine outlives the case once its servers are closed;
//   - where memory applies, the bytes allocated during the Fetch stay far
//     below the bytes the attack pushed (runtime.MemStats.TotalAlloc).
//
// Timeouts are short (stall rows use 300 ms); every Fetch is bounded by
// hostileCaseLimit as a liveness guard, never as a speed assertion.

// hostilePayload is what a well-behaved answer would carry: it sniffs as
// audio/wav and is longer than the sniffing window, so a DirStore has
// begun a partial copy before any later failure.
var hostilePayload = append([]byte("RIFF0000WAVE"), bytes.Repeat([]byte("p"), 8<<10)...)

// noise returns n bytes that do not compress, the same on every run.
func noise(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// stallTimeout is the deadline of the rows that stall or trickle.
const stallTimeout = 300 * time.Millisecond

// hostileEnv is one case's world: the fixture's env, the DirStore when
// the case uses one, and the servers that must never be reached.
type hostileEnv struct {
	*env
	dir    string
	ds     *DirStore
	null   *nullStore
	others []*countingServer
	q      *quitter    // ends the case's handlers
	ports  []string    // every port a server of the case listens on
	meter  *meterStore // wraps the case's store
}

// other starts a server that must not be reached and returns it; it
// counts toward the row's "no other server reached" check.
func (h *hostileEnv) other(addr string) (*countingServer, bool) {
	c, ok := newCountingServer(addr, hostilePayload)
	if !ok {
		return nil, false
	}
	h.others = append(h.others, c)
	h.ports = append(h.ports, portOf(c.srv.Listener.Addr().String()))
	u := "http://" + c.srv.Listener.Addr().String()
	h.extra["other-"+strconv.Itoa(len(h.others))] = Server{Origin: u}
	return c, true
}

// hostileCase is one attack and the outcome it must come to.
type hostileCase struct {
	name, attack string
	// handler answers the fetch; nil serves hostilePayload.
	handler func(h *hostileEnv) http.HandlerFunc
	mods    []func(*env)
	// client, if set, is the host's own *http.Client (Config.Client).
	client func(h *hostileEnv) *http.Client
	// setup runs once the env exists and before the reference is
	// registered: other servers, extra Servers entries.
	setup func(h *hostileEnv)
	// prep runs after the reference is registered (h.rec is set).
	prep   func(h *hostileEnv)
	server string // default serverName
	block  string // default hblk("$ORIGIN/payload", "")
	req    Request
	// ctx, if set, gives the caller's context.
	ctx func(h *hostileEnv) (context.Context, context.CancelFunc)
	// stores lists the stores the row runs against: "mem", "dir",
	// "null"; nil means mem and dir. store, if set, wraps the chosen one.
	stores []string
	store  func(h *hostileEnv, s Store) Store
	code   Code
	// ok says the attack must come to nothing and the fetch succeed (and
	// check pass); with orCode set, a failure with that code (and nothing
	// kept) is a right outcome too.
	ok     bool
	orCode Code
	// limit, when set, is the Failure's Limit: the ceiling that stopped
	// the transfer (Got must pass it).
	limit int64
	// requests is how many requests the fixture's own server may answer.
	requests int64
	// maxAlloc bounds TotalAlloc during Fetch; 0 leaves it unchecked.
	maxAlloc uint64
	// logged is text the operator's log must carry (the detail).
	logged string
	// planted lists directory entries the row itself put in the store,
	// which "nothing saved" allows.
	planted func(h *hostileEnv) []string
	check   func(t *testing.T, h *hostileEnv, r fetchReturn)
}

// hblk is a resource block at uri (JSON-escaped) with extra members.
func hblk(uri, extra string) string {
	u, _ := json.Marshal(uri)
	return `{"type":"resource","uri":` + string(u) + `,"name":"attachment.bin","mimeType":"application/octet-stream"` + extra + `}`
}

func serve(b []byte) func(*hostileEnv) http.HandlerFunc {
	return func(*hostileEnv) http.HandlerFunc { return body(b, "") }
}

func handle(h http.HandlerFunc) func(*hostileEnv) http.HandlerFunc {
	return func(*hostileEnv) http.HandlerFunc { return h }
}

// raw answers with bytes written straight on the connection, then closes
// it (a response no well-behaved server would send).
func raw(s string) func(*hostileEnv) http.HandlerFunc { return handle(hijacked(s)) }

// rawThen writes head on the connection, then calls more with it until
// more returns false, quit closes or a write fails.
func rawThen(head string, more func(c net.Conn, i int) bool) func(*hostileEnv) http.HandlerFunc {
	return func(h *hostileEnv) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			conn.SetWriteDeadline(time.Now().Add(hostileCaseLimit))
			if _, err := conn.Write([]byte(head)); err != nil {
				return
			}
			for i := 0; ; i++ {
				select {
				case <-h.q.ch:
					return
				default:
				}
				if !more(conn, i) {
					return
				}
			}
		}
	}
}

// endless writes fill without end, until the client goes away.
func endless(fill []byte, header map[string]string) func(*hostileEnv) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		for {
			if _, err := w.Write(fill); err != nil {
				return
			}
		}
	})
}

// trickle writes head at once, then one byte of fill per period.
func trickle(head []byte, period time.Duration, header map[string]string) func(*hostileEnv) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		if len(head) > 0 {
			w.Write(head)
		}
		w.(http.Flusher).Flush()
		for wait(r, period) {
			if _, err := w.Write([]byte{'s'}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
}

// stallAfter writes head (and the header) and then holds the connection
// open until the client leaves.
func stallAfter(head []byte) func(*hostileEnv) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

func gzipHeader() map[string]string {
	return map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/octet-stream"}
}

func withCeiling(n int64) func(*env) { return withConfig(func(c *Config) { c.Ceiling = n }) }

// redirectTo answers code with a Location from loc.
func redirectTo(code int, loc func(h *hostileEnv, r *http.Request) string) func(*hostileEnv) http.HandlerFunc {
	return func(h *hostileEnv) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", loc(h, r))
			w.WriteHeader(code)
			w.Write([]byte("moved"))
		}
	}
}

func toSelf(_ *hostileEnv, r *http.Request) string { return r.URL.String() }

func toOther(h *hostileEnv, _ *http.Request) string {
	return h.others[0].srv.URL + "/payload"
}

func startOther(h *hostileEnv) {
	if _, ok := h.other("127.0.0.1:0"); !ok {
		h.t.Fatal("cannot listen on 127.0.0.1")
	}
}

// bombScale is the decoded size the large streaming rows run to: the
// default host ceiling, scaled down under the race detector, which makes
// every byte far slower.
func bombScale() (ceiling int64) {
	if raceEnabled {
		return 32 << 20
	}
	return DefaultCeiling
}

func hostileCases(t *testing.T) []hostileCase {
	gzPayload := gzipped(t, hostilePayload)
	badCRC := bytes.Clone(gzPayload)
	badCRC[len(badCRC)-6] ^= 0xff
	emptyMember := gzipped(t, nil)
	tinyMember := gzipped(t, []byte{'a'})
	member4k := gzipped(t, bytes.Repeat([]byte("m"), 4096))
	bm := newBomb(t)
	const tenGiB = 10 << 30
	big := bombScale()
	// A bound on what the fetcher may allocate while it streams big
	// bytes: 4 MiB, against 32 to 256 MiB streamed. A fetcher that held
	// the stream would allocate all of it; one that streams allocates a
	// few chunks (about 0.2 MiB here, 0.4 MiB under the race detector).
	const bigAlloc = 4 << 20
	return []hostileCase{
		// Content-Length lies (F5, F6).
		{name: "cl-longer-than-body", attack: "Content-Length claims 100,000 bytes, 4 KiB arrive, then the connection closes",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n" + string(hostilePayload[:4096])),
			code:    CodeNetwork, requests: 1, logged: "unexpected EOF"},
		{name: "cl-shorter-than-body", attack: "Content-Length cuts the body short of the digested payload; the rest is ignored and the digest fails",
			handler: raw("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 4096\r\n\r\n" + string(hostilePayload)),
			block:   hblk("$ORIGIN/payload", `,"digest":"`+digestOf(hostilePayload)+`"`),
			code:    CodeDigestMismatch, requests: 1},
		{name: "cl-10gib-lie", attack: "Content-Length announces 10 GiB for a short body: refused before a byte is read",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n" + string(hostilePayload)),
			code:    CodeHostCeiling, requests: 1},
		{name: "cl-over-max-lie", attack: "Content-Length announces more than the call's max bytes",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + string(hostilePayload)),
			req:     Request{MaxBytes: 1000}, code: CodeTooLarge, requests: 1},
		{name: "cl-negative", attack: "Content-Length: -5",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n" + string(hostilePayload)),
			code:    CodeNetwork, requests: 1, logged: "Content-Length"},
		{name: "cl-conflicting", attack: "two Content-Length headers that disagree",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Length: 8204\r\n\r\n" + string(hostilePayload)),
			code:    CodeNetwork, requests: 1, logged: "Content-Length"},
		{name: "cl-small-with-endless-chunks", attack: "Content-Length: 10 beside Transfer-Encoding: chunked, then chunks without end",
			handler: rawThen("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n", func(c net.Conn, _ int) bool {
				_, err := c.Write([]byte("1000\r\n" + strings.Repeat("c", 4096) + "\r\n"))
				return err == nil
			}),
			req: Request{MaxBytes: 64 << 10}, code: CodeTooLarge, requests: 1},
		{name: "cl-small-gzip-bomb", attack: "a small honest Content-Length on a gzip body that decodes past max bytes",
			handler: handle(gzipBody(gzipped(t, make([]byte, 4<<20)))),
			req:     Request{MaxBytes: 1 << 20}, code: CodeTooLarge, requests: 1},

		// Responses that never become one.
		{name: "endless-headers", attack: "header lines without end, never the blank line",
			handler: rawThen("HTTP/1.1 200 OK\r\n", func(c net.Conn, i int) bool {
				_, err := fmt.Fprintf(c, "X-Pad-%d: %s\r\n", i, strings.Repeat("h", 1000))
				return err == nil
			}),
			code: CodeNetwork, requests: 1, logged: "headers exceeded"},
		{name: "informational-flood", attack: "103 Early Hints without end before any final status",
			handler: rawThen("", func(c net.Conn, _ int) bool {
				_, err := c.Write([]byte("HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"))
				return err == nil
			}),
			code: CodeNetwork, requests: 1, logged: "headers exceeded"}, // 1xx headers count toward the 64 KiB bound
		{name: "no-status-line", attack: "an HTTP/0.9-style answer: bytes with no status line",
			handler: raw(string(hostilePayload)), code: CodeNetwork, requests: 1, logged: "malformed HTTP"},

		// gzip: bombs, endless and multi-member streams (F7).
		{name: "gzip-bomb-10gib-host-ceiling", attack: "10 GiB of zeros in ~10 MiB of gzip, max bytes at the ceiling: stops at the host ceiling, memory bounded",
			mods: []func(*env){withCeiling(big)}, handler: handle(bm.handler(tenGiB)), stores: []string{"null"},
			req: Request{MaxBytes: big, Timeout: hostileCaseLimit}, code: CodeHostCeiling, limit: big, requests: 1, maxAlloc: bigAlloc},
		{name: "gzip-bomb-10gib-max-bytes", attack: "10 GiB of zeros in gzip under the default max bytes: stops at max bytes, memory bounded",
			mods: []func(*env){withCeiling(big)}, handler: handle(bm.handler(tenGiB)), stores: []string{"null"},
			req: Request{MaxBytes: big / 4, Timeout: hostileCaseLimit}, code: CodeTooLarge, limit: big / 4, requests: 1, maxAlloc: bigAlloc},
		{name: "gzip-bomb-small-ceiling", attack: "10 GiB of zeros in gzip against a 1 MiB host ceiling, into each store",
			mods: []func(*env){withCeiling(1 << 20)}, handler: handle(bm.handler(tenGiB)),
			code: CodeHostCeiling, limit: 1 << 20, requests: 1},
		{name: "gzip-endless-empty-members", attack: "gzip members with nothing in them, without end: decoded bytes never grow, the bound on encoded bytes stops it",
			mods: []func(*env){withCeiling(1 << 20)}, handler: endless(bytes.Repeat(emptyMember, 256), gzipHeader()),
			code: CodeBadEncoding, requests: 1},
		{name: "gzip-endless-one-byte-members", attack: "one-byte gzip members without end: 21 wire bytes per decoded byte, the bound on encoded bytes stops it",
			mods: []func(*env){withCeiling(1 << 20)}, handler: endless(bytes.Repeat(tinyMember, 256), gzipHeader()),
			code: CodeBadEncoding, requests: 1},
		{name: "gzip-multi-member-over-max", attack: "64 gzip members of 4 KiB each against 64 KiB max bytes: members are summed",
			handler: handle(gzipBody(bytes.Repeat(member4k, 64))), req: Request{MaxBytes: 64 << 10},
			code: CodeTooLarge, requests: 1},
		{name: "gzip-member-then-garbage", attack: "a good gzip member followed by bytes that are no gzip header",
			handler: handle(gzipBody(append(bytes.Clone(gzPayload), "not another member"...))),
			code:    CodeBadEncoding, requests: 1},
		{name: "gzip-bad-crc", attack: "a gzip member whose CRC does not match what it decodes to",
			handler: handle(gzipBody(badCRC)), code: CodeBadEncoding, requests: 1},
		{name: "gzip-truncated", attack: "a gzip member cut off before its end, the HTTP body ending cleanly",
			handler: handle(gzipBody(gzPayload[:len(gzPayload)-12])), code: CodeBadEncoding, requests: 1},
		{name: "gzip-truncated-cl-lie", attack: "a gzip member cut off, Content-Length claiming more, connection closed",
			handler: raw("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 100000\r\n\r\n" + string(gzipped(t, noise(64<<10)))[:4096]),
			code:    CodeNetwork, requests: 1},
		{name: "gzip-twice", attack: "Content-Encoding: gzip, gzip (a coding stack the fetcher does not decode)",
			handler: handle(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip, gzip")
				w.Write(gzipped(t, gzPayload))
			}),
			code: CodeBadEncoding, requests: 1},
		{name: "coding-deflate", attack: "Content-Encoding: deflate fails closed",
			handler: handle(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "deflate")
				w.Write(hostilePayload)
			}),
			code: CodeBadEncoding, requests: 1},
		{name: "coding-echoes-credentials", attack: "Content-Encoding echoes the request's bearer token and query: the log names no coding it does not know",
			block: hblk("$ORIGIN/payload?sig=capability-secret-42", ""),
			handler: handle(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "br, "+r.Header.Get("Authorization")+" "+r.URL.RawQuery)
				w.Write(hostilePayload)
			}),
			code: CodeBadEncoding, requests: 1, logged: "content coding br, another coding",
			check: func(t *testing.T, h *hostileEnv, _ fetchReturn) {
				for _, s := range []string{token, "fixture-secret", "capability-secret", "sig="} {
					if strings.Contains(strings.ToLower(h.logs.String()), strings.ToLower(s)) {
						t.Errorf("the operator's log carries %q:\n%s", s, h.logs)
					}
				}
			}},
		{name: "endless-stream-host-ceiling", attack: "an identity body without end, max bytes at a 1 MiB ceiling: the stream ceiling cuts it",
			mods: []func(*env){withCeiling(1 << 20)}, handler: endless(make([]byte, 32<<10), nil),
			code: CodeHostCeiling, limit: 1 << 20, requests: 1},
		{name: "endless-stream-256mib", attack: "an identity body without end against the default ceiling: memory bounded by the chunk",
			mods: []func(*env){withCeiling(big)}, handler: endless(make([]byte, 32<<10), nil), stores: []string{"null"},
			req: Request{MaxBytes: big, Timeout: hostileCaseLimit}, code: CodeHostCeiling, limit: big, requests: 1, maxAlloc: bigAlloc},
		{name: "endless-stream-max-bytes", attack: "an identity body without end, 64 KiB max bytes",
			handler: endless(make([]byte, 4096), nil), req: Request{MaxBytes: 64 << 10},
			code: CodeTooLarge, limit: 64 << 10, requests: 1},
		{name: "endless-one-byte-chunks", attack: "chunked encoding with one-byte chunks without end",
			handler: rawThen("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", func(c net.Conn, _ int) bool {
				_, err := c.Write([]byte(strings.Repeat("1\r\nx\r\n", 1024)))
				return err == nil
			}),
			req: Request{MaxBytes: 16 << 10}, code: CodeTooLarge, requests: 1},

		// Stalls and slow bodies (F12).
		{name: "stall-before-headers", attack: "the server accepts the request and never answers",
			handler: handle(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }),
			req:     Request{Timeout: stallTimeout}, code: CodeTimeout, requests: 1},
		{name: "stall-after-headers", attack: "headers, then nothing",
			handler: stallAfter(nil), req: Request{Timeout: stallTimeout}, code: CodeTimeout, requests: 1},
		{name: "stall-mid-body", attack: "4 KiB (a partial copy begun), then nothing",
			handler: stallAfter(hostilePayload[:4096]), req: Request{Timeout: stallTimeout}, code: CodeTimeout, requests: 1},
		{name: "stall-gzip-header", attack: "a gzip header, then nothing",
			handler: trickle(gzPayload[:10], time.Hour, gzipHeader()), req: Request{Timeout: stallTimeout},
			code: CodeTimeout, requests: 1},
		{name: "slow-body-1-byte-per-second", attack: "one byte a second from the first byte",
			handler: trickle(nil, time.Second, nil), req: Request{Timeout: stallTimeout}, code: CodeTimeout, requests: 1},
		{name: "slow-body-after-partial-copy", attack: "4 KiB, then one byte a second",
			handler: trickle(hostilePayload[:4096], time.Second, nil), req: Request{Timeout: stallTimeout},
			code: CodeTimeout, requests: 1},
		{name: "slow-body-fast-trickle", attack: "a byte every 10 ms: each read makes progress, the deadline still binds",
			handler: trickle(hostilePayload[:1024], 10*time.Millisecond, nil), req: Request{Timeout: stallTimeout},
			code: CodeTimeout, requests: 1},
		{name: "slow-headers", attack: "the status line and headers dripped a byte every 50 ms",
			handler: rawThen("", func(c net.Conn, i int) bool {
				const head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Drip: " +
					"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"
				if i >= len(head) {
					return false
				}
				time.Sleep(50 * time.Millisecond)
				_, err := c.Write([]byte{head[i]})
				return err == nil
			}),
			req: Request{Timeout: stallTimeout}, code: CodeTimeout, requests: 1},
		{name: "stall-caller-deadline", attack: "a stall against the caller's own 300 ms deadline (the call's timeout left at its default)",
			handler: stallAfter(hostilePayload[:4096]),
			ctx: func(*hostileEnv) (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), stallTimeout)
			},
			req: Request{Timeout: -1}, code: CodeTimeout, requests: 1},
		{name: "stall-caller-cancel", attack: "a stall the caller gives up on (cancels) mid-body",
			handler: func(h *hostileEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Write(hostilePayload[:4096])
					w.(http.Flusher).Flush()
					time.Sleep(20 * time.Millisecond)
					h.cancel()
					<-r.Context().Done()
				}
			},
			code: CodeCanceled, requests: 1},

		// Redirects (F4): never followed, whatever the status or target.
		{name: "redirect-loop-301", attack: "301 to itself", handler: redirectTo(301, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-loop-302", attack: "302 to itself", handler: redirectTo(302, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-loop-303", attack: "303 to itself", handler: redirectTo(303, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-loop-307", attack: "307 to itself", handler: redirectTo(307, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-loop-308", attack: "308 to itself", handler: redirectTo(308, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-300-location", attack: "300 Multiple Choices with a Location", handler: redirectTo(300, toSelf), code: CodeRedirect, requests: 1},
		{name: "redirect-305-use-proxy", attack: "305 Use Proxy naming another server", setup: startOther,
			handler: redirectTo(305, toOther), code: CodeRedirect, requests: 1},
		{name: "redirect-302-other-origin", attack: "302 to a live server on another port, which must see nothing",
			setup: startOther, handler: redirectTo(302, toOther), code: CodeRedirect, requests: 1},
		{name: "redirect-307-other-origin", attack: "307 (method and body kept) to a live server on another port",
			setup: startOther, handler: redirectTo(307, toOther), code: CodeRedirect, requests: 1},
		{name: "redirect-relative-loop", attack: "302 with a relative Location to itself",
			handler: redirectTo(302, func(*hostileEnv, *http.Request) string { return "payload" }), code: CodeRedirect, requests: 1},

		// DNS rebinding (F21): the connection resolved one address, the
		// fetch would reach another.
		{name: "rebind-name-to-other-address", attack: "the origin's name (localhost) now resolves to 127.0.0.1, where the fixture listens, but the connection resolved 127.0.0.2",
			setup: func(h *hostileEnv) {
				h.extra["rebound"] = Server{Origin: "http://localhost:" + h.port(), Token: token,
					Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.2")}}
			},
			server: "rebound", block: hblk("http://localhost:$P/payload", ""),
			code: CodeNetwork, requests: 0, logged: "resolved"},
		{name: "rebind-ip-to-other-address", attack: "the origin names 127.0.0.2, where an attacker listens; the connection resolved 127.0.0.1: no connection is made",
			setup: func(h *hostileEnv) {
				c, ok := h.other("127.0.0.2:0")
				if !ok {
					h.t.Skip("cannot listen on 127.0.0.2")
				}
				h.extra["rebound"] = Server{Origin: c.srv.URL, Token: token, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
			},
			server: "rebound", block: hblk("$OTHER1/payload", ""),
			code: CodeNetwork, requests: 0, logged: "resolved",
			check: func(t *testing.T, h *hostileEnv, _ fetchReturn) {
				if n := h.others[0].conns.Load(); n != 0 {
					t.Errorf("the attacker's address accepted %d connections", n)
				}
			}},
		{name: "rebind-host-dialer", attack: "the host's own dialer resolves the origin's name to 127.0.0.2, where an attacker listens; the connection resolved 127.0.0.1",
			setup: func(h *hostileEnv) {
				c, ok := h.other("127.0.0.2:0")
				if !ok {
					h.t.Skip("cannot listen on 127.0.0.2")
				}
				h.extra["rebound"] = Server{Origin: "http://rebind.test:" + portOf(c.srv.URL), Token: token,
					Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
			},
			client: func(h *hostileEnv) *http.Client {
				// The host's resolver, rebound: every name is the attacker.
				return &http.Client{Transport: &http.Transport{DisableCompression: true,
					DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
						var d net.Dialer
						return d.DialContext(ctx, network, h.others[0].srv.Listener.Addr().String())
					}}}
			},
			server: "rebound", block: hblk("http://rebind.test:$OTHERPORT1/payload", ""),
			code: CodeNetwork, requests: 0, logged: "resolved",
			check: func(t *testing.T, h *hostileEnv, _ fetchReturn) {
				if n := h.others[0].requests.Load(); n != 0 {
					t.Errorf("the attacker answered %d requests", n)
				}
			}},

		// Storage that fails (F10, F22).
		{name: "enospc-first-write", attack: "a store whose every write fails with ENOSPC",
			store: func(h *hostileEnv, s Store) Store {
				return &errnoStore{Store: s, errno: syscall.ENOSPC, path: h.dirOr("/var/lib/refcore/store") + "/.tmp-x"}
			},
			code: CodeStorage, requests: 1, logged: "no space left on device"},
		{name: "enospc-after-64kib", attack: "a store that fills up 64 KiB into a 1 MiB body",
			handler: serve(append(bytes.Clone(hostilePayload), make([]byte, 1<<20)...)),
			store: func(h *hostileEnv, s Store) Store {
				return &errnoStore{Store: s, errno: syscall.ENOSPC, after: 64 << 10, path: h.dirOr("/var/lib/refcore/store") + "/.tmp-x"}
			},
			code: CodeStorage, requests: 1, logged: "no space left on device"},
		{name: "enospc-on-commit", attack: "a store whose commit (the flushing close) fails with ENOSPC",
			store: func(h *hostileEnv, s Store) Store {
				return &errnoStore{Store: s, errno: syscall.ENOSPC, atCommit: true, path: h.dirOr("/var/lib/refcore/store") + "/.tmp-x"}
			},
			code: CodeStorage, requests: 1, logged: "no space left on device"},
		{name: "erofs-on-begin", attack: "a store on a read-only file system (EROFS when the copy is begun)",
			store: func(h *hostileEnv, s Store) Store {
				return &errnoStore{Store: s, errno: syscall.EROFS, atBegin: true, path: h.dirOr("/var/lib/refcore/store") + "/.tmp-x"}
			},
			code: CodeStorage, requests: 1, logged: "read-only file system"},
		{name: "read-only-dir", attack: "a DirStore whose directory cannot be written (mode 0555, and immutable where root ignores modes)",
			stores: []string{"dir"}, setup: func(h *hostileEnv) { makeReadOnly(h.t, h.dir) },
			code: CodeStorage, requests: 1, logged: "could not begin"},
		{name: "store-dir-removed", attack: "a DirStore whose directory was removed after it was opened",
			stores: []string{"dir"}, setup: func(h *hostileEnv) {
				if err := os.Remove(h.dir); err != nil {
					h.t.Fatal(err)
				}
			},
			code: CodeStorage, requests: 1, logged: "could not begin",
			planted: func(*hostileEnv) []string { return []string{"<unreadable"} }},
		{name: "store-closed", attack: "a DirStore closed before the fetch",
			stores: []string{"dir"}, setup: func(h *hostileEnv) { h.ds.Close() },
			code: CodeStorage, requests: 1, logged: "could not begin"},

		// Planted files and symbolic links in a DirStore (F22).
		{name: "symlink-at-final-name", attack: "symbolic links to a file outside the store planted at every name the copy could take",
			stores: []string{"dir"}, prep: plantAtFinalNames(func(h *hostileEnv, p string) error {
				return os.Symlink(h.victim(), p)
			}),
			ok: true, requests: 1, check: checkGenuineCopy},
		{name: "symlink-to-dir-at-final-name", attack: "symbolic links to a directory outside the store planted at every name the copy could take",
			stores: []string{"dir"}, prep: plantAtFinalNames(func(h *hostileEnv, p string) error {
				return os.Symlink(filepath.Dir(h.victim()), p)
			}),
			ok: true, requests: 1, check: checkGenuineCopy},
		{name: "directory-at-final-name", attack: "a non-empty directory planted at the copy's final name",
			stores: []string{"dir"}, prep: func(h *hostileEnv) {
				p := filepath.Join(h.dir, h.rec.ID+".wav")
				if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
					h.t.Fatal(err)
				}
			},
			code: CodeStorage, requests: 1, logged: "could not commit",
			planted: func(h *hostileEnv) []string { return []string{h.rec.ID + ".wav"} }},
		{name: "swap-dir-for-symlink-mid-fetch", attack: "mid-fetch, the store's directory is swapped for a symbolic link to another directory holding a planted file under the copy's temporary name",
			stores: []string{"dir"}, handler: swapDirMidFetch(false), requests: 1, ok: true, orCode: CodeStorage,
			check: checkNotPlanted},
	}
}

// storeDir returns the directory the DirStore opened: its own path, or
// where a row moved it aside (".orig") to put a link in its place.
func (h *hostileEnv) storeDir() string {
	if h.dir == "" {
		return ""
	}
	if _, err := os.Lstat(h.dir + ".orig"); err == nil {
		return h.dir + ".orig"
	}
	return h.dir
}

// dirOr returns the case's store directory, or def when it has none.
func (h *hostileEnv) dirOr(def string) string {
	if h.dir != "" {
		return h.dir
	}
	return def
}

// victim returns a file outside the store that no fetch may change.
func (h *hostileEnv) victim() string {
	p := filepath.Join(filepath.Dir(h.dir), "victim-"+filepath.Base(h.dir))
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("VICTIM"), 0o644); err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { os.Remove(p) })
	}
	return p
}

// plantAtFinalNames plants, with plant, an entry at each name the copy
// could be stored under (the id with the extension of each type the
// payload could sniff as).
func plantAtFinalNames(plant func(h *hostileEnv, p string) error) func(h *hostileEnv) {
	return func(h *hostileEnv) {
		for _, ext := range []string{".wav", ".bin"} {
			if err := plant(h, filepath.Join(h.dir, h.rec.ID+ext)); err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

// checkGenuineCopy checks that a fetch that withstood a planted link
// stored the served bytes as a plain file inside the store and left the
// link's target alone.
func checkGenuineCopy(t *testing.T, h *hostileEnv, r fetchReturn) {
	t.Helper()
	fi, err := os.Lstat(r.res.Path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the copy at %s is not a plain file: %v, %v", r.res.Path, fi, err)
	}
	if b, err := os.ReadFile(r.res.Path); err != nil || !bytes.Equal(b, hostilePayload) {
		t.Errorf("the copy holds %d bytes (%v), not the served payload", len(b), err)
	}
	if b, err := os.ReadFile(h.victim()); err != nil || string(b) != "VICTIM" {
		t.Errorf("the file outside the store was changed: %q, %v", b, err)
	}
	if filepath.Dir(r.res.Path) != h.ds.Dir() {
		t.Errorf("the copy %s is not directly in the store", r.res.Path)
	}
}

// plantedBytes is what an attacker puts where the store's copy should be.
var plantedBytes = []byte("PLANTED by a local attacker")

// swapDirMidFetch returns a handler that sends a first part, waits until
// the DirStore has begun its partial copy, then moves the store directory
// aside, puts a symbolic link to a directory of its own in its place and
// plants a file under the partial copy's temporary name there (and, when
// atFinal is set, under the final name too); then it sends the rest.
func swapDirMidFetch(atFinal bool) func(h *hostileEnv) http.HandlerFunc {
	return midCopy(func(h *hostileEnv, tmp string) bool {
		attacker := h.dir + ".attacker"
		if err := os.Mkdir(attacker, 0o755); err != nil {
			h.t.Error(err)
			return false
		}
		plant := []string{tmp}
		if atFinal {
			plant = append(plant, h.rec.ID+".wav", h.rec.ID+".bin")
		}
		for _, n := range plant {
			if err := os.WriteFile(filepath.Join(attacker, n), plantedBytes, 0o644); err != nil {
				h.t.Error(err)
			}
		}
		if err := os.Rename(h.dir, h.dir+".orig"); err != nil {
			h.t.Error(err)
			return false
		}
		if err := os.Symlink(attacker, h.dir); err != nil {
			h.t.Error(err)
			return false
		}
		return true
	})
}

// checkNotPlanted checks what F22 asks of a swapped directory: the fetch
// did not return the planted bytes as its copy, the fetcher wrote nothing
// into the attacker's directory, and the bytes it kept, if any, are the
// served ones, in the directory it opened.
func checkNotPlanted(t *testing.T, h *hostileEnv, r fetchReturn) {
	t.Helper()
	if b, err := os.ReadFile(r.res.Path); err == nil && bytes.Equal(b, plantedBytes) {
		t.Errorf("the fetch returned OK with the planted bytes at %s", r.res.Path)
	}
	if r.err != nil {
		// A refused commit (the store noticed the swap): the runner has
		// checked that nothing was kept.
		return
	}
	attacker := dirNames(h.dir + ".attacker")
	for _, n := range attacker {
		if b, _ := os.ReadFile(filepath.Join(h.dir+".attacker", n)); !bytes.Equal(b, plantedBytes) {
			t.Errorf("the fetcher wrote %s into the attacker's directory", n)
		}
	}
	orig := dirNames(h.dir + ".orig")
	if len(tmpNames(orig)) != 0 {
		t.Errorf("the store's own directory holds a partial copy: %v", orig)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir+".orig", filepath.Base(r.res.Path))); err != nil || !bytes.Equal(b, hostilePayload) {
		t.Errorf("the store's own directory does not hold the served bytes: %d bytes, %v", len(b), err)
	}
}

// makeReadOnly makes dir unwritable: by its mode, and where that does not
// bind (running as root) by the immutable flag. It skips the test where
// neither holds.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	writable := func() bool {
		p := filepath.Join(dir, "probe")
		f, err := os.Create(p)
		if err != nil {
			return false
		}
		f.Close()
		os.Remove(p)
		return true
	}
	if !writable() {
		return
	}
	if err := setImmutable(dir, true); err != nil {
		t.Skipf("the directory stays writable (mode bits do not bind this user, and the immutable flag: %v)", err)
	}
	t.Cleanup(func() {
		if err := setImmutable(dir, false); err != nil {
			t.Errorf("could not clear the immutable flag on %s: %v", dir, err)
		}
	})
	if writable() {
		t.Skip("the directory stays writable")
	}
}

func TestHostile(t *testing.T) {
	runHostile(t, hostileCases(t))
}

// runHostile runs each case against each of its stores.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		if tc.attack == "" || seen[tc.name] || (tc.ok == (tc.code != "")) || (tc.orCode != "" && !tc.ok) {
			t.Fatalf("case %q needs a unique name, an attack, and either a code or ok", tc.name)
		}
		seen[tc.name] = true
		stores := tc.stores
		if stores == nil {
			stores = []string{"mem", "dir"}
		}
		for _, kind := range stores {
			t.Run(tc.name+"/"+kind, func(t *testing.T) { runHostileCase(t, tc, kind) })
		}
	}
}

func runHostileCase(t *testing.T, tc hostileCase, kind string) {
	leaks := newLeakCheck()
	h := &hostileEnv{q: newQuitter()}
	if kind == "dir" {
		// A directory of its own inside the test's, so that rows that
		// move it aside have a parent to move it within.
		h.dir = filepath.Join(t.TempDir(), "store")
		if err := os.Mkdir(h.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ds, err := NewDirStore(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		h.ds = ds
		t.Cleanup(func() { ds.Close() })
	}
	mods := slices.Clone(tc.mods)
	mods = append(mods, func(e *env) {
		switch kind {
		case "dir":
			e.store, e.mem = h.ds, nil
		case "null":
			h.null = &nullStore{}
			e.store, e.mem = h.null, nil
		}
		if tc.client != nil {
			e.cfg.Client = tc.client(h)
		}
		if tc.store != nil {
			h.env = e // the wrapper may ask h for the directory
			e.store = tc.store(h, e.store)
		}
		e.store, h.meter = newMeter(e.store)
		if kind == "dir" {
			h.meter.slowAbort = 20 * time.Millisecond
		}
	})
	handler := tc.handler
	if handler == nil {
		handler = serve(hostilePayload)
	}
	var hf http.HandlerFunc
	h.env = newEnv(t, h.q.wrap(func(w http.ResponseWriter, r *http.Request) { hf(w, r) }), mods...)
	t.Cleanup(h.q.quit) // runs before newEnv's own cleanup closes the server
	hf = handler(h)
	h.ports = append(h.ports, h.port())
	if tc.setup != nil {
		tc.setup(h)
	}
	server := tc.server
	if server == "" {
		server = serverName
	}
	block := tc.block
	if block == "" {
		block = hblk("$ORIGIN/payload", "")
	}
	block = strings.ReplaceAll(block, "$P", h.port())
	for i, o := range h.others {
		n := strconv.Itoa(i + 1)
		block = strings.ReplaceAll(block, "$OTHERPORT"+n, portOf(o.srv.Listener.Addr().String()))
		block = strings.ReplaceAll(block, "$OTHER"+n, o.srv.URL)
	}
	h.rec = h.ref(server, block)
	if tc.prep != nil {
		tc.prep(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if tc.ctx != nil {
		ctx, cancel = tc.ctx(h)
	}
	defer cancel()
	h.cancel = cancel
	req := tc.req
	switch {
	case req.Timeout == 0:
		req.Timeout = 10 * time.Second // a bound, not the row's subject
	case req.Timeout < 0:
		req.Timeout = 0 // the Config's default: the caller's context binds
	}
	measure := tc.maxAlloc > 0
	var before, after runtime.MemStats
	if measure {
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	r := fetchBounded(t, h.env, ctx, h.rec.ID, req, h.storeDir)
	if measure {
		runtime.ReadMemStats(&after)
	}

	wantOK, code := tc.ok, tc.code
	if tc.ok && r.err != nil && tc.orCode != "" {
		wantOK, code = false, tc.orCode
	}
	if wantOK {
		if r.err != nil {
			t.Fatalf("%s: fetch failed: %v", tc.attack, r.err)
		}
	} else {
		f := failureOf(t, r.err, code)
		if f.Code != code {
			t.Errorf("%s: code = %s, want %s (clause: %s)", tc.attack, f.Code, code, f.Clause)
		}
		if tc.limit != 0 {
			if f.Limit != tc.limit || f.Got <= f.Limit {
				t.Errorf("%s: stopped at %d bytes against a limit of %d, want past the limit %d", tc.attack, f.Got, f.Limit, tc.limit)
			}
			// F6: nothing past the limit is ever handed to the store.
			if most := h.meter.most.Load(); most > tc.limit {
				t.Errorf("%s: the store was handed %d bytes of one copy, past the limit %d", tc.attack, most, tc.limit)
			}
		}
		if f.Remedy.String() == "" || f.Clause == "" {
			t.Errorf("empty clause or remedy: %+v", f)
		}
		assertNoAddress(t, f, h.ports, token, h.rec.URI, h.dir, h.srv.URL,
			// The store's and the system's own words stay in the log.
			".tmp-", "/var/lib", "no space left", "read-only file system", "permission denied",
			"operation not permitted", "file already closed", "no such file")
		if (r.res != Result{}) {
			t.Errorf("a failure returned a result: %+v", r.res)
		}
		// Nothing saved.
		if cur, ok := h.reg.Lookup(h.rec.ID); ok && cur.Copy != nil {
			t.Errorf("the record names a copy after a failure: %+v", *cur.Copy)
		}
		switch kind {
		case "mem":
			if s := h.mem.Saves(); len(s) != 0 {
				t.Errorf("the memory store holds %d copies after a failure", len(s))
			}
		case "null":
			if n := h.null.committed.Load(); n != 0 {
				t.Errorf("the store committed %d copies after a failure", n)
			}
			if b, a := h.null.begun.Load(), h.null.aborted.Load(); b != a {
				t.Errorf("the store began %d copies and had %d aborted", b, a)
			}
		case "dir":
			var allowed []string
			if tc.planted != nil {
				allowed = tc.planted(h)
			}
			for _, n := range r.entries {
				if !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(n, a) }) {
					t.Errorf("the store directory holds %s after a failure", n)
				}
			}
		}
		if tc.logged != "" && !strings.Contains(h.logs.String(), tc.logged) {
			t.Errorf("the operator's log does not give %q:\n%s", tc.logged, h.logs)
		}
	}
	if tmp := tmpNames(r.entries); len(tmp) != 0 {
		t.Errorf("partial copies were in the store the moment Fetch returned: %v", tmp)
	}
	if got := h.requests.Load(); got != tc.requests {
		t.Errorf("the fixture's server answered %d requests, want %d", got, tc.requests)
	}
	for i, o := range h.others {
		if n := o.requests.Load(); n != 0 {
			t.Errorf("server other-%d, which must not be reached, answered %d requests", i+1, n)
		}
	}
	if measure {
		grew := after.TotalAlloc - before.TotalAlloc
		t.Logf("allocated during the fetch: %d bytes (bound %d)", grew, tc.maxAlloc)
		if grew > tc.maxAlloc {
			t.Errorf("the fetch allocated %d bytes, over the bound %d: memory grows with the attack", grew, tc.maxAlloc)
		}
		if h.null != nil && h.null.written.Load() == 0 {
			t.Error("nothing reached the store, so the memory bound proves nothing")
		}
	}
	if tc.check != nil {
		tc.check(t, h, r)
	}
	e := h.env
	h.q.settled(t)
	closers := []func(){h.q.quit, e.srv.Close}
	for _, o := range h.others {
		closers = append(closers, o.srv.Close)
	}
	leaks.check(t, closers...)
}

// spelling is one way to write an address that is not the server's own
// origin, and the refusal it must meet before anything is dialed.
type spelling struct {
	uri  string // $P is the fixture's port, $Q a live other server's
	code Code
}

// otherOrigins are 42 spellings of another origin than the fixture's
// (http://127.0.0.1:$P), or of no origin at all. Several reach the
// fixture itself, or a live server, if dialed; none may be.
var otherOrigins = []spelling{
	// Another host on the same port, many of them the fixture's own
	// machine: only the exact spelling the server was dialed at counts.
	{"http://localhost:$P/payload", CodeCrossOrigin},
	{"http://LOCALHOST:$P/payload", CodeCrossOrigin},
	{"http://127.1:$P/payload", CodeCrossOrigin},
	{"http://127.0.1:$P/payload", CodeCrossOrigin},
	{"http://2130706433:$P/payload", CodeCrossOrigin},
	{"http://0x7f000001:$P/payload", CodeCrossOrigin},
	{"http://0x7f.0.0.1:$P/payload", CodeCrossOrigin},
	{"http://0177.0.0.1:$P/payload", CodeCrossOrigin},
	{"http://127.000.000.001:$P/payload", CodeCrossOrigin},
	{"http://127.0.0.1.:$P/payload", CodeCrossOrigin},
	{"http://127.0.0.2:$P/payload", CodeCrossOrigin},
	{"http://0.0.0.0:$P/payload", CodeCrossOrigin},
	{"http://[::1]:$P/payload", CodeCrossOrigin},
	{"http://[::ffff:127.0.0.1]:$P/payload", CodeCrossOrigin},
	{"http://[::ffff:7f00:1]:$P/payload", CodeCrossOrigin},
	{"http://[fe80::1%25lo]:$P/payload", CodeCrossOrigin},
	{"http://127。0。0。1:$P/payload", CodeCrossOrigin},
	{"http://１２７.０.０.１:$P/payload", CodeCrossOrigin},
	{"http://127.0.0.1.nip.io:$P/payload", CodeCrossOrigin},
	{"http://evil.example:$P/payload", CodeCrossOrigin},
	// The same host on another port.
	{"http://127.0.0.1:$Q/payload", CodeCrossOrigin},
	{"http://127.0.0.1/payload", CodeCrossOrigin},
	{"http://127.0.0.1:$P0/payload", CodeCrossOrigin},
	{"http://127.0.0.1:0$P/payload", CodeCrossOrigin},
	{"http://127.0.0.1:99999/payload", CodeCrossOrigin},
	// Another scheme.
	{"https://127.0.0.1:$P/payload", CodeCrossOrigin},
	{"HTTPS://127.0.0.1:$P/payload", CodeCrossOrigin},
	{"ws://127.0.0.1:$P/payload", CodeSchemeNotAllowed},
	{"ftp://127.0.0.1:$P/payload", CodeSchemeNotAllowed},
	{"//127.0.0.1:$Q/payload", CodeSchemeNotAllowed},
	// No host where a parser might find one.
	{"http:/127.0.0.1:$Q/payload", CodeCrossOrigin},
	{"http:127.0.0.1:$Q/payload", CodeCrossOrigin},
	{"http:///127.0.0.1:$Q/payload", CodeCrossOrigin},
	// The own origin as user information, a fragment or a query in front
	// of another host.
	{"http://127.0.0.1:$P@127.0.0.1:$Q/payload", CodeCredentialsInURL},
	{"http://127.0.0.1:$P%40127.0.0.1:$Q/payload", CodeBadURI},
	{"http://127.0.0.1:$Q\\@127.0.0.1:$P/payload", CodeBadURI},
	{"http://evil.example#@127.0.0.1:$P/payload", CodeCrossOrigin},
	{"http://evil.example?@127.0.0.1:$P/payload", CodeCrossOrigin},
	{"http://127.0.0.1:$Q/payload#http://127.0.0.1:$P/payload", CodeCrossOrigin},
	// Control characters and blanks a lenient parser would drop.
	{" http://127.0.0.1:$Q/payload", CodeBadURI},
	{"http://127.0.0.1:$Q\t/payload", CodeBadURI},
	{"http://evil.example%00.127.0.0.1:$P/payload", CodeBadURI},
}

// TestHostileOtherOrigins runs the 42 spellings as rows: each is refused
// before dialing, with the Code given, and neither the fixture nor the
// live other server (nor one on 127.0.0.2 at the fixture's port, where
// that can be bound) sees a connection.
func TestHostileOtherOrigins(t *testing.T) {
	if len(otherOrigins) != 42 {
		t.Fatalf("%d spellings, want 42", len(otherOrigins))
	}
	var cases []hostileCase
	for i, s := range otherOrigins {
		cases = append(cases, hostileCase{
			name:   fmt.Sprintf("spelling-%02d", i+1),
			attack: "a reference at " + s.uri,
			stores: []string{"mem"},
			setup: func(h *hostileEnv) {
				startOther(h)
				// A server at the fixture's port on 127.0.0.2, where one
				// spelling would land, when the system lets one bind.
				h.other("127.0.0.2:" + h.port())
			},
			block: hblk(strings.ReplaceAll(s.uri, "$Q", "$OTHERPORT1"), ""),
			code:  s.code, requests: 0,
			check: func(t *testing.T, h *hostileEnv, _ fetchReturn) {
				for i, o := range h.others {
					if n := o.conns.Load(); n != 0 {
						t.Errorf("server other-%d accepted %d connections", i+1, n)
					}
				}
			},
		})
	}
	runHostile(t, cases)
}

// TestHostileForgedIDs: ids the registry never issued, or issued and let
// go, are unknown references: nothing is dialed or saved, and the error
// says only that the id (quoted, bounded) is unknown.
func TestHostileForgedIDs(t *testing.T) {
	leaks := newLeakCheck()
	e := newEnv(t, body(hostilePayload, ""))
	rec := e.ref(serverName, hblk("$ORIGIN/payload", ""))
	gone := e.ref(serverName, hblk("$ORIGIN/gone", ""))
	e.reg.Remove(gone.ID)
	other, err := refs.New(refs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	foreign := other.Register(context.Background(), hblkRegistration(t, e, "$ORIGIN/payload"))
	for _, tt := range []struct{ name, id string }{
		{"empty", ""},
		{"prefix-only", "ref_"},
		{"upper-case", strings.ToUpper(rec.ID)},
		{"trailing-space", rec.ID + " "},
		{"trailing-newline", rec.ID + "\n"},
		{"nul-suffix", rec.ID + "\x00"},
		{"with-extension", rec.ID + ".wav"},
		{"path-traversal", "../" + rec.ID},
		{"absolute-path", "/etc/passwd"},
		{"zero-width", rec.ID + "\u200b"},
		{"homoglyph", strings.Replace(rec.ID, "ref_", "rеf_", 1)}, // Cyrillic е
		{"uri-as-id", rec.URI},
		{"let-go", gone.ID},
		{"other-registry", foreign.ID},
		{"huge", "ref_" + strings.Repeat("a", 1<<20)},
		{"json", `{"id":"` + rec.ID + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.id == rec.ID {
				t.Fatal("a forged id equals the real one")
			}
			r := fetchBounded(t, e, context.Background(), tt.id, Request{Timeout: time.Second}, nil)
			if !errors.Is(r.err, refs.ErrUnknownReference) {
				t.Fatalf("err = %v, want an unknown reference", r.err)
			}
			var f *Failure
			if errors.As(r.err, &f) {
				t.Errorf("an unknown id came back as a fetch failure: %v", f)
			}
			if want := (&refs.UnknownError{ID: tt.id}).Error(); r.err.Error() != want || len(want) > 100 {
				t.Errorf("error %q, want the bounded %q", r.err, want)
			}
			if strings.Contains(r.err.Error(), token) {
				t.Errorf("error carries the token: %v", r.err)
			}
		})
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("forged ids made %d requests", n)
	}
	if s := e.mem.Saves(); len(s) != 0 {
		t.Errorf("forged ids saved %d copies", len(s))
	}
	leaks.check(t, e.srv.Close)
}

// hblkRegistration classifies a block at uri as the fixture server's
// content, for a registry of a test's own.
func hblkRegistration(t *testing.T, e *env, uri string) convert.Registration {
	t.Helper()
	b := convert.Classify([]byte(strings.ReplaceAll(hblk(uri, ""), "$ORIGIN", e.srv.URL)))
	if b.Kind != convert.KindReference {
		t.Fatalf("block is %s, not a reference", b.Kind)
	}
	return convert.Registration{Testimony: b.Testimony, Server: serverName}
}
