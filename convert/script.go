package convert

import (
	"encoding/json"

	"github.com/mcplrefs/refcore/label"
)

// ScriptItem is one block of a script's structured view of content.
// For a reference it carries the id, labels, claimed size, saved path and
// why it cannot be fetched; it never carries a uri under never, nor by
// default at all.
type ScriptItem struct {
	// Kind is "text", "reference", "inline", "embedded" or "notice".
	Kind string
	// Text is a text block's text, an embedded resource's text, or the
	// notice shown in place of a withheld or unusable block.
	Text string
	// RefID is the reference id ("" for anything but a shown reference).
	RefID string
	// Name and MimeType are display labels, cleaned and bounded.
	Name     string
	MimeType string
	// ClaimedBytes is the claimed size, or -1 when none was claimed.
	ClaimedBytes int64
	// SavedPath is the host-generated path of a verified copy, or "".
	SavedPath string
	// Unfetchable says why the reference cannot be fetched, or "".
	Unfetchable string
	// URI is shown only where the policy's ShowURI allowed it, cleaned and
	// bounded as a label, as a stub shows it.
	URI string
}

// MarshalJSON writes a reference with explicit nulls for a missing saved
// path or reason, and other kinds with only the fields they use.
func (s ScriptItem) MarshalJSON() ([]byte, error) {
	if s.Kind != "reference" {
		type plain struct {
			Kind     string `json:"kind"`
			Text     string `json:"text,omitempty"`
			MimeType string `json:"mimeType,omitempty"`
		}
		return json.Marshal(plain{s.Kind, s.Text, s.MimeType})
	}
	type ref struct {
		Kind         string  `json:"kind"`
		RefID        string  `json:"refId"`
		Name         *string `json:"name"`
		MimeType     *string `json:"mimeType"`
		ClaimedBytes *int64  `json:"claimedBytes"`
		SavedPath    *string `json:"savedPath"`
		Unfetchable  *string `json:"unfetchable"`
		URI          string  `json:"uri,omitempty"`
	}
	r := ref{Kind: s.Kind, RefID: s.RefID, URI: s.URI,
		Name: nonEmpty(s.Name), MimeType: nonEmpty(s.MimeType),
		SavedPath: nonEmpty(s.SavedPath), Unfetchable: nonEmpty(s.Unfetchable)}
	if s.ClaimedBytes >= 0 {
		n := s.ClaimedBytes
		r.ClaimedBytes = &n
	}
	return json.Marshal(r)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Script returns a script's structured view of the content, one item per
// block in order. It is bounded like every view: the JSON text of the
// result, as json.Marshal writes it, never exceeds the view bound. It
// shows the items in order while they fit, cuts the text of a text or
// embedded item that does not with a closing "…", never cuts any other
// item, and then ends with a notice item that says how many blocks it
// left out.
func (ct *Content) Script() []ScriptItem {
	out := fitList(ct.c.policy.ViewMax, len(ct.blocks), scriptNoticeOverhead, func(i, room int) (ScriptItem, int, bool) {
		item, cuttable := ct.scriptItem(i, byteLimit(room))
		if cost := scriptCost(item, room); cost <= room {
			return item, cost, false
		}
		if cuttable {
			text := item.Text
			item.Text = ""
			strRoom := room - scriptCost(item, room) - len(`,"text":`)
			if fit, ok := fitJSON(text, 0, strRoom, true); ok {
				item.Text = fit
				return item, 0, true
			}
		}
		return item, -1, true
	})
	if left := len(ct.blocks) - len(out); left > 0 {
		out = append(out, ScriptItem{Kind: "notice", Text: leftOutNotice(left)})
	}
	return out
}

// scriptReference is a script's item for a reference shown as e, in
// content ct.
func (c *Converter) scriptReference(e Entry, ct *Content) ScriptItem {
	t := e.Testimony
	s := ScriptItem{
		Kind:         "reference",
		RefID:        e.ID,
		Name:         c.nameLabel(t.Name, t.URI),
		MimeType:     typeLabel(t.MimeType, c.policy.TypeMax, t.URI),
		ClaimedBytes: -1,
	}
	if t.Has(FieldSizeBytes) {
		s.ClaimedBytes = t.SizeBytes
	}
	if n := c.next(e, ct.src); n.copy != nil {
		s.SavedPath = n.copy.Path
	} else {
		s.Unfetchable = n.why
	}
	if uri, ok := c.shownURI(e, ct); ok {
		s.URI = uri
	}
	return s
}

// scriptItem is block i as a script's view shows it, and whether the view
// may cut its text. Of a server's text it reads at most limit bytes (see
// byteLimit).
func (ct *Content) scriptItem(i, limit int) (ScriptItem, bool) {
	c, b, it := ct.c, ct.shownBlock(i), ct.items[i]
	switch {
	case b.Kind == KindText:
		return ScriptItem{Kind: "text", Text: ct.shownText(i, limit)}, true
	case b.Kind == KindReference && !it.withheld:
		e, ok := c.reg.Entry(it.id)
		if !ok {
			return ScriptItem{Kind: "notice", Text: c.boundLine(noticeUnknownRecord)}, false
		}
		return c.scriptReference(asShown(e, b), ct), false
	case b.Kind == KindInline && !b.Contradiction:
		return ScriptItem{Kind: "inline", Text: b.Data, MimeType: typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI)}, false
	case b.Kind == KindEmbedded && !ct.embeddedWithheld(i):
		return ScriptItem{Kind: "embedded", Text: ct.shownText(i, limit), MimeType: typeLabel(b.MimeType, label.TypeMax, b.Testimony.URI)}, true
	}
	s, _ := ct.lineOf(b, i, limit)
	return ScriptItem{Kind: "notice", Text: s}, false
}

// scriptNoticeOverhead is the JSON cost of a notice item around its text,
// quotes included.
const scriptNoticeOverhead = len(`{"kind":"notice","text":""}`)

// scriptCost is the length of item's JSON text in UTF-16 code units, as
// json.Marshal writes it. For an item other than a reference it stops
// counting once the cost passes limit.
func scriptCost(item ScriptItem, limit int) int {
	if item.Kind == "reference" {
		raw, err := item.MarshalJSON()
		if err != nil {
			return maxInt
		}
		return utf16Len(string(raw))
	}
	n := len(`{"kind":}`) + jsonStringCost(item.Kind, true, limit)
	if item.Text != "" && n <= limit {
		n += len(`,"text":`) + jsonStringCost(item.Text, true, limit-n)
	}
	if item.MimeType != "" && n <= limit {
		n += len(`,"mimeType":`) + jsonStringCost(item.MimeType, true, limit-n)
	}
	return n
}
