package uriform

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/mcplrefs/refcore/label"
)

// unicodeHostForm keys a host name that holds non-ASCII characters (given
// with its ASCII letters lower-cased). An HTTP client looks such a name
// up by its ASCII form, so the key uses that form too: the name is mapped
// roughly as IDNA lookup maps it (invisible characters dropped,
// compatibility forms and case folded, the ideographic full stops read as
// dots) and each non-ASCII label is written as "xn--" and its punycode.
// The mapping is a subset of the standard's table. Where it is not enough
// (a label that maps to characters no host name may hold, or one too long
// to encode) the client looks the name up as it is written, and so does
// the key: percent-encoded, with nothing but its ASCII letters
// lower-cased, which is as stable.
func unicodeHostForm(lower string) (string, bool) {
	if a, ok := asciiHost(lower); ok {
		return escapeHost(a)
	}
	return escapeHost(lower)
}

// lookupFold folds case as an HTTP client's IDNA lookup does. That lookup
// is not transitional: a lower-case sharp s (U+00DF) and a final sigma
// (U+03C2) stay as they are, while their capitals fold ("ẞ" to "ss", "Σ"
// to "σ"). Full case folding would turn "faß" into "fass", which the
// client looks up as another host.
func lookupFold(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\u00df\u03c2")
		if i < 0 {
			b.WriteString(cases.Fold().String(s))
			return b.String()
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(cases.Fold().String(s[:i]))
		b.WriteString(s[i : i+n])
		s = s[i+n:]
	}
}

// asciiHost returns the ASCII (punycode) form of a Unicode host name.
func asciiHost(name string) (string, bool) {
	if !utf8.ValidString(name) {
		return "", false
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case label.Removed(r):
			return -1
		case r == '\u3002', r == '\uff0e', r == '\uff61':
			return '.'
		}
		return r
	}, name)
	name = norm.NFKC.String(lookupFold(norm.NFKC.String(name)))
	// A compatibility form can decompose to an upper-case letter.
	name = strings.TrimRight(strings.ToLower(name), ".")
	if name == "" {
		return "", false
	}
	labels := strings.Split(name, ".")
	for i, l := range labels {
		if isASCII(l) {
			for j := 0; j < len(l); j++ {
				if !hostKeep[l[j]] {
					return "", false
				}
			}
			continue
		}
		for j := 0; j < len(l); j++ {
			if c := l[j]; c < 0x80 && !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "", false
			}
		}
		p, ok := punycode(l)
		if !ok {
			return "", false
		}
		labels[i] = "xn--" + p
	}
	return strings.Join(labels, "."), true
}

// Parameters of the punycode encoding (RFC 3492 §5).
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 0x80
	pcMaxLabel    = 1024 // longer labels are not encoded; no DNS name is near
)

// punycode encodes a label as RFC 3492 describes: its ASCII characters in
// order, a "-" if there were any, then the insertions of the other code
// points as variable-length base-36 integers.
func punycode(l string) (string, bool) {
	if len(l) > pcMaxLabel {
		return "", false
	}
	runes := []rune(l)
	out := make([]byte, 0, len(l)+8)
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(pcInitialN), int64(0), pcInitialBias
	for handled := basic; handled < len(runes); {
		// The smallest code point not yet handled.
		m := rune(utf8.MaxRune + 1)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int64(m-n) * int64(handled+1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := min(max(k-bias, pcTMin), pcTMax)
				if q < int64(t) {
					break
				}
				out = append(out, pcDigit(t+int((q-int64(t))%int64(pcBase-t))))
				q = (q - int64(t)) / int64(pcBase-t)
			}
			out = append(out, pcDigit(int(q)))
			bias = pcAdapt(delta, handled+1, handled == basic)
			delta = 0
			handled++
		}
		delta++
		n++
	}
	return string(out), true
}

// pcAdapt is the bias adaptation of RFC 3492 §6.1.
func pcAdapt(delta int64, points int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / int64(points)
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + int((pcBase-pcTMin+1)*delta/(delta+pcSkew))
}

// pcDigit spells a punycode digit: 0–25 as a–z, 26–35 as 0–9.
func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}
