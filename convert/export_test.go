package convert

// Each block as the views render it before any bound applies, so that
// tests can check a bounded view against the blocks it shows. Each
// renders the first n blocks only (all of them when n is larger).

// TextPieces returns the first n blocks' pieces of the text views.
func (ct *Content) TextPieces(n int) []string {
	out := make([]string, min(n, len(ct.blocks)))
	for i := range out {
		out[i], _ = ct.line(i, maxInt)
	}
	return out
}

// PushPieces returns the first n blocks as the push view shows them.
func (ct *Content) PushPieces(n int) []ModelBlock {
	out := make([]ModelBlock, min(n, len(ct.blocks)))
	for i := range out {
		out[i], _ = ct.pushBlock(i, maxInt)
	}
	return out
}

// ScriptPieces returns the first n blocks' items of the script's view.
func (ct *Content) ScriptPieces(n int) []ScriptItem {
	out := make([]ScriptItem, min(n, len(ct.blocks)))
	for i := range out {
		out[i], _ = ct.scriptItem(i, maxInt)
	}
	return out
}
