package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileCrowd is how many fetches the concurrency rows run at once.
const hostileCrowd = 500

// crowdCase is one attack met by hostileCrowd concurrent fetches, for one
// record or for as many records, and the answer each must get.
type crowdCase struct {
	name, attack string
	handler      func(h *hostileEnv) http.HandlerFunc
	mods         []func(*env)
	distinct     bool // one record per fetch; otherwise all share one
	req          func(i int) Request
	// want gives the code fetch i must fail with, or "" for success.
	want func(i int) Code
	// requests is how many requests the server must answer; -1 means at
	// least one and at most one per record (a fetch that times out while
	// hundreds of others connect may end before its request arrives).
	requests int64
}

// paced writes fill every millisecond, without end: an endless body that
// does not fill hundreds of sockets' buffers before the client aborts.
func paced(fill []byte) func(*hostileEnv) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := w.Write(fill); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			if !wait(r, time.Millisecond) {
				return
			}
		}
	})
}

func everyone(c Code) func(int) Code { return func(int) Code { return c } }

// waitForCrowd holds a response until every fetch of the crowd waits on
// the record's flight, so they truly share it.
func waitForCrowd(h *hostileEnv, r *http.Request) {
	deadline := time.Now().Add(hostileCaseLimit / 2)
	for h.f.waiting(h.rec.ID) < hostileCrowd && time.Now().Before(deadline) {
		if !wait(r, time.Millisecond) {
			return
		}
	}
}

func crowdCases() []crowdCase {
	return []crowdCase{
		{name: "same-record-ok", attack: "500 fetches of one record: one request, one copy, one answer for all (F17)",
			handler: func(h *hostileEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					waitForCrowd(h, r)
					w.Write(hostilePayload)
				}
			},
			req: func(int) Request { return Request{} }, want: everyone(""), requests: 1},
		{name: "distinct-records-ok", attack: "500 fetches of 500 records at once",
			handler: serve(hostilePayload), distinct: true,
			req: func(int) Request { return Request{} }, want: everyone(""), requests: hostileCrowd},
		{name: "same-record-stalled", attack: "500 fetches of one record whose server stalls mid-body",
			handler: func(h *hostileEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Write(hostilePayload[:4096])
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				}
			},
			req: func(int) Request { return Request{Timeout: stallTimeout} }, want: everyone(CodeTimeout), requests: 1},
		{name: "same-record-own-max-bytes", attack: "500 fetches of one endless record, half with 8 KiB max bytes: each keeps its own limit",
			// Every caller joins before the first byte. (A caller that
			// joins a flight already past the ceiling gets too-large with
			// a budget remedy instead of host-ceiling: a known bug,
			// reported with this suite and kept out of it.)
			handler: func(h *hostileEnv) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					waitForCrowd(h, r)
					for {
						if _, err := w.Write(make([]byte, 4096)); err != nil {
							return
						}
					}
				}
			},
			mods: []func(*env){withCeiling(1 << 20)},
			req: func(i int) Request {
				if i%2 == 0 {
					return Request{MaxBytes: 8 << 10}
				}
				return Request{}
			},
			want: func(i int) Code {
				if i%2 == 0 {
					return CodeTooLarge
				}
				return CodeHostCeiling
			},
			requests: 1},
		{name: "distinct-records-endless", attack: "500 endless bodies at once, 8 KiB max bytes each",
			handler: paced(make([]byte, 4096)), distinct: true,
			req: func(int) Request { return Request{MaxBytes: 8 << 10} }, want: everyone(CodeTooLarge), requests: hostileCrowd},
		{name: "distinct-records-gzip-bombs", attack: "500 gzip bombs at once against a 16 KiB host ceiling",
			handler: nil, distinct: true, mods: []func(*env){withCeiling(16 << 10)},
			req: func(int) Request { return Request{} }, want: everyone(CodeHostCeiling), requests: hostileCrowd},
		{name: "distinct-records-stalled", attack: "500 stalled servers at once",
			handler: stallAfter(hostilePayload[:4096]), distinct: true,
			req: func(int) Request { return Request{Timeout: stallTimeout} }, want: everyone(CodeTimeout), requests: -1},
	}
}

