package capture

import "bytes"

// The states of an sseStream within a line.
const (
	sseLineStart = iota // at the start of a line
	sseName             // in a field's name
	sseDataSpace        // after "data:", where one space may follow
	sseData             // in a data field's value
	sseTypeSpace        // after "event:", where one space may follow
	sseType             // in an event field's value
	sseSkip             // in a comment, or another field
)

// An sseStream follows a text/event-stream body as the SDK reads it and
// hands each event's data, one JSON text, to emit when the event ends.
// The data goes straight into a jsonScan, so no line is held whole. Only
// an event of type "message", the type of one that names none, goes to
// emit; the SDKs differ on events of other types (one skips them, one
// reads them), so those go to other.
type sseStream struct {
	scan     jsonScan
	state    int
	name     [8]byte
	nameLen  int
	nameLong bool
	// typ is the value of the event's last "event" field so far, up to
	// len(typ) bytes (typLong past that); notMessage is set when that
	// value, without white space around it (which the SDKs trim), is
	// neither empty nor "message".
	typ        [32]byte
	typLen     int
	typLong    bool
	notMessage bool
	// diverged is set once the stream holds something the SDKs read
	// apart from one another or from the capture, so that from there on
	// they may read other events than the capture: every event still
	// open or to come goes to other. A carriage return not followed by a
	// line feed ends a line for the event-stream format, but the SDKs
	// split lines at line feeds only. A line with no colon is a field
	// with an empty value for the format; go-sdk ends the stream there
	// with an error, and mcp-go skips the line. An event whose data the
	// SDKs may read apart (see Capture.incoming) ends the stream for
	// go-sdk and is skipped by mcp-go. And a last line the body leaves
	// without a line break is read by go-sdk and dropped by mcp-go.
	diverged  bool
	afterCR   bool
	dataLines int
	// emit reports whether the SDKs read the event's data alike (see
	// Capture.incoming); when they may not, the stream diverges there.
	emit  func(*jsonScan) bool
	other func(*jsonScan) // for an event of another type
}

func newSSEStream(max int, emit func(*jsonScan) bool, other func(*jsonScan)) *sseStream {
	f := &sseStream{scan: jsonScan{max: max}, emit: emit, other: other}
	f.scan.reset()
	return f
}

// write follows p. A byte order mark at the start of the stream is not
// taken off, as the format would: neither SDK does, so it begins the
// first field's name.
func (f *sseStream) write(p []byte) {
	i := 0
	nl := -1 // the index of the next '\n' in p, or len(p); see sseData
	for i < len(p) {
		c := p[i]
		if f.afterCR {
			f.afterCR = false
			if c == '\n' {
				i++
				continue
			}
			f.diverged = true
		}
		switch f.state {
		case sseLineStart:
			switch c {
			case '\r', '\n':
				f.dispatch()
				f.afterCR = c == '\r'
				i++
			case ':':
				f.state = sseSkip
				i++
			default:
				f.state, f.nameLen, f.nameLong = sseName, 0, false
			}
		case sseName:
			switch c {
			case ':':
				i++
				switch {
				case f.isData():
					f.dataBegin()
					f.state = sseDataSpace
				case f.isType():
					f.typLen, f.typLong = 0, false
					f.state = sseTypeSpace
				default:
					f.state = sseSkip
				}
			case '\r', '\n': // a line with no colon
				f.diverged = true
				switch {
				case f.isData():
					f.dataBegin()
				case f.isType(): // an "event" field with no value
					f.typLen, f.typLong = 0, false
					f.typeEnd()
				}
				f.lineEnd(c)
				i++
			default:
				f.nameByte(c)
				i++
			}
		case sseDataSpace, sseTypeSpace:
			if c == ' ' {
				i++
			}
			if f.state == sseDataSpace {
				f.state = sseData
			} else {
				f.state = sseType
			}
		case sseData, sseType, sseSkip:
			// The line ends at the first '\r' or '\n'. The next '\n'
			// is searched for again only once i has passed it, so
			// that lines ended by lone carriage returns cost one pass
			// over p, not one each.
			if nl < i {
				nl = i + indexOrLen(p[i:], '\n')
			}
			end := i + indexOrLen(p[i:nl], '\r')
			switch f.state {
			case sseData:
				f.data(p[i:end])
			case sseType:
				f.typeBytes(p[i:end])
			}
			if end == len(p) {
				return
			}
			if f.state == sseType {
				f.typeEnd()
			}
			f.lineEnd(p[end])
			i = end + 1
		}
	}
}

func (f *sseStream) nameByte(c byte) {
	if f.nameLen == len(f.name) {
		f.nameLong = true
		return
	}
	f.name[f.nameLen] = c
	f.nameLen++
}

func (f *sseStream) isData() bool {
	return !f.nameLong && string(f.name[:f.nameLen]) == "data"
}

func (f *sseStream) isType() bool {
	return !f.nameLong && string(f.name[:f.nameLen]) == "event"
}

// typeBytes takes part of an "event" field's value.
func (f *sseStream) typeBytes(p []byte) {
	n := copy(f.typ[f.typLen:], p)
	f.typLen += n
	f.typLong = f.typLong || n < len(p)
}

// typeEnd ends an "event" field: its value is the event's type.
func (f *sseStream) typeEnd() {
	t := string(bytes.TrimSpace(f.typ[:f.typLen]))
	f.notMessage = f.typLong || (t != "" && t != "message")
}

// dataBegin starts one data line: lines after the first are joined to the
// event's data by a line feed.
func (f *sseStream) dataBegin() {
	if f.dataLines > 0 {
		f.data([]byte{'\n'})
	}
	f.dataLines++
}

func (f *sseStream) data(p []byte) {
	if len(p) == 0 {
		return
	}
	f.scan.scan(p, false)
	f.scan.keep(p)
}

func (f *sseStream) lineEnd(c byte) {
	f.state = sseLineStart
	f.afterCR = c == '\r'
}

// dispatch ends an event with data: a message is handed to emit, an
// event of another type, or any event once the stream diverged (see
// sseStream), to other.
func (f *sseStream) dispatch() {
	notMessage := f.notMessage
	f.notMessage = false
	if f.dataLines == 0 {
		return
	}
	if f.dataLines == 1 && !f.scan.over && len(bytes.TrimSpace(f.scan.buf)) == 0 {
		// One data line of white space, as a server priming its client
		// to resume writes it: both SDKs skip the event (go-sdk trims
		// the line to nothing).
		f.scan.reset()
		f.dataLines = 0
		return
	}
	switch {
	case !notMessage && !f.diverged:
		if !f.emit(&f.scan) {
			f.diverged = true
		}
	case f.other != nil:
		f.other(&f.scan)
	}
	f.scan.reset()
	f.dataLines = 0
}

// end is called at the end of the body: an event the server left open is
// handed on too, as both SDKs take it, unless a last line without a line
// break (which only go-sdk reads) makes the stream diverge.
func (f *sseStream) end() {
	if f.state != sseLineStart || f.afterCR {
		f.diverged = true
	}
	f.dispatch()
	f.state = sseLineStart
}
