package conformance

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// jsText returns the JSON text of raw as JavaScript's JSON.stringify would
// print the value JSON.parse reads from it: compact, keys in their order,
// only quotes, backslashes and control characters escaped in strings, and
// numbers in JavaScript's shortest form. A checker written in JavaScript
// measures and searches the push view in this form, so the judge does too.
// Text that is not JSON is returned as it is.
func jsText(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := writeJS(&b, dec); err != nil {
		return string(raw)
	}
	return b.String()
}

func writeJS(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := byte(']')
		if t == '{' {
			closing = '}'
		}
		b.WriteByte(byte(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				writeJSString(b, key.(string))
				b.WriteByte(':')
			}
			if err := writeJS(b, dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteByte(closing)
	case string:
		writeJSString(b, t)
	case json.Number:
		writeJSNumber(b, t)
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writeJSString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xF])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// writeJSNumber prints n as JavaScript prints a double: integers below
// 1e21 in plain digits, other values in the shortest form that reads back.
func writeJSNumber(b *strings.Builder, n json.Number) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		b.WriteString("null")
		return
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		// Go writes e-07 and e+21; JavaScript writes e-7 and e+21.
		mant, exp := s[:i], s[i+1:]
		sign := exp[:1]
		exp = strings.TrimLeft(exp[1:], "0")
		s = mant + "e" + sign + exp
	}
	b.WriteString(s)
}