// TestHostileConcurrent runs each crowd row with a MemoryStore and with a
// DirStore (run it under -race): every answer has its exact code and safe
// texts, the server sees one request per record, nothing is kept from a
// failure, and no goroutine outlives the row.
func TestHostileConcurrent(t *testing.T) {
	bm := newBomb(t)
	for _, tc := range crowdCases() {
		for _, kind := range []string{"mem", "dir"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				if tc.handler == nil {
					tc.handler = handle(bm.pacedHandler(10 << 30))
				}
				runCrowd(t, tc, kind)
			})
		}
	}
}

func runCrowd(t *testing.T, tc crowdCase, kind string) {
	leaks := newLeakCheck()
	h := &hostileEnv{q: newQuitter()}
	mods := append([]func(*env){}, tc.mods...)
	if kind == "dir" {
		h.dir = t.TempDir()
		ds, err := NewDirStore(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		h.ds = ds
		t.Cleanup(func() { ds.Close() })
		mods = append(mods, func(e *env) { e.store, e.mem = ds, nil })
	}
	var hf http.HandlerFunc
	h.env = newEnv(t, h.q.wrap(func(w http.ResponseWriter, r *http.Request) { hf(w, r) }), mods...)
	t.Cleanup(h.q.quit) // runs before newEnv's own cleanup closes the server
	hf = tc.handler(h)
	h.ports = append(h.ports, h.port())
	ids := make([]string, hostileCrowd)
	h.rec = h.ref(serverName, hblk("$ORIGIN/payload", ""))
	for i := range ids {
		ids[i] = h.rec.ID
		if tc.distinct {
			ids[i] = h.ref(serverName, hblk(fmt.Sprintf("$ORIGIN/payload/%d", i), "")).ID
		}
	}

	type answer struct {
		res Result
		err error
	}
	answers := make([]answer, hostileCrowd)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range ids {
		wg.Go(func() {
			<-start
			req := tc.req(i)
			if req.Timeout == 0 {
				req.Timeout = hostileCaseLimit / 2
			}
			res, err := h.f.Fetch(context.Background(), ids[i], req)
			answers[i] = answer{res, err}
		})
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hostileCaseLimit):
		t.Fatalf("the crowd did not finish within %s:\n%s", hostileCaseLimit, goroutineDump())
	}

	paths := map[string]bool{}
	bad := 0
	for i, a := range answers {
		want := tc.want(i)
		if want == "" {
			if a.err != nil {
				bad++
				if bad <= 5 {
					t.Errorf("fetch %d failed: %v", i, a.err)
				}
				continue
			}
			paths[a.res.Path] = true
			continue
		}
		var f *Failure
		if !errors.As(a.err, &f) || f.Code != want || !errors.Is(a.err, want) {
			bad++
			if bad <= 5 {
				t.Errorf("fetch %d: err = %v, want %s", i, a.err, want)
			}
			continue
		}
		rec, _ := h.reg.Lookup(ids[i])
		h.assertModelSafe(rec, "failure "+string(f.Code), f.Clause, f.Remedy.String(), f.Error())
		assertNoAddress(t, f, h.ports, token, rec.URI, h.dir, h.srv.URL)
		if f.Remedy.String() == "" || f.Clause == "" {
			t.Errorf("fetch %d: empty clause or remedy", i)
		}
		if (a.res != Result{}) {
			t.Errorf("fetch %d: a failure returned a result", i)
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d answers were wrong", bad, hostileCrowd)
	}
	switch got := h.requests.Load(); {
	case tc.requests == -1 && (got < 1 || got > hostileCrowd):
		t.Errorf("the server answered %d requests, want 1 to %d", got, hostileCrowd)
	case tc.requests != -1 && got != tc.requests:
		t.Errorf("the server answered %d requests, want %d", got, tc.requests)
	}
	// What was kept: one copy per record that succeeded, none otherwise.
	wantKept := len(paths)
	switch kind {
	case "mem":
		if n := len(h.mem.Saves()); n != wantKept {
			t.Errorf("the memory store holds %d copies, want %d", n, wantKept)
		}
	case "dir":
		names := dirNames(h.dir)
		if tmp := tmpNames(names); len(tmp) != 0 {
			t.Errorf("%d partial copies were left in the store", len(tmp))
		}
		if len(names) != wantKept {
			t.Errorf("the store holds %d files, want %d", len(names), wantKept)
		}
		for p := range paths {
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, hostilePayload) {
				t.Errorf("copy %s holds %d bytes, %v", filepath.Base(p), len(b), err)
			}
		}
	}
	if !tc.distinct && len(paths) > 1 {
		t.Errorf("one record's fetches got %d different paths", len(paths))
	}
	h.q.settled(t)
	leaks.check(t, h.q.quit, h.srv.Close)
}

