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
	// URI is shown only where the policy's ShowURI allowed it.
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
// block in order.
func (ct *Content) Script() []ScriptItem {
	c := ct.c
	out := make([]ScriptItem, len(ct.blocks))
	for i, b := range ct.blocks {
		it := ct.items[i]
		switch {
		case b.Kind == KindText:
			out[i] = ScriptItem{Kind: "text", Text: ct.shownText(i)}
		case b.Kind == KindReference && !it.withheld:
			e, ok := c.reg.Entry(it.id)
			if !ok {
				out[i] = ScriptItem{Kind: "notice", Text: noticeUnknownRecord}
				continue
			}
			out[i] = c.scriptReference(asShown(e, b), ct.src)
		case b.Kind == KindInline && !b.Contradiction:
			out[i] = ScriptItem{Kind: "inline", Text: b.Data, MimeType: label.MediaType(b.MimeType)}
		case b.Kind == KindEmbedded && !it.withheld:
			out[i] = ScriptItem{Kind: "embedded", Text: ct.shownText(i), MimeType: label.MediaType(b.MimeType)}
		default:
			out[i] = ScriptItem{Kind: "notice", Text: ct.line(i)}
		}
	}
	return out
}

// scriptReference is a script's item for a reference shown as e, in
// content from src.
func (c *Converter) scriptReference(e Entry, src Source) ScriptItem {
	t := e.Testimony
	s := ScriptItem{
		Kind:         "reference",
		RefID:        e.ID,
		Name:         label.Display(t.Name, c.policy.NameMax),
		MimeType:     label.MediaTypeMax(t.MimeType, c.policy.TypeMax),
		ClaimedBytes: -1,
	}
	if t.Has(FieldSizeBytes) {
		s.ClaimedBytes = t.SizeBytes
	}
	if n := c.next(e, src); n.copy != nil {
		s.SavedPath = n.copy.Path
	} else {
		s.Unfetchable = n.why
	}
	if uri, ok := c.shownURI(e); ok {
		s.URI = uri
	}
	return s
}
