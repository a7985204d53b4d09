package emit

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
)

// placeholderText opens every placeholder. Its words tell a model what it
// is looking at should the text ever reach one; the tag after them is what
// RewriteMessage looks for.
const (
	placeholderNote = "[a file reference belongs here, but the server did not replace this placeholder] "
	placeholderTag  = "refcore-emit-1:"
	placeholderText = placeholderNote + placeholderTag
)

// sealer seals placeholders with a key drawn once per process, and a fresh
// random nonce for each.
var sealer = sync.OnceValue(func() cipher.AEAD {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("emit: " + err.Error()) // a 32-byte key is always accepted
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		panic("emit: " + err.Error())
	}
	return aead
})

// Placeholder returns the text a tool puts in a text content block where
// the reference block belongs, or the error of [Reference.Check].
//
// The text is opaque: the reference block sealed with a key this process
// drew when it first needed one, so it shows no uri, and a placeholder
// made by another process, or copied out of a request, or altered, is
// never taken for one. [Handler] and [RewriteMessage] swap a text block
// whose whole text is a placeholder for the block it seals; nothing else
// does, so a placeholder that reaches a client unswapped stays a text
// block saying that a reference is missing. Each call seals afresh, so two
// placeholders of one reference differ.
func Placeholder(ref Reference) (string, error) {
	block, err := ref.MarshalJSON()
	if err != nil {
		return "", err
	}
	return placeholderText + base64.RawURLEncoding.EncodeToString(sealer().Seal(nil, nil, block, []byte(placeholderTag))), nil
}

// unseal returns the reference block a placeholder text seals, or false
// when text is not a placeholder this process made.
func unseal(text string) ([]byte, bool) {
	sealed, ok := strings.CutPrefix(text, placeholderText)
	if !ok {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return nil, false
	}
	block, err := sealer().Open(nil, nil, raw, []byte(placeholderTag))
	if err != nil {
		return nil, false
	}
	return block, true
}

// RewriteMessage swaps placeholders for reference blocks in one JSON-RPC
// message, or in a batch (a JSON array of messages), and reports whether
// it swapped any. It looks only at a response's result: each item of its
// "content" array that is a text block whose whole text is a placeholder
// this process made becomes the reference block, keeping the item's
// "annotations" and "_meta" if it had them. Every other byte of the
// message is kept as it was. A message with nothing to swap, or one that
// is not JSON, comes back unchanged (the same slice) with false.
//
// Use it on a transport [Handler] does not cover, such as standard I/O,
// by passing each outgoing message through it.
func RewriteMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, []byte(placeholderTag)) {
		return msg, false
	}
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	var edits []edit
	if len(trimmed) > 0 && trimmed[0] == '[' {
		elems, ok := elements(msg)
		if !ok {
			return msg, false
		}
		for _, e := range elems {
			edits = append(edits, messageEdits(msg, e)...)
		}
	} else {
		edits = messageEdits(msg, span{0, len(msg)})
	}
	if len(edits) == 0 {
		return msg, false
	}
	return apply(msg, edits), true
}

// span is a value's place in a message: msg[start:end].
type span struct{ start, end int }

// edit replaces msg[start:end] with with.
type edit struct {
	span
	with []byte
}

// messageEdits returns the swaps for the one message at s in msg.
func messageEdits(msg []byte, s span) []edit {
	members, ok := objectMembers(msg[s.start:s.end])
	if !ok {
		return nil
	}
	var edits []edit
	for _, m := range members {
		if m.name != "result" {
			continue
		}
		result := span{s.start + m.val.start, s.start + m.val.end}
		inner, ok := objectMembers(msg[result.start:result.end])
		if !ok {
			continue
		}
		for _, c := range inner {
			if c.name != "content" {
				continue
			}
			content := span{result.start + c.val.start, result.start + c.val.end}
			items, ok := elements(msg[content.start:content.end])
			if !ok {
				continue
			}
			for _, it := range items {
				item := span{content.start + it.start, content.start + it.end}
				if block, ok := swapItem(msg[item.start:item.end]); ok {
					edits = append(edits, edit{item, block})
				}
			}
		}
	}
	return edits
}

// swapItem returns the reference block that replaces a content item, or
// false when the item is not a placeholder this process made.
func swapItem(item []byte) ([]byte, bool) {
	if !bytes.Contains(item, []byte(placeholderTag)) {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return nil, false
	}
	var typ, text string
	if json.Unmarshal(m["type"], &typ) != nil || typ != "text" || json.Unmarshal(m["text"], &text) != nil {
		return nil, false
	}
	block, ok := unseal(text)
	if !ok {
		return nil, false
	}
	var extra []byte
	for _, key := range [...]string{"annotations", "_meta"} {
		if v, ok := m[key]; ok {
			extra = append(extra, ',', '"')
			extra = append(extra, key...)
			extra = append(extra, '"', ':')
			extra = append(extra, v...)
		}
	}
	if len(extra) == 0 {
		return block, true
	}
	out := append([]byte(nil), block[:len(block)-1]...)
	out = append(out, extra...)
	return append(out, '}'), true
}

// apply makes edits, which are in message order and do not overlap.
func apply(msg []byte, edits []edit) []byte {
	var out []byte
	at := 0
	for _, e := range edits {
		out = append(out, msg[at:e.start]...)
		out = append(out, e.with...)
		at = e.end
	}
	return append(out, msg[at:]...)
}

// member is one property of a JSON object and its value's place, relative
// to the object's own bytes.
type member struct {
	name string
	val  span
}

// objectMembers lists the properties of the JSON object raw, in order, or
// reports false when raw is not one.
func objectMembers(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		v, ok := nextValue(dec)
		if !ok {
			return nil, false
		}
		out = append(out, member{name, v})
	}
	return out, true
}

// elements lists the places of the items of the JSON array raw, or
// reports false when raw is not one.
func elements(raw []byte) ([]span, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	var out []span
	for dec.More() {
		v, ok := nextValue(dec)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// nextValue reads the decoder's next value and returns its place: the
// decoder stops right after the value, and the value's bytes exclude the
// white space before it.
func nextValue(dec *json.Decoder) (span, bool) {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return span{}, false
	}
	end := int(dec.InputOffset())
	return span{end - len(v), end}, true
}