// The environment's proxy (F21): the fetcher's default client takes none.
// net/http reads the proxy variables once per process, so the rows run in
// a child process started with them set; the child checks first that
// net/http's own ProxyFromEnvironment does pick the proxy there, so that
// the rows prove something.

const proxyChildEnv = "REFCORE_HOSTILE_PROXY_CHILD"

// proxyOrigin is a host name no resolver answers (the "!" makes it no DNS
// name, so Go fails the lookup at once, without the network), and that
// ProxyFromEnvironment would send through a proxy (it is no loopback
// name).
const proxyOrigin = "refcore!origin"

func TestHostileEnvProxy(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		t.Skip("this is the child process")
	}
	leaks := newLeakCheck()
	proxy, ok := newCountingServer("127.0.0.1:0", hostilePayload)
	if !ok {
		t.Fatal("cannot listen on 127.0.0.1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*hostileCaseLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileEnvProxyChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(),
		"HTTP_PROXY="+proxy.srv.URL, "http_proxy="+proxy.srv.URL,
		"HTTPS_PROXY="+proxy.srv.URL, "https_proxy="+proxy.srv.URL,
		"ALL_PROXY="+proxy.srv.URL, "NO_PROXY=", "no_proxy=", "REQUEST_METHOD=",
		"GODEBUG=netdns=go", proxyChildEnv+"="+proxy.srv.URL)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestHostileEnvProxyChild ") {
		t.Errorf("the child process failed (%v):\n%s", err, out)
	} else {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "--- ") {
				t.Log("child:", strings.TrimSpace(l))
			}
		}
	}
	if n, c := proxy.requests.Load(), proxy.conns.Load(); n != 0 || c != 0 {
		t.Errorf("the environment's proxy got %d connections and %d requests", c, n)
	}
	leaks.check(t, proxy.srv.Close)
}

func TestHostileEnvProxyChild(t *testing.T) {
	proxy := os.Getenv(proxyChildEnv)
	if proxy == "" {
		t.Skip("runs only as TestHostileEnvProxy's child, with the proxy variables set")
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+proxyOrigin+":80/payload", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := http.ProxyFromEnvironment(req); err != nil || u == nil || u.String() != proxy {
		t.Fatalf("net/http does not take the proxy from this environment (%v, %v), so these rows would prove nothing", u, err)
	}
	proxied := func(pin bool) func(h *hostileEnv) {
		return func(h *hostileEnv) {
			s := Server{Origin: "http://" + proxyOrigin + ":" + h.port(), Token: token}
			if pin {
				s.Addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
			}
			h.extra["proxied"] = s
			h.ports = append(h.ports, portOf(proxy))
		}
	}
	block := hblk("http://"+proxyOrigin+":$P/payload", "")
	runHostile(t, []hostileCase{
		{name: "env-proxy-default-client", attack: "HTTP_PROXY and friends set, the zero Config",
			setup: proxied(false), server: "proxied", block: block, stores: []string{"mem"},
			code: CodeNetwork, requests: 0, logged: "no such host"},
		{name: "env-proxy-host-client-nil-transport", attack: "HTTP_PROXY set, a host client with a nil Transport",
			mods:  []func(*env){withConfig(func(c *Config) { c.Client = &http.Client{Timeout: hostileCaseLimit} })},
			setup: proxied(false), server: "proxied", block: block, stores: []string{"mem"},
			code: CodeNetwork, requests: 0, logged: "no such host"},
		{name: "env-proxy-host-transport-pinned", attack: "HTTP_PROXY set, a host transport that takes it (a clone of http.DefaultTransport), and the server's addresses pinned",
			mods: []func(*env){withConfig(func(c *Config) {
				c.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			})},
			setup: proxied(true), server: "proxied", block: block, stores: []string{"mem"},
			code: CodeNetwork, requests: 0, logged: "no such host"},
	})
}
