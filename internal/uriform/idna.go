package uriform

import (
	"strings"
	"unicode"
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

// asciiHost returns the ASCII (punycode) form of a Unicode host name.
//
// The mapping follows the one an HTTP client's IDNA lookup applies, which
// is not transitional: a sharp s (U+00DF) and a final sigma (U+03C2)
// written as such stay, while their capitals and compatibility forms
// fold ("ẞ" to "ss", "Σ" and "ϲ" to "σ"); a zero-width joiner or
// non-joiner stays where the joiner rules allow one (after a virama, or
// a non-joiner between letters of a joining script) and is dropped
// elsewhere, where the client would not look the name up by IDNA at all.
// Case is folded and compatibility forms normalized until neither
// changes the name, and Cherokee letters end as capitals, as case folding
// defines them (golang.org/x/text's Fold turns the capitals into small
// letters and back).
func asciiHost(name string) (string, bool) {
	if !utf8.ValidString(name) || strings.ContainsAny(name, keptStandIns) {
		return "", false
	}
	runes := []rune(name)
	var b strings.Builder
	for i, r := range runes {
		switch {
		case r == '\u00df':
			b.WriteRune(keptSharpS)
		case r == '\u03c2':
			b.WriteRune(keptFinalSigma)
		case (r == '\u200c' || r == '\u200d') && joinerAllowed(runes, i):
			b.WriteRune(r)
		case label.Removed(r):
		case r == '\u3002', r == '\uff0e', r == '\uff61':
			b.WriteByte('.')
		default:
			b.WriteRune(r)
		}
	}
	name = b.String()
	for range 4 {
		next := norm.NFKC.String(cases.Fold().String(norm.NFKC.String(name)))
		if next == name {
			break
		}
		name = next
	}
	name = strings.Map(cherokeeCapital, name)
	name = strings.NewReplacer(string(keptSharpS), "\u00df", string(keptFinalSigma), "\u03c2").Replace(name)
	name = strings.TrimRight(name, ".")
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

// Stand-ins for the sharp s and final sigma while the rest of a name is
// folded: private-use code points, which neither folding nor
// normalization changes. A name that holds one itself is not mapped
// (IDNA refuses private-use code points; the client looks such a name up
// as written).
const (
	keptSharpS     = '\ue000'
	keptFinalSigma = '\ue001'
	keptStandIns   = "\ue000\ue001"
)

// joinerAllowed reports whether the joiner at runes[i] is one the IDNA
// joiner rules (RFC 5892, CONTEXTJ) allow: either joiner right after a
// virama; a non-joiner also between two letters of a joining script,
// marks aside. The joining-type test is approximate (any letter of such a
// script passes); where it errs, the client does not look the name up
// by IDNA, and no registry hands such a name out.
func joinerAllowed(runes []rune, i int) bool {
	if i > 0 && norm.NFC.PropertiesString(string(runes[i-1])).CCC() == 9 {
		return true
	}
	if runes[i] != '\u200c' {
		return false
	}
	before, after := -1, -1
	for j := i - 1; j >= 0; j-- {
		if !unicode.In(runes[j], unicode.Mn, unicode.Me) {
			before = j
			break
		}
	}
	for j := i + 1; j < len(runes); j++ {
		if !unicode.In(runes[j], unicode.Mn, unicode.Me) {
			after = j
			break
		}
	}
	return before >= 0 && after >= 0 && joiningLetter(runes[before]) && joiningLetter(runes[after])
}

// joiningLetter reports whether r is a letter of a script whose letters
// join (cursive scripts).
func joiningLetter(r rune) bool {
	return unicode.IsLetter(r) && unicode.In(r, unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian,
		unicode.Mandaic, unicode.Manichaean, unicode.Psalter_Pahlavi, unicode.Adlam, unicode.Hanifi_Rohingya,
		unicode.Sogdian, unicode.Old_Uyghur, unicode.Chorasmian, unicode.Phags_Pa)
}

// cherokeeCapital maps a small Cherokee letter to its capital, the form
// case folding gives it, and leaves every other rune.
func cherokeeCapital(r rune) rune {
	switch {
	case r >= 0xab70 && r <= 0xabbf:
		return r - 0xab70 + 0x13a0
	case r >= 0x13f8 && r <= 0x13fd:
		return r - 8
	}
	return r
}
