package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// callInfo is what the capture learned of a request the client sent.
type callInfo struct {
	token  string // the call token, from the context or the request's _meta
	method string
}

// A link is one connection's memory of the requests its client sent.
type link interface {
	// record remembers a request until its answer arrives.
	record(id string, info callInfo)
	// route returns, and forgets, what is known of the request a response
	// with this id answers.
	route(id string) (callInfo, bool)
	// forget drops a request whose answer will not come.
	forget(id string)
	// others returns the requests this connection still waits on that a
	// response with this id, not one of them, may be taken for.
	others(id string) []string
}

// blockList decodes a content member: a JSON array's elements, each kept
// as the raw bytes the server wrote. Anything else is not a list.
type blockList struct {
	blocks []json.RawMessage
	list   bool
	size   int64
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *blockList) UnmarshalJSON(data []byte) error {
	*b = blockList{} // a member named again replaces the one before
	if len(data) == 0 || data[0] != '[' {
		return nil
	}
	if err := json.Unmarshal(data, &b.blocks); err != nil {
		b.blocks = nil
		return nil
	}
	b.list = true
	for _, blk := range b.blocks {
		b.size += int64(len(blk))
	}
	return nil
}

// inMessage is a message from a server, each member raw. Found by its
// name in any letter case, as encoding/json finds it; a text whose keys
// differ from go-sdk's exact names in case never gets here (see
// Capture.incoming).
type inMessage struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
	Result *resultReading  `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// method returns the message's method and whether it names one. As for
// both SDKs, a "method" member makes the message a request or a
// notification whatever its value, "" and null included; ok is false
// when the value is not a string or null, which go-sdk refuses.
func (m *inMessage) method() (method string, has, ok bool) {
	if len(m.Method) == 0 {
		return "", false, true
	}
	err := json.Unmarshal(m.Method, &method)
	return method, true, err == nil
}

// wireError is the shape go-sdk decodes an "error" member into; a value
// of another shape fails the whole message.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// resultReading is what the capture reads of a result: its content
// blocks, when "content" is an array, and isError. bad is set when the
// result names one of those members in another letter case (go-sdk
// reads the exact names, mcp-go any case) or isError is not a boolean.
// It reads the result where it stands in the message, so its bytes are
// copied once, into the blocks, however large the result.
type resultReading struct {
	content blockList
	isError bool
	bad     bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *resultReading) UnmarshalJSON(data []byte) error {
	*r = resultReading{}
	var names map[string]skipped
	if json.Unmarshal(data, &names) != nil {
		return nil // not an object: no content
	}
	for k := range names {
		if (k != "content" && strings.EqualFold(k, "content")) || (k != "isError" && strings.EqualFold(k, "isError")) {
			r.bad = true
			return nil
		}
	}
	var v struct {
		Content blockList `json:"content"`
		IsError *bool     `json:"isError"`
	}
	if json.Unmarshal(data, &v) != nil {
		r.bad = true // isError is not a boolean
		return nil
	}
	r.content, r.isError = v.Content, v.IsError != nil && *v.IsError
	return nil
}

// skipped is a JSON value read and not kept.
type skipped struct{}

// UnmarshalJSON implements json.Unmarshaler.
func (skipped) UnmarshalJSON([]byte) error { return nil }

// outMessage is the part of a message from the client the capture reads.
type outMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		RequestID json.RawMessage            `json:"requestId"`
	} `json:"params"`
}

// decode reads data into v, taking what decodes when a member has an
// unexpected type; it fails only for text that is not JSON.
func decode(data []byte, v any) bool {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// each calls fn with each message of a JSON text: the text itself, or the
// elements of a batch.
func each(data []byte, fn func([]byte)) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	if data[0] != '[' {
		fn(data)
		return
	}
	var batch []json.RawMessage
	if json.Unmarshal(data, &batch) != nil {
		return
	}
	for _, m := range batch {
		fn(m)
	}
}

// canonID returns a JSON-RPC id as compact JSON text, or "" for none. A
// number is read as go-sdk reads it: as a float64, then cut to the
// int64 below it, so 2, 2.0 and 2.5 are all the id 2.
func canonID(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			return ""
		}
		return b.String()
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return "" // an id is a string or a number
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || !json.Valid(raw) {
		return ""
	}
	return strconv.FormatInt(int64(f), 10)
}

// unquote returns the string a noted JSON string value holds, or "".
func unquote(raw []byte) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// answersTool reports whether a response to method can carry a tool
// result; an unknown method can.
func answersTool(method string) bool {
	return method == "" || method == "tools/call" || method == "tasks/result"
}

// incoming handles one JSON text a server sent, on l, and reports whether
// the SDKs read it alike. go-sdk fails the whole stream at a text that is
// not one JSON-RPC message it can decode, while mcp-go and the capture
// read more: a batch; a message without "jsonrpc": "2.0", with a member
// named twice, in another letter case or escaped, nested 1000 deep, or
// with a method or error of the wrong type; a result naming its content
// in another letter case. Such a text is handled as one the SDKs read
// differently: a response in it marks its call ambiguous, and it reports
// false.
func (c *Capture) incoming(s *jsonScan, l link) bool {
	if s.over {
		c.incomingTooLarge(canonID(s.id), unquote(s.method), l)
		return true
	}
	var m inMessage
	if !s.obj || s.variant || string(s.version) != `"2.0"` || json.Unmarshal(s.buf, &m) != nil || !c.incomingOne(&m, l) {
		c.incomingOther(s, l)
		return false
	}
	return true
}

// incomingOne handles one message that go-sdk decodes as the others do,
// and reports false, having done nothing, for one it does not.
func (c *Capture) incomingOne(m *inMessage, l link) bool {
	id := canonID(m.ID)
	method, hasMethod, ok := m.method()
	if !ok || (id == "" && !isNull(m.ID)) {
		return false
	}
	if hasMethod {
		if id == "" {
			c.notify(method, m.Params)
		}
		// A request from the server is neither a result nor a
		// notification.
		return true
	}
	if id == "" {
		return false // a response to no request, which go-sdk refuses
	}
	failed := !isNull(m.Error)
	if failed && json.Unmarshal(m.Error, new(wireError)) != nil {
		return false
	}
	var r resultReading
	if m.Result != nil {
		r = *m.Result
	}
	if r.bad {
		return false
	}
	content, isError := r.content, r.isError
	// mcp-go hands a request the first response on its stream, whatever
	// its id: a response to another request marks that request ambiguous.
	for _, other := range l.others(id) {
		c.otherAnswer(other, "", l)
	}
	info, _ := l.route(id)
	if failed || !content.list {
		return true // an error, or no content: no result to keep
	}
	c.keep(info.token, held{
		res:  Result{ID: id, Method: info.method, Content: content.blocks, IsError: isError},
		size: content.size,
	})
	return true
}

// isNull reports whether a raw member is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// incomingTooLarge handles a message from a server that was larger than
// the bound, from what was noted of it on the way.
func (c *Capture) incomingTooLarge(id, method string, l link) {
	c.mu.Lock()
	c.tooLarge++
	c.mu.Unlock()
	if method != "" || id == "" {
		return // a notification or request, or a message that names no call
	}
	info, _ := l.route(id)
	if !answersTool(info.method) {
		return
	}
	c.keep(info.token, held{res: Result{ID: id, Method: info.method}, tooLarge: true})
}

// incomingOther handles one JSON text a server sent, on l, that the SDKs
// read differently: in an event of a type other than "message" (one SDK
// takes such an event, another skips it), or over stdio across more than
// one line (one SDK decodes it whole, another line by line). A response
// in it marks its call ambiguous.
func (c *Capture) incomingOther(s *jsonScan, l link) {
	if s.over {
		c.otherAnswer(canonID(s.id), unquote(s.method), l)
		return
	}
	each(s.buf, func(data []byte) { c.otherMessage(data, l) })
}

// incomingSpanning handles, over stdio, one JSON text a server sent
// across more than one line. go-sdk decodes the text whole; mcp-go reads
// each of its lines alone and takes any that parses as a message. A
// response in either reading marks its call ambiguous. A text too large
// to keep cannot be read line by line, so it marks every call still
// waiting for its answer.
func (c *Capture) incomingSpanning(s *jsonScan, p *pipe) {
	if s.over {
		for _, id := range p.pendingIDs() {
			c.otherAnswer(id, "", p)
		}
		return
	}
	c.incomingOther(s, p)
	for _, line := range bytes.Split(s.buf, []byte("\n")) {
		c.otherMessage(line, p)
	}
}

// otherMessage marks ambiguous the call a message the SDKs read
// differently answers, if it may answer one: unless it names a method
// both read as one (a string, or null).
func (c *Capture) otherMessage(data []byte, l link) {
	var m inMessage
	if !decode(data, &m) {
		return
	}
	if _, has, ok := m.method(); has && ok {
		return // a request or notification for both SDKs
	}
	c.otherAnswer(canonID(m.ID), "", l)
}

// otherAnswer marks ambiguous the call that a message with id id and
// method method answers, if it answers one.
func (c *Capture) otherAnswer(id, method string, l link) {
	if method != "" || id == "" {
		return // a notification or a request, which answers no call
	}
	info, _ := l.route(id)
	if !answersTool(info.method) {
		return
	}
	c.keep(info.token, held{res: Result{ID: id, Method: info.method}, ambiguous: true})
}

// keep holds a result under its call's token, or under its id when the
// request carried none. A result for a later request of the same call
// replaces the one held. A second answer to the same request that
// differs from the one held (an SDK takes the first) leaves only a mark
// that the call is ambiguous; the same answer again, as a resumed stream
// may replay it, changes nothing.
func (c *Capture) keep(token string, h held) {
	key := "i" + h.res.ID
	if token != "" {
		key = "t" + token
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.results.peek(key); ok && old.res.ID == h.res.ID {
		if sameAnswer(old, h) {
			return
		}
		h = held{res: Result{ID: h.res.ID, Method: h.res.Method}, ambiguous: true}
	}
	c.results.put(key, h)
}

// sameAnswer reports whether a and b hold the same result, byte for byte.
func sameAnswer(a, b held) bool {
	if a.tooLarge || a.ambiguous || b.tooLarge || b.ambiguous ||
		a.res.IsError != b.res.IsError || len(a.res.Content) != len(b.res.Content) {
		return false
	}
	for i := range a.res.Content {
		if !bytes.Equal(a.res.Content[i], b.res.Content[i]) {
			return false
		}
	}
	return true
}

// notify queues a notification, letting the oldest go when the queue is
// full. It never waits.
func (c *Capture) notify(method string, params json.RawMessage) {
	if c.notes == nil {
		return
	}
	n := Notification{Method: method, Params: params}
	if len(params) > 0 {
		var p struct {
			Content blockList `json:"content"`
		}
		if decode(params, &p) && p.Content.list {
			n.Content = p.Content.blocks
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case c.notes <- n:
		return
	default:
	}
	select {
	case <-c.notes:
		c.notesDropped++
	default:
	}
	select {
	case c.notes <- n:
	default:
		c.notesDropped++
	}
}

// outgoing handles one JSON text the client sent on l; ctxToken is the
// token of the call the request's context marks, when the capture can see
// that context.
func (c *Capture) outgoing(s *jsonScan, ctxToken string, l link) {
	if s.over {
		// Too large to read whole: remember the request by what was noted,
		// without a token from its _meta.
		if id, method := canonID(s.id), unquote(s.method); id != "" && method != "" {
			l.record(id, callInfo{token: ctxToken, method: method})
		}
		return
	}
	each(s.buf, func(data []byte) {
		var m outMessage
		if !decode(data, &m) || m.Method == "" {
			return // a response to the server's request
		}
		id := canonID(m.ID)
		if id == "" {
			if m.Method == "notifications/cancelled" {
				if r := canonID(m.Params.RequestID); r != "" {
					l.forget(r)
				}
			}
			return
		}
		token := ctxToken
		if token == "" {
			token = unquote(m.Params.Meta[MetaKey])
		}
		l.record(id, callInfo{token: token, method: m.Method})
	})
}
