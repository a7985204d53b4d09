package emit

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
)

// maxHeld bounds what Handler holds back at once: a whole JSON response,
// or one server-sent event still being written. A response or event past
// it goes out as it is, placeholders unswapped.
const maxHeld = 32 << 20

// Handler wraps an MCP server's streamable-HTTP handler (or any handler
// that answers JSON-RPC over HTTP) so that the placeholders its tools
// return leave as reference blocks. It changes responses only, in the way
// [RewriteMessage] describes, and only these:
//
//   - A response whose Content-Type is application/json is held until the
//     wrapped handler returns, then rewritten and sent with its new
//     Content-Length.
//   - A response whose Content-Type is text/event-stream is rewritten one
//     event at a time: each event is sent once its closing blank line has
//     been written, and a Flush sends every complete event before
//     flushing. In a rewritten event the data lines are replaced, where
//     the first stood, by the rewritten message: one data line for each
//     line it has, so the message keeps any line breaks it had. The
//     event's other fields (event, id, retry, comments) are kept in order,
//     and every line ends in "\n".
//
// Any other response, and one with a Content-Encoding, passes through
// untouched, as does a JSON response larger than 32 MiB. An event stream
// passes through untouched from the moment more than 32 MiB of it is held
// with no complete event in it (an event written in pieces that grows past
// that): that event and every later one on the stream go out as written,
// placeholders included. An event written whole in one Write is rewritten
// whatever its size.
// Requests are never read or changed. The wrapper passes Flush on, and
// its Unwrap method lets http.ResponseController reach the connection.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &rewriter{w: w}
		next.ServeHTTP(rw, r)
		rw.finish() // not deferred: a handler that panics sends nothing held
	})
}

// mode is how the rewriter treats the response body.
type mode int

const (
	modeUndecided mode = iota
	modePass           // untouched
	modeJSON           // held whole, rewritten at the end
	modeEvents         // rewritten event by event
)

// rewriter is the http.ResponseWriter Handler gives the wrapped handler.
type rewriter struct {
	w    http.ResponseWriter
	mode mode
	code int
	held []byte // a JSON body, or the events not yet complete
	// seen is how far the search for the end of the first event held has
	// gone without finding it, so that an event written in many pieces
	// is searched once, not once per piece.
	seen eventSearch
}

func (rw *rewriter) Header() http.Header { return rw.w.Header() }

// Unwrap returns the underlying writer, for http.ResponseController.
func (rw *rewriter) Unwrap() http.ResponseWriter { return rw.w }

func (rw *rewriter) WriteHeader(code int) {
	if rw.mode != modeUndecided {
		return
	}
	if code < 200 {
		rw.w.WriteHeader(code) // informational: the real header comes later
		return
	}
	rw.code = code
	h := rw.w.Header()
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case h.Get("Content-Encoding") != "":
		rw.mode = modePass
	case mt == "application/json":
		rw.mode = modeJSON
		return // the header goes out with the body
	case mt == "text/event-stream":
		rw.mode = modeEvents
		h.Del("Content-Length")
	default:
		rw.mode = modePass
	}
	rw.w.WriteHeader(code)
}

