package capture

import (
	"io"
	"mime"
	"net/http"
	"sync"
)

// Transport returns an http.RoundTripper that sends each request through
// base (http.DefaultTransport when nil) and reads the JSON-RPC traffic of
// MCP's streamable HTTP transport as it passes: the request's body through
// a second copy from req.GetBody, and each application/json or
// text/event-stream response body in the very reads the SDK makes.
// Headers, bodies and the timing of every byte are left as they are, so
// the session keeps its protocol version, its session id and its
// background event stream.
//
// A request whose context was made by [WithCall] (or whose params carry
// [Meta]) has its tool result kept for [Capture.Take]. A request whose
// body cannot be read again (no GetBody) is still known by its context:
// the results on its own response stream go to its call.
func (c *Capture) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{c: c, base: base}
}

type roundTripper struct {
	c    *Capture
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	x := t.c.watch(req)
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		return resp, err
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "text/event-stream":
		f := newSSEStream(t.c.maxBytes, func(s *jsonScan) bool { return t.c.incoming(s, x) }, func(s *jsonScan) { t.c.incomingOther(s, x) })
		resp.Body = &tapBody{rc: resp.Body, write: f.write, end: f.end}
	case "application/json":
		f := newBodyStream(t.c.maxBytes, func(s *jsonScan) { t.c.incoming(s, x) })
		resp.Body = &tapBody{rc: resp.Body, write: f.write, end: func() {}}
	}
	return resp, err
}

// watch reads the request's body from a second copy, remembering each
// request it carries, and returns the exchange its response is read on.
func (c *Capture) watch(req *http.Request) *exchange {
	u := req.URL
	x := &exchange{c: c, scope: u.Scheme + "://" + u.Host + u.Path + "\x00" + req.Header.Get("Mcp-Session-Id")}
	if req.Body == nil || req.Body == http.NoBody {
		return x
	}
	token := tokenOf(req.Context())
	if req.GetBody == nil {
		x.blind = token
		return x
	}
	body, err := req.GetBody()
	if err != nil {
		x.blind = token
		return x
	}
	defer body.Close()
	f := newJSONStream(c.maxBytes, func(s *jsonScan) { c.outgoing(s, token, x) })
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		f.write(buf[:n])
		if err != nil {
			break
		}
	}
	return x
}

// An exchange is one HTTP request and the response stream it opened.
type exchange struct {
	c     *Capture
	scope string              // the endpoint and session the request went to
	blind string              // the context's token, when the body could not be read
	calls map[string]callInfo // the requests the body carried; under c.mu
}

func (x *exchange) key(id string) string { return x.scope + "\x00" + id }

func (x *exchange) record(id string, info callInfo) {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if x.calls == nil {
		x.calls = map[string]callInfo{}
	}
	x.calls[id] = info
	// Remembered for the session too: after a broken stream, the answer
	// may come on the stream that resumes it.
	x.c.pending.put(x.key(id), info)
}

func (x *exchange) route(id string) (callInfo, bool) {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if info, ok := x.calls[id]; ok {
		delete(x.calls, id)
		x.c.pending.take(x.key(id))
		return info, true
	}
	if info, ok := x.c.pending.take(x.key(id)); ok {
		return info, true
	}
	if x.blind != "" {
		return callInfo{token: x.blind}, true
	}
	return callInfo{}, false
}

// others returns, when id is none of the requests this exchange's body
// carried and still waits on, those requests: mcp-go hands the first
// response on a request's stream to that request, whatever its id.
func (x *exchange) others(id string) []string {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if _, ok := x.calls[id]; ok {
		return nil
	}
	ids := make([]string, 0, len(x.calls))
	for other := range x.calls {
		ids = append(ids, other)
	}
	return ids
}

func (x *exchange) forget(id string) {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	x.c.pending.take(x.key(id))
}

// A tapBody hands the SDK each read exactly as the body gave it, after
// following the bytes read.
type tapBody struct {
	rc    io.ReadCloser
	write func([]byte)
	end   func()

	mu   sync.Mutex
	done bool
}

// Read implements io.Reader.
func (b *tapBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.rc.Read(p)
	if !b.done {
		if n > 0 {
			b.write(p[:n])
		}
		if err == io.EOF {
			b.end()
		}
		b.done = err != nil
	}
	return n, err
}

// Close implements io.Closer.
func (b *tapBody) Close() error {
	return b.rc.Close()
}
