package capture

import (
	"bytes"
	"strings"
)

// The states of a top-level object's members, as a jsonScan follows them.
const (
	memberKey       = iota // a key may start (after '{' or ',')
	memberInKey            // inside a key's string
	memberColon            // after a key, before its ':'
	memberValue            // after ':', before the value
	memberString           // inside a string value
	memberScalar           // inside a number, true, false or null
	memberContainer        // inside an object or array value
	memberAfter            // after a value, before ',' or '}'
)

// Which top-level member's value is being noted.
const (
	noteNone = iota
	noteID
	noteMethod
	noteVersion
)

// noteMax bounds a noted key or value; an id or method longer than this is
// not noted.
const noteMax = 256

// A jsonScan follows one JSON text at a time: it keeps the text's bytes up
// to a bound, and notes the raw values of the top-level members "id" and
// "method" as they pass, so that a text too large to keep still says which
// call it answers. It never fails: bytes that are not JSON only make a
// text that will not decode.
type jsonScan struct {
	max  int
	buf  []byte
	over bool // the text passed max; buf holds nothing

	depth int
	inStr bool
	esc   bool
	began bool // a value has begun
	obj   bool // the top-level value is an object

	member  int
	noting  int
	note    []byte
	tooLong bool
	id      []byte
	method  []byte
	// version is the raw value of the top-level "jsonrpc" member, and
	// variant is set when the text is not one go-sdk decodes as the
	// others do (see Capture.incoming): a top-level key is escaped, is
	// one of the message's members in another letter case or again, or
	// the text nests maxSDKDepth deep. seen holds a bit for each of
	// messageKeys met at the top level.
	version []byte
	variant bool
	seen    uint8
}

// maxSDKDepth is the nesting at which go-sdk refuses a message (it allows
// 1000 levels); the capture counts the top-level value as one and is
// stricter by one level at most.
const maxSDKDepth = 1000

// reset makes the scan ready for the next text.
func (s *jsonScan) reset() {
	if cap(s.buf) > 64<<10 {
		s.buf = nil // let a large text's memory go
	}
	s.buf = s.buf[:0]
	s.over = false
	s.depth, s.inStr, s.esc, s.began, s.obj = 0, false, false, false, false
	s.member, s.noting, s.tooLong = memberKey, noteNone, false
	s.note = s.note[:0]
	s.id, s.method, s.version, s.variant, s.seen = nil, nil, nil, false, 0
}

// keep appends p to the text's bytes, unless that would pass the bound.
func (s *jsonScan) keep(p []byte) {
	if s.over || len(p) == 0 {
		return
	}
	if len(s.buf)+len(p) > s.max {
		s.over = true
		s.buf = nil
		return
	}
	s.buf = append(s.buf, p...)
}

// scan follows p. With stop set it returns after the byte that closes the
// top-level value, reporting how many bytes it used and that the value
// ended; otherwise it uses all of p.
func (s *jsonScan) scan(p []byte, stop bool) (int, bool) {
	// q is the index of the first '"' in p at or after the place it was
	// last searched from, or len(p) for none. It is searched for again
	// only once i has passed it, so that a string dense with escapes and
	// closed far away costs one pass over p, not one per escape.
	q := -1
	for i := 0; i < len(p); i++ {
		if s.inStr && !s.esc && !s.notingString() {
			// Skip to the next byte that can end the string or start
			// an escape.
			if q < i {
				q = i + indexOrLen(p[i:], '"')
			}
			i += indexOrLen(p[i:q], '\\')
			if i == len(p) {
				return len(p), false
			}
		}
		s.step(p[i])
		if stop && s.began && s.depth == 0 {
			return i + 1, true
		}
	}
	return len(p), false
}

// notingString reports whether the bytes of the current string are noted.
func (s *jsonScan) notingString() bool {
	return s.depth == 1 && s.obj && (s.member == memberInKey || s.member == memberString)
}

// indexOrLen returns the index of the first c in b, or len(b).
func indexOrLen(b []byte, c byte) int {
	if i := bytes.IndexByte(b, c); i >= 0 {
		return i
	}
	return len(b)
}

// step follows one byte.
func (s *jsonScan) step(c byte) {
	top := s.depth == 1 && s.obj
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
		}
		if !top {
			return
		}
		switch s.member {
		case memberInKey:
			if !s.inStr {
				s.keyDone()
				return
			}
			s.add(c)
		case memberString:
			s.add(c)
			if !s.inStr {
				s.valueDone()
			}
		}
		return
	}
	switch c {
	case ' ', '\t', '\n', '\r':
		if top && s.member == memberScalar {
			s.valueDone()
		}
	case '"':
		s.inStr = true
		if top {
			switch s.member {
			case memberKey:
				s.member = memberInKey
				s.note, s.tooLong = s.note[:0], false
			case memberValue:
				s.member = memberString
				s.note, s.tooLong = s.note[:0], false
				s.add(c)
			}
		}
	case '{', '[':
		s.depth++
		if s.depth >= maxSDKDepth {
			s.variant = true
		}
		switch {
		case s.depth == 1:
			s.began, s.obj = true, c == '{'
			s.member, s.noting = memberKey, noteNone
		case s.depth == 2 && s.obj && s.member == memberValue:
			s.member, s.noting = memberContainer, noteNone
		}
	case '}', ']':
		if top && s.member == memberScalar {
			s.valueDone()
		}
		if s.depth > 0 {
			s.depth--
		}
		if s.depth == 1 && s.obj && s.member == memberContainer {
			s.member = memberAfter
		}
	case ',':
		if top {
			if s.member == memberScalar {
				s.valueDone()
			}
			s.member = memberKey
		}
	case ':':
		if top && s.member == memberColon {
			s.member = memberValue
		}
	default:
		if top {
			switch s.member {
			case memberValue:
				s.member = memberScalar
				s.note, s.tooLong = s.note[:0], false
				s.add(c)
			case memberScalar:
				s.add(c)
			}
		}
	}
}