func (rw *rewriter) Write(p []byte) (int, error) {
	if rw.mode == modeUndecided {
		if rw.w.Header().Get("Content-Type") == "" {
			// Leave the content type to net/http's sniffing; such a
			// body is no JSON-RPC response this wrapper knows.
			rw.mode = modePass
		} else {
			rw.WriteHeader(http.StatusOK)
		}
	}
	switch rw.mode {
	case modeJSON:
		if len(rw.held)+len(p) > maxHeld {
			if err := rw.release(); err != nil {
				return 0, err
			}
			return rw.w.Write(p)
		}
		rw.held = append(rw.held, p...)
		return len(p), nil
	case modeEvents:
		rw.held = append(rw.held, p...)
		if err := rw.sendEvents(); err != nil {
			return 0, err
		}
		if len(rw.held) > maxHeld {
			if err := rw.release(); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	return rw.w.Write(p)
}

// Flush sends every complete event, then flushes the connection. A JSON
// response stays held: it is rewritten whole.
func (rw *rewriter) Flush() {
	if rw.mode == modeUndecided {
		rw.WriteHeader(http.StatusOK) // as net/http does on a first flush
	}
	if rw.mode == modeEvents {
		if rw.sendEvents() != nil {
			return
		}
	}
	if rw.mode == modeJSON {
		return
	}
	if f, ok := rw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// release gives up on rewriting: what is held goes out as it is, and so
// does everything after it.
func (rw *rewriter) release() error {
	if rw.mode == modeJSON {
		rw.w.WriteHeader(rw.code)
	}
	rw.mode = modePass
	held := rw.held
	rw.held, rw.seen = nil, eventSearch{}
	_, err := rw.w.Write(held)
	return err
}

// finish sends what is still held once the wrapped handler returns.
func (rw *rewriter) finish() {
	switch rw.mode {
	case modeJSON:
		body, _ := RewriteMessage(rw.held)
		if rw.w.Header().Get("Content-Length") != "" {
			rw.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		rw.w.WriteHeader(rw.code)
		_, _ = rw.w.Write(body)
	case modeEvents:
		if rw.sendEventsAt(true) == nil && len(rw.held) > 0 {
			_, _ = rw.w.Write(rw.held) // an event left unterminated
		}
	}
	rw.held = nil
}

// sendEvents writes out every complete event held, rewritten, and keeps
// the incomplete rest.
func (rw *rewriter) sendEvents() error { return rw.sendEventsAt(false) }

// sendEventsAt is sendEvents; atEnd says the stream has ended, so a "\r"
// that ends what is held ends a line.
func (rw *rewriter) sendEventsAt(atEnd bool) error {
	done := 0
	var out []byte
	for {
		end, ok := rw.seen.eventEnd(rw.held[done:], atEnd)
		if !ok {
			break
		}
		out = append(out, rewriteEvent(rw.held[done:done+end])...)
		done += end
	}
	if done == 0 {
		return nil
	}
	rw.held = append(rw.held[:0], rw.held[done:]...)
	_, err := rw.w.Write(out)
	return err
}

// eventSearch is where a search for the end of an event stopped: the
// first byte not yet looked at, and the start of the line it is in.
type eventSearch struct{ from, lineStart int }

// eventEnd finds the end of the first complete event in b: just after the
// blank line that closes it. Lines end in "\n", "\r\n" or a lone "\r"; a
// "\r" at the very end of b waits for the next byte unless atEnd. It
// resumes where the last call stopped without an end, on the same bytes
// with more appended, and once it finds one the next call starts afresh
// on the bytes after it.
func (s *eventSearch) eventEnd(b []byte, atEnd bool) (int, bool) {
	lineStart := s.lineStart
	for i := s.from; i < len(b); i++ {
		k := bytes.IndexAny(b[i:], "\r\n")
		if k < 0 {
			break
		}
		i += k
		c := b[i]
		next := i + 1
		if c == '\r' {
			if next == len(b) && !atEnd {
				*s = eventSearch{from: i, lineStart: lineStart}
				return 0, false
			}
			if next < len(b) && b[next] == '\n' {
				next++
			}
		}
		if i == lineStart {
			*s = eventSearch{}
			return next, true
		}
		lineStart = next
		i = next - 1
	}
	*s = eventSearch{from: len(b), lineStart: lineStart}
	return 0, false
}

// rewriteEvent rewrites the message one complete event carries, or returns
// the event unchanged.
func rewriteEvent(ev []byte) []byte {
	if !bytes.Contains(ev, []byte(placeholderTag)) {
		return ev
	}
	lines := splitLines(ev)
	var data [][]byte
	for _, l := range lines {
		if v, ok := dataValue(l); ok {
			data = append(data, v)
		}
	}
	msg, changed := RewriteMessage(bytes.Join(data, []byte("\n")))
	if !changed {
		return ev
	}
	var out []byte
	wrote := false
	for _, l := range lines {
		if _, ok := dataValue(l); ok {
			if !wrote {
				for _, m := range bytes.Split(msg, []byte("\n")) {
					out = append(out, "data: "...)
					out = append(out, m...)
					out = append(out, '\n')
				}
				wrote = true
			}
			continue
		}
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}

// splitLines splits a complete event into its lines, without their
// endings; the last line is the blank one that closed the event.
func splitLines(ev []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i := 0; i < len(ev); i++ {
		c := ev[i]
		if c != '\n' && c != '\r' {
			continue
		}
		lines = append(lines, ev[start:i])
		if c == '\r' && i+1 < len(ev) && ev[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	return lines
}

// dataValue returns the value of a "data" field line: what follows the
// colon, less one space after it.
func dataValue(line []byte) ([]byte, bool) {
	v, ok := bytes.CutPrefix(line, []byte("data"))
	if !ok {
		return nil, false
	}
	if len(v) == 0 {
		return v, true // "data" alone is a data field with an empty value
	}
	if v[0] != ':' {
		return nil, false
	}
	v = v[1:]
	if len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	return v, true
}
