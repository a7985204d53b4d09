package convert

import (
	"bytes"
	"unicode/utf8"
)

// maxDecodeDepth is encoding/json's nesting limit: a document whose
// objects and arrays nest deeper is one no decoder reads.
const maxDecodeDepth = 10000

// plainByte holds, for each byte, whether it may sit in a JSON string
// with nothing to check: printable ASCII other than the quote and the
// backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanBlock reads a block in one pass. It checks that d is a document
// encoding/json accepts (the grammar json.Valid checks, and the decoder's
// nesting limit), and on the way records the top-level members of the
// object d holds, as readObject records them, marking each string value
// that needs no decoding. It reports false for a document a decoder
// refuses; what it recorded then is incomplete, and the caller reads what
// it can with readObject. d must open, after white space, with an object.
//
// It replaces a pass of json.Valid, a pass of readObject and a decoder's
// pass over every string the host reads (BenchmarkRender/100blocks
// against /decode-only).
func scanBlock(d []byte) (o object, valid bool) {
	var (
		// stack holds, for each open object or array, whether it is an
		// object. Up to 64 levels it needs no allocation.
		buf    [64]bool
		stack  = buf[:0]
		k      key // the top-level member whose value is being read
		vstart int // where that value starts
		plain  bool
		ok     bool
	)
	o.isObject, o.doc = true, d
	i := skipSpace(d, 0)
	for {
		// A value starts at i.
		i = skipSpace(d, i)
		if i >= len(d) {
			return o, false
		}
		top := len(stack) == 1
		if top {
			vstart, plain = i, false
		}
		switch c := d[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxDecodeDepth {
				return o, false
			}
			stack = append(stack, c == '{')
			i = skipSpace(d, i+1)
			if i < len(d) && (d[i] == '}' && c == '{' || d[i] == ']' && c == '[') {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, ok = scanKey(d, i, &k, len(stack) == 1); !ok {
					return o, false
				}
			}
			continue
		case c == '"':
			end, esc, high, ok := scanString(d, i)
			if !ok {
				return o, false
			}
			if top {
				plain = !esc && (!high || utf8.Valid(d[i+1:end-1]))
			}
			i = end
		case c == '-' || '0' <= c && c <= '9':
			if i, ok = scanNumber(d, i); !ok {
				return o, false
			}
		case c == 't' && bytes.HasPrefix(d[i:], []byte("true")):
			i += len("true")
		case c == 'f' && bytes.HasPrefix(d[i:], []byte("false")):
			i += len("false")
		case c == 'n' && bytes.HasPrefix(d[i:], []byte("null")):
			i += len("null")
		default:
			return o, false
		}
		// The value that ends at i is complete; so, in turn, may be the
		// objects and arrays it closes.
	closing:
		for {
			switch len(stack) {
			case 0:
				o.complete = true
				return o, skipSpace(d, i) == len(d)
			case 1:
				o.add(k, d[vstart:i], plain)
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return o, false
			}
			inObject := stack[len(stack)-1]
			switch {
			case d[i] == ',':
				if inObject {
					if i, ok = scanKey(d, skipSpace(d, i+1), &k, len(stack) == 1); !ok {
						return o, false
					}
				} else {
					i++
				}
				break closing
			case d[i] == '}' && inObject || d[i] == ']' && !inObject:
				stack = stack[:len(stack)-1]
				i++
			default:
				return o, false
			}
		}
	}
}

// scanKey reads the member name that starts at d[i] and the colon after
// it, returning the index just past the colon. When named is set (at the
// top level) it stores the member's key in k.
func scanKey(d []byte, i int, k *key, named bool) (int, bool) {
	if i >= len(d) || d[i] != '"' {
		return i, false
	}
	end, esc, _, ok := scanString(d, i)
	if !ok {
		return i, false
	}
	switch {
	case !named:
	case esc:
		*k = keyOf(d[i:end])
	default:
		*k = keyNamed(d[i+1 : end-1])
	}
	i = skipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// scanString checks the JSON string whose opening quote is d[i] as
// encoding/json does: no control character, only the escapes JSON
// defines. It returns the index just past the closing quote and whether
// the string holds an escape or a byte outside ASCII.
func scanString(d []byte, i int) (end int, esc, high, ok bool) {
	for j := i + 1; j < len(d); j++ {
		for j < len(d) && plainByte[d[j]] {
			j++
		}
		if j >= len(d) {
			break
		}
		switch c := d[j]; {
		case c == '"':
			return j + 1, esc, high, true
		case c == '\\':
			esc = true
			j++
			if j >= len(d) {
				return j, esc, high, false
			}
			switch d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d) {
					return j, esc, high, false
				}
				for _, h := range d[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return j, esc, high, false
					}
				}
				j += 4
			default:
				return j, esc, high, false
			}
		case c < 0x20:
			return j, esc, high, false
		default:
			high = true
		}
	}
	return len(d), esc, high, false
}

// scanNumber checks the JSON number that starts at d[i] and returns the
// index just past it.
func scanNumber(d []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		return i
	}
	if d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return i, false
	case d[i] == '0':
		i++
	case '1' <= d[i] && d[i] <= '9':
		i = digits(i + 1)
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}
