package convert

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds what every view needs to stay within its bound: the
// smallest bounds a host may set, the notice a cut view ends with, and
// the costs by which the views count what they show.
//
// Every view shows a prefix of the content's blocks. A block is shown
// whole, or cut short and marked with "…" when it is text a cut cannot
// mislead (a text block, an embedded resource's text after its header),
// or left out. A stub or notice is never cut by a view: it fits whole or
// is left out. Once one block is cut or left out, the view stops and ends
// with a notice that counts the blocks it did not show at all. A view
// keeps room for that notice at every step, so the notice always fits.

// The smallest bounds a Converter accepts. Both follow from the texts the
// host itself writes, so a view at these bounds still shows a whole stub
// and counts what it left out.
const (
	// MinStubMax is the smallest StubMax, in runes: the longest stub or
	// notice made of the host's own words alone, before any label a
	// server supplied. That is the stub of a reference a server marked
	// never, shown in serverless content on the channel lane with no
	// channel named, for an id of 17 runes as package refs issues them
	// (151 runes); every fixed notice is shorter.
	MinStubMax = 151

	// MinViewMax is the smallest ViewMax, in UTF-16 code units: the push
	// view's JSON text holding one stub of MinStubMax runes, each
	// counted at its largest JSON cost of two code units, then the
	// notice of blocks left out with the largest count an int can hold:
	// 437. The text views and the script view's notice need less.
	MinViewMax = viewReserve + 2*MinStubMax
)

const (
	// leftOutTail follows the count in the notice a cut view ends with.
	leftOutTail = " more block(s) not shown: this view reached its size bound]"
	// leftOutMax is the longest such notice: "[" and 19 digits, the
	// most an int64 has, before the tail.
	leftOutMax = 1 + 19 + len(leftOutTail)
	// textOverhead is the JSON cost of a push view's text block around
	// its text, quotes included: {"type":"text","text":""}.
	textOverhead = len(`{"type":"text","text":""}`)
	// cutSlack is what an embedded resource shown as its header alone
	// adds to the header: an escaped line break and the cut marker.
	cutSlack = len(`\n`) + 1
	// viewReserve is the push view's cost apart from the stub's own
	// characters: the brackets, the stub's text block, a comma, and the
	// notice's text block with the longest notice.
	viewReserve = len("[]") + textOverhead + cutSlack + len(",") + textOverhead + leftOutMax
)

// stubRoom is the longest stub, in runes, that a view of max code units
// always shows whole beside the notice of blocks left out.
func stubRoom(max int) int { return (max - viewReserve) / 2 }

// leftOutNotice is the notice for n blocks left out.
func leftOutNotice(n int) string { return "[" + strconv.Itoa(n) + leftOutTail }

// leftOutLen is the length of leftOutNotice(n), which is ASCII.
func leftOutLen(n int) int { return 1 + len(strconv.Itoa(n)) + len(leftOutTail) }

// noCut marks a piece no view may cut.
const noCut = -1

// byteLimit is how many bytes of a server's text a view needs in order to
// fit it into room code units or cut it there: each rune costs at least
// one code unit and takes at most four bytes, so anything past this many
// bytes could not be shown.
func byteLimit(room int) int {
	if room < 0 {
		return 0
	}
	if room > (maxInt-8)/4 {
		return maxInt
	}
	return 4 * (room + 2)
}

const maxInt = int(^uint(0) >> 1)

// fitUTF16 fits s into room UTF-16 code units. It returns s when it fits
// whole. Otherwise, when keep is not noCut, it returns the longest prefix
// that keeps the first keep bytes whole, followed by "…", provided that
// prefix shows something (keep is above zero, or one rune is kept). It
// reports false when s can be neither shown nor cut to fit. It reads at
// most room+1 runes of s.
func fitUTF16(s string, keep, room int) (string, bool) {
	if len(s) <= room { // a byte is at least a code unit's worth
		return s, true
	}
	units, cut := 0, -1
	for i, r := range s {
		if i >= keep && units+1 <= room && (i > 0 || keep > 0) {
			cut = i
		}
		units += utf16.RuneLen(r)
		if units > room {
			break
		}
	}
	if units <= room {
		return s, true
	}
	if keep == noCut || cut < 0 {
		return "", false
	}
	return s[:cut] + "…", true
}

// fitJSON is fitUTF16 for s as a quoted JSON string: room counts the
// quotes, and html says whether '<', '>' and '&' are escaped.
func fitJSON(s string, keep, room int, html bool) (string, bool) {
	room -= 2 // the quotes
	units, cut := 0, -1
	for i := 0; i < len(s); {
		if i >= keep && units+1 <= room && (i > 0 || keep > 0) {
			cut = i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		units += runeJSONCost(r, size, html)
		if units > room {
			break
		}
		i += size
	}
	if units <= room {
		return s, true
	}
	if keep == noCut || cut < 0 {
		return "", false
	}
	return s[:cut] + "…", true
}

// jsonStringCost is the length of s as a quoted JSON string, in UTF-16
// code units, as encoding/json writes it, with '<', '>' and '&' escaped
// when html is set. It stops counting once the cost passes limit.
func jsonStringCost(s string, html bool, limit int) int {
	n := 2
	for i := 0; i < len(s) && n <= limit; {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeJSONCost(r, size, html)
		i += size
	}
	return n
}

// runeJSONCost is what encoding/json writes for one rune, in UTF-16 code
// units.
func runeJSONCost(r rune, size int, html bool) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return 6 // \ufffd
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == 0x2028 || r == 0x2029:
		return 6
	case html && (r == '<' || r == '>' || r == '&'):
		return 6
	case r >= 0x10000:
		return 2
	}
	return 1
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fitList lays out the items of a JSON list view of n blocks within max
// bytes, in order, keeping room after each for the notice of what is left
// out (noticeOverhead bytes of notice item besides the count's words). For
// each block, item(i, room) returns the item and its cost when it fits in
// room; a cut item with last set, to be the final one shown; or a negative
// cost when nothing of block i fits, which ends the list. The push and
// script views share it; the caller appends the notice.
func fitList[T any](max, n, noticeOverhead int, item func(i, room int) (T, int, bool)) []T {
	// Room for every item and the notice up front, up to a bound, since a
	// content may hold more blocks than any view shows (BenchmarkHostFlow,
	// B/op).
	out := make([]T, 0, min(n+1, listPresize))
	used := len("[]")
	for i := 0; i < n; i++ {
		comma := boolInt(len(out) > 0)
		reserve := 0 // room kept for the notice, should this block be the last shown
		if i < n-1 {
			reserve = len(",") + noticeOverhead + leftOutLen(n-i-1)
		}
		room := max - used - comma - reserve
		it, cost, last := item(i, room)
		if cost < 0 {
			break
		}
		out = append(out, it)
		if last {
			break
		}
		used += comma + cost
	}
	return out
}

// listPresize bounds how many items a view makes room for before it
// knows how many fit.
const listPresize = 64
