package convert_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestShowURIPolicy pins S2: a host predicate may show the uri of a ref or
// absent reference, and never the uri of a never one, whatever it says.
func TestShowURIPolicy(t *testing.T) {
	always := func(convert.Entry) bool { return true }
	tests := []struct {
		name, block, reason string
		shown               bool
	}{
		{"ref", `{"type":"resource","uri":"https://cdn.example/a.png","disposition":"ref"}`, "S2 ref: the host may show it", true},
		{"absent", `{"type":"resource","uri":"https://cdn.example/a.png"}`, "S2 absent: the host may show it", true},
		{"never", `{"type":"resource","uri":"https://cdn.example/a.png","disposition":"never"}`, "S2 never: no policy restores the uri", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := convert.New(refs.New(refs.Config{}), convert.Policy{ShowURI: always})
			ct := c.Ingest(raws(tt.block), convert.Source{Server: "s"})
			script, _ := json.Marshal(ct.Script())
			for _, view := range []string{ct.History(), convert.PushJSON(ct.Push()), string(script)} {
				if got := strings.Contains(view, "cdn.example"); got != tt.shown {
					t.Errorf("uri shown = %v, want %v (%s) in %s", got, tt.shown, tt.reason, view)
				}
			}
		})
	}
	// A record a server marked never keeps its uri hidden even when a later
	// result calls it ref (N1, S2).
	reg := refs.New(refs.Config{})
	c := convert.New(reg, convert.Policy{ShowURI: always})
	c.Ingest(raws(`{"type":"resource","uri":"https://cdn.example/m","disposition":"never"}`), convert.Source{Server: "s"})
	later := c.Ingest(raws(`{"type":"resource","uri":"https://cdn.example/m","disposition":"ref"}`), convert.Source{Server: "t"})
	if strings.Contains(later.History(), "cdn.example") {
		t.Errorf("N1/S2: a later ref delivery lifted a never mark's uri: %s", later.History())
	}
	// The default shows none.
	def := convert.New(refs.New(refs.Config{}), convert.Policy{})
	if h := def.Ingest(raws(tests[0].block), convert.Source{Server: "s"}).History(); strings.Contains(h, "cdn.example") {
		t.Errorf("S2: the zero Policy showed a uri: %s", h)
	}
}

// TestInlinePolicy pins S5: a verified ref payload may be inlined in a push
// view; a never one, or one not yet verified, keeps its stub.
func TestInlinePolicy(t *testing.T) {
	inline := func(e convert.Entry) (convert.ModelBlock, bool) {
		return convert.ModelBlock{Type: "image", Data: "VkVSSUZJRUQ=", MimeType: e.VerifiedType}, true
	}
	tests := []struct {
		name, block, reason string
		save, inlined       bool
	}{
		{"ref-saved", `{"type":"image","uri":"https://s.example/a","disposition":"ref"}`, "S5 a verified ref payload may be inlined", true, true},
		{"absent-saved", `{"type":"image","uri":"https://s.example/a"}`, "S5 absent disposition likewise", true, true},
		{"ref-unsaved", `{"type":"image","uri":"https://s.example/a","disposition":"ref"}`, "S5 only a verified payload", false, false},
		{"never-saved", `{"type":"image","uri":"https://s.example/a","disposition":"never"}`, "S5 never for never", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := refs.New(refs.Config{})
			if tt.save {
				e := reg.Register(convert.Registration{Testimony: convert.Testimony{URI: "https://s.example/a", Present: convert.FieldURI}, Server: "s"})
				if err := reg.Save(e.ID, refs.Saved{Path: e.ID + ".png", Bytes: 8, MimeType: "image/png"}); err != nil {
					t.Fatal(err)
				}
			}
			c := convert.New(reg, convert.Policy{Inline: inline})
			ct := c.Ingest(raws(tt.block), convert.Source{Server: "s", Lane: convert.LanePush})
			push := convert.PushJSON(ct.Push())
			if got := strings.Contains(push, "VkVSSUZJRUQ="); got != tt.inlined {
				t.Errorf("inlined = %v, want %v (%s): %s", got, tt.inlined, tt.reason, push)
			}
			if strings.Contains(ct.History(), "VkVSSUZJRUQ=") {
				t.Errorf("S5: history must keep the stub")
			}
		})
	}
}

// TestInlineMediaTypeLabelled pins L1 on the push view: an inline block's
// media type is a label like any other server string.
func TestInlineMediaTypeLabelled(t *testing.T) {
	c := convert.New(refs.New(refs.Config{}), convert.Policy{})
	ct := c.Ingest(raws(`{"type":"image","data":"aW1n","mimeType":" Image/PNG\u202e\u0007"}`), convert.Source{Server: "s", Lane: convert.LanePush})
	blocks := ct.Push()
	if len(blocks) != 1 || blocks[0].MimeType != "image/png" {
		t.Errorf("L1: inline media type reached the push view as %+q, want \"image/png\"", blocks[0].MimeType)
	}
}

// TestEmbeddedOwnNeverWithoutURI pins N6 failing closed: an embedded
// resource that calls itself never is withheld even when it names no uri
// that a claim could key on.
func TestEmbeddedOwnNeverWithoutURI(t *testing.T) {
	c := convert.New(refs.New(refs.Config{}), convert.Policy{})
	for _, server := range []string{"s", ""} {
		ct := c.Ingest(raws(`{"type":"resource","disposition":"never","resource":{"mimeType":"text/plain","text":"NEVER-TEXT"}}`), convert.Source{Server: server})
		script, _ := json.Marshal(ct.Script())
		for _, v := range []string{ct.History(), convert.PushJSON(ct.Push()), string(script)} {
			if strings.Contains(v, "NEVER-TEXT") {
				t.Errorf("N6: server %q: an embedded resource's own never did not withhold it: %s", server, v)
			}
		}
	}
}
