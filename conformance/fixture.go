package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mcplrefs/refcore/conformance/vectors"
)

// Fixture is one case's loopback world: the origin the fixture server was
// dialed at, which serves the payload as the case says, and a second origin
// that a redirect points to. Both record what reached them.
type Fixture struct {
	// Origin is the fixture server's origin, such as http://127.0.0.1:4123.
	Origin string
	// Token is the connection credential.
	Token string

	origin, other *httptest.Server
	mu            sync.Mutex
	requests      int
	otherRequests int
	originAuth    []string
	otherAuth     []string
	streamAborted bool
	chunksSent    int
	streamDone    chan struct{}
}

// Network is what the fixture servers saw, for the judge.
type Network struct {
	// Requests counts requests to the origin; OtherRequests to the second
	// origin, which a redirect points to.
	Requests, OtherRequests int
	// OriginAuth and OtherAuth list the Authorization headers each saw, in
	// order ("" for a request without one).
	OriginAuth, OtherAuth []string
	// StreamAborted is set when a continuing stream's client closed the
	// connection before the stream's last chunk.
	StreamAborted bool
	// ChunksSent counts the chunks of a continuing stream written before
	// it ended or its client left.
	ChunksSent int
}

// NewFixture starts the servers for case c, whose response settings it
// reads. Close it when done.
func NewFixture(c vectors.Case, token string) (*Fixture, error) {
	f := &Fixture{Token: token, streamDone: make(chan struct{})}
	var body []byte
	if c.Response != nil && c.Response.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(c.Response.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("conformance: case %q: bodyBase64: %w", c.ID, err)
		}
		body = b
	}
	f.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.otherRequests++
		f.otherAuth = append(f.otherAuth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header()["Content-Type"] = nil
		_, _ = w.Write(body)
	}))
	f.origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests++
		f.originAuth = append(f.originAuth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		f.serve(w, r, c.Response, body)
	}))
	f.Origin = f.origin.URL
	return f, nil
}

func (f *Fixture) serve(w http.ResponseWriter, r *http.Request, resp *vectors.Response, body []byte) {
	if resp == nil {
		w.Header()["Content-Type"] = nil
		_, _ = w.Write(body)
		return
	}
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	} else {
		w.Header()["Content-Type"] = nil // no sniffing on the server side
	}
	switch {
	case resp.Redirect:
		http.Redirect(w, r, f.other.URL+r.URL.Path, http.StatusFound)
	case resp.Stream != nil:
		f.stream(w, r, resp.Stream)
	case resp.Gzip:
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(buf.Bytes())
	default:
		_, _ = w.Write(body)
	}
}

// stream writes the continuing stream, noting whether the client left
// before its end.
func (f *Fixture) stream(w http.ResponseWriter, r *http.Request, s *vectors.Stream) {
	defer func() {
		select {
		case <-f.streamDone:
		default:
			close(f.streamDone)
		}
	}()
	flusher, _ := w.(http.Flusher)
	chunk := []byte(strings.Repeat("s", s.ChunkBytes))
	for i := 0; i < s.Chunks; i++ {
		if _, err := w.Write(chunk); err != nil {
			f.abort()
			return
		}
		f.mu.Lock()
		f.chunksSent++
		f.mu.Unlock()
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			f.abort()
			return
		case <-time.After(time.Duration(s.IntervalMs) * time.Millisecond):
		}
	}
}

func (f *Fixture) abort() {
	f.mu.Lock()
	f.streamAborted = true
	f.mu.Unlock()
}

// Network returns what the fixture saw so far. For a streaming case it
// waits (up to a few seconds) for the stream handler to finish, so an
// abort is seen.
func (f *Fixture) Network(streaming bool) Network {
	f.mu.Lock()
	dialed := f.requests > 0
	f.mu.Unlock()
	if streaming && dialed {
		select {
		case <-f.streamDone:
		case <-time.After(5 * time.Second):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return Network{Requests: f.requests, OtherRequests: f.otherRequests,
		OriginAuth: append([]string(nil), f.originAuth...), OtherAuth: append([]string(nil), f.otherAuth...),
		StreamAborted: f.streamAborted, ChunksSent: f.chunksSent}
}

// Close stops both servers.
func (f *Fixture) Close() {
	f.origin.CloseClientConnections()
	f.other.CloseClientConnections()
	f.origin.Close()
	f.other.Close()
}