// add notes one byte of a key, or of a value being noted.
func (s *jsonScan) add(c byte) {
	if s.member != memberInKey && s.noting == noteNone {
		return
	}
	if len(s.note) >= noteMax {
		s.tooLong = true
		return
	}
	s.note = append(s.note, c)
}

// keyDone ends a top-level key: its value is noted when the key is "id",
// "method" or "jsonrpc".
func (s *jsonScan) keyDone() {
	s.member, s.noting = memberColon, noteNone
	if s.tooLong {
		return
	}
	key := string(s.note)
	switch key {
	case "id":
		s.noting = noteID
	case "method":
		s.noting = noteMethod
	case "jsonrpc":
		s.noting = noteVersion
	}
	if bytes.IndexByte(s.note, '\\') >= 0 {
		s.variant = true
		return
	}
	for i, m := range messageKeys {
		switch {
		case key == m:
			s.variant = s.variant || s.seen&(1<<i) != 0
			s.seen |= 1 << i
		case strings.EqualFold(key, m):
			s.variant = true
		}
	}
}

// messageKeys are the members of a JSON-RPC message. go-sdk matches them
// in their exact letter case; mcp-go and encoding/json match them in any
// case, and with Unicode's simple folding (so "ſ" matches "s").
var messageKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// valueDone ends a top-level value.
func (s *jsonScan) valueDone() {
	if !s.tooLong {
		switch s.noting {
		case noteID:
			s.id = append(s.id[:0], s.note...)
		case noteMethod:
			s.method = append(s.method[:0], s.note...)
		case noteVersion:
			s.version = append(s.version[:0], s.note...)
		}
	}
	s.member, s.noting = memberAfter, noteNone
}

// A jsonStream splits a byte stream of JSON texts, one after another
// (newline-delimited JSON, or one application/json body), and hands each
// whole text to emit. Bytes between texts that do not start one are
// skipped to the end of their line.
//
// A stream of lines (stdio) hands a text that spans more than one line to
// spanned instead, when that is set: the SDKs read such a text
// differently (go-sdk decodes JSON across lines; mcp-go reads each line
// alone, skips those that do not parse, and may find another message in
// one of them), so what the SDK took from it is not known.
//
// A body stream (one application/json body) reads its first text only,
// as both SDKs decode only the body's first JSON value, and nothing at
// all when other bytes than white space come before it.
type jsonStream struct {
	scan    jsonScan
	inValue bool
	junk    bool
	spans   bool // the text being read holds a line break
	body    bool // a body stream
	done    bool // a body stream past its first text
	emit    func(*jsonScan)
	spanned func(*jsonScan)
	// A line stream's text followed on its line by another byte than a
	// line break is read apart: go-sdk fails the connection at it, and
	// mcp-go cannot parse the line. The text that just ended is handed
	// to trailing (by its noted id and method) once such a byte follows
	// it, and every later text to spanned. ended says a text ended and no
	// byte has followed it yet; endedID and endedMethod are its notes.
	trailing             func(id, method []byte)
	ended, diverged      bool
	endedID, endedMethod []byte
}

func newJSONStream(max int, emit func(*jsonScan)) *jsonStream {
	return &jsonStream{scan: jsonScan{max: max}, emit: emit}
}

// newLineStream is newJSONStream for a stream of lines, handing a text
// that spans lines to spanned, and one a byte other than a line break
// follows on its line to trailing.
func newLineStream(max int, emit, spanned func(*jsonScan), trailing func(id, method []byte)) *jsonStream {
	f := newJSONStream(max, emit)
	f.spanned, f.trailing = spanned, trailing
	return f
}

// newBodyStream is newJSONStream for one application/json body.
func newBodyStream(max int, emit func(*jsonScan)) *jsonStream {
	f := newJSONStream(max, emit)
	f.body = true
	return f
}

// write follows p.
func (f *jsonStream) write(p []byte) {
	for len(p) > 0 && !f.done {
		if f.ended {
			f.ended = false
			if p[0] != '\n' && p[0] != '\r' {
				f.diverged = true
				f.trailing(f.endedID, f.endedMethod)
			}
		}
		if !f.inValue {
			i := 0
		skip:
			for i < len(p) {
				if f.junk {
					j := bytes.IndexByte(p[i:], '\n')
					if j < 0 {
						return
					}
					i += j + 1
					f.junk = false
					continue
				}
				switch p[i] {
				case '{', '[':
					break skip
				case ' ', '\t', '\r', '\n':
					i++
				default:
					if f.body {
						f.done = true
						return
					}
					f.junk = true
				}
			}
			p = p[i:]
			if len(p) == 0 {
				return
			}
			f.scan.reset()
			f.inValue = true
		}
		n, ended := f.scan.scan(p, true)
		f.scan.keep(p[:n])
		f.spans = f.spans || bytes.IndexByte(p[:n], '\n') >= 0
		p = p[n:]
		if ended {
			f.inValue = false
			f.done = f.body
			if (f.spans || f.diverged) && f.spanned != nil {
				f.spanned(&f.scan)
			} else {
				f.emit(&f.scan)
			}
			if f.trailing != nil {
				f.ended = true
				f.endedID = append(f.endedID[:0], f.scan.id...)
				f.endedMethod = append(f.endedMethod[:0], f.scan.method...)
			}
			f.spans = false
			f.scan.reset()
		}
	}
}
