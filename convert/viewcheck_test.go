package convert_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
)

// checkViews renders every view of ct and fails tb unless each one is
// within max UTF-16 code units and valid UTF-8, carries none of the
// forbidden strings, and shows a prefix of the content's blocks, the last
// one possibly cut (only a text, or an embedded resource's text after its
// header), followed by a notice that counts exactly the blocks it left
// out, or by no notice when it left none out. Rule ids: S2 (no uri), S4
// (every view), S6 (the notice), L5 (the bound).
func checkViews(tb testing.TB, ct *convert.Content, max int, forbidden ...string) {
	tb.Helper()
	blocks := ct.Blocks()
	history, wake := ct.History(), ct.Wake()
	push := ct.Push()
	pushText := convert.PushJSON(push)
	script := ct.Script()
	scriptRaw, err := json.Marshal(script)
	if err != nil {
		tb.Fatalf("script view does not marshal: %v", err)
	}
	for _, v := range []struct{ name, text string }{{"history", history}, {"wake", wake}, {"push", pushText}, {"script", string(scriptRaw)}} {
		if n := utf16Len(v.text); n > max {
			tb.Fatalf("L5/S4: the %s view is %d code units, over the bound %d", v.name, n, max)
		}
		if !utf8.ValidString(v.text) {
			tb.Fatalf("S4: the %s view is not valid UTF-8", v.name)
		}
		for _, f := range forbidden {
			if f != "" && strings.Contains(v.text, f) {
				tb.Fatalf("S2: the %s view shows %q", v.name, f)
			}
		}
	}
	if !json.Valid([]byte(pushText)) {
		tb.Fatalf("S4: the push view is not JSON: %.300s", pushText)
	}
	// Each block a view shows after its first takes at least one code
	// unit, so the first max+1 blocks' pieces are all a check may need.
	need := min(max+1, len(blocks))
	pieces := ct.TextPieces(need)
	for _, v := range []struct{ name, text string }{{"history", history}, {"wake", wake}} {
		checkTextPrefix(tb, v.name, v.text, pieces, blocks)
	}
	pushLeft, pushNoted := 0, false
	if len(push) > 0 && push[len(push)-1].Type == "text" {
		pushLeft, pushNoted = leftOutCount(push[len(push)-1].Text)
	}
	pushPieces := ct.PushPieces(need)
	checkItemPrefix(tb, "push", len(push), pushLeft, pushNoted, blocks, func(j int, cut bool) bool {
		want := pushPieces[j]
		if push[j] == want {
			return true
		}
		got := push[j]
		return cut && got.Type == "text" && want.Type == "text" && isCutOf(got.Text, want.Text, blocks[j])
	})
	scriptLeft, scriptNoted := 0, false
	if len(script) > 0 && script[len(script)-1].Kind == "notice" {
		scriptLeft, scriptNoted = leftOutCount(script[len(script)-1].Text)
	}
	scriptPieces := ct.ScriptPieces(need)
	checkItemPrefix(tb, "script", len(script), scriptLeft, scriptNoted, blocks, func(j int, cut bool) bool {
		want, got := scriptPieces[j], script[j]
		if got == want {
			return true
		}
		want.Text, got.Text = "", ""
		return cut && got == want && (want.Kind == "text" || want.Kind == "embedded") &&
			strings.HasSuffix(script[j].Text, "…") && strings.HasPrefix(scriptPieces[j].Text, strings.TrimSuffix(script[j].Text, "…"))
	})
}

// checkItemPrefix checks a view of items (push blocks, script items):
// shown items, then a notice counting the blocks left out. same reports
// whether the view's item j is block j's item, or, when cut is set, a cut
// of it.
func checkItemPrefix(tb testing.TB, name string, items, left int, noted bool, blocks []convert.Block, same func(j int, cut bool) bool) {
	tb.Helper()
	n := len(blocks)
	shown := items - boolInt(noted)
	if noted && left == 0 {
		tb.Fatalf("S6: the %s view notes 0 blocks left out", name)
	}
	if shown+left != n {
		tb.Fatalf("S6: the %s view shows %d blocks and counts %d left out (noted %v), of %d", name, shown, left, noted, n)
	}
	for j := 0; j < shown; j++ {
		if !same(j, j == shown-1) {
			tb.Fatalf("S4: the %s view's item %d is not block %d as the view renders it, nor a cut of its text", name, j, j)
		}
	}
}

// checkTextPrefix checks a text view against the blocks' pieces.
func checkTextPrefix(tb testing.TB, name, view string, pieces []string, blocks []convert.Block) {
	tb.Helper()
	n := len(blocks)
	body, left := view, 0
	i := strings.LastIndexByte(view, '\n') // -1 when the view is one line
	if c, ok := leftOutCount(view[i+1:]); ok {
		left, body = c, view[:max(i, 0)]
	}
	k := n - left
	if k < 0 || k > len(pieces) {
		tb.Fatalf("S6: the %s view counts %d blocks left out of %d", name, left, n)
	}
	if k == 0 {
		if body != "" {
			tb.Fatalf("S6: the %s view counts every block left out yet shows %q", name, body)
		}
		return
	}
	if body == strings.TrimRight(strings.Join(pieces[:k], "\n"), "\n") {
		return
	}
	prefix := strings.Join(pieces[:k-1], "\n")
	if k > 1 {
		prefix += "\n"
	}
	rest, ok := strings.CutPrefix(body, prefix)
	if !ok || !isCutOf(rest, pieces[k-1], blocks[k-1]) {
		tb.Fatalf("S6: the %s view does not show its first %d blocks and count the other %d (%d code units):\n%.600s", name, k, left, utf16Len(view), view)
	}
}

// isCutOf reports whether got is piece cut short by a view: a proper
// prefix of a cuttable piece, marked with "…". An embedded resource keeps
// its header line whole.
func isCutOf(got, piece string, b convert.Block) bool {
	kept, ok := strings.CutSuffix(got, "…")
	if !ok || !strings.HasPrefix(piece, kept) || kept == piece {
		return false
	}
	switch {
	case b.Kind == convert.KindText:
		return kept != ""
	case b.Kind == convert.KindEmbedded && b.Text != "":
		header, _, _ := strings.Cut(piece, "\n")
		return strings.HasPrefix(kept, header+"\n")
	}
	return false
}
