package convert_test

import (
	"encoding/json"
	"errors"
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
			c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{ShowURI: always})
			ct := c.Ingest(t.Context(), raws(tt.block), convert.Source{Server: "s"})
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
	reg := mustRegistry(t, refs.Config{})
	c := mustConverter(t, reg, convert.Policy{ShowURI: always})
	c.Ingest(t.Context(), raws(`{"type":"resource","uri":"https://cdn.example/m","disposition":"never"}`), convert.Source{Server: "s"})
	later := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"https://cdn.example/m","disposition":"ref"}`), convert.Source{Server: "t"})
	if strings.Contains(later.History(), "cdn.example") {
		t.Errorf("N1/S2: a later ref delivery lifted a never mark's uri: %s", later.History())
	}
	// The default shows none.
	def := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	if h := def.Ingest(t.Context(), raws(tests[0].block), convert.Source{Server: "s"}).History(); strings.Contains(h, "cdn.example") {
		t.Errorf("S2: the zero Policy showed a uri: %s", h)
	}
}

// TestInlinePolicy pins S5: a verified ref payload may be inlined in a push
// view; a never one, or one not yet verified, keeps its stub.
func TestInlinePolicy(t *testing.T) {
	inline := func(e convert.Entry) (convert.ModelBlock, bool) {
		return convert.ModelBlock{Type: "image", Data: "VkVSSUZJRUQ=", MimeType: e.Copy.MimeType}, true
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
			reg := mustRegistry(t, refs.Config{})
			if tt.save {
				e := reg.Register(t.Context(), convert.Registration{Testimony: convert.Testimony{URI: "https://s.example/a", Present: convert.FieldURI}, Server: "s"})
				if err := reg.Save(e.ID, convert.Copy{Path: e.ID + ".png", Bytes: 8, MimeType: "image/png"}, e.Testimony); err != nil {
					t.Fatal(err)
				}
			}
			c := mustConverter(t, reg, convert.Policy{Inline: inline})
			ct := c.Ingest(t.Context(), raws(tt.block), convert.Source{Server: "s", Lane: convert.LanePush})
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
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(`{"type":"image","data":"aW1n","mimeType":" Image/PNG\u202e\u0007"}`), convert.Source{Server: "s", Lane: convert.LanePush})
	blocks := ct.Push()
	if len(blocks) != 1 || blocks[0].MimeType != "image/png" {
		t.Errorf("L1: inline media type reached the push view as %+q, want \"image/png\"", blocks[0].MimeType)
	}
}

// TestEmbeddedOwnNeverWithoutURI pins N6 failing closed: an embedded
// resource that calls itself never is withheld even when it names no uri
// that a claim could key on.
func TestEmbeddedOwnNeverWithoutURI(t *testing.T) {
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	for _, server := range []string{"s", ""} {
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","disposition":"never","resource":{"mimeType":"text/plain","text":"NEVER-TEXT"}}`), convert.Source{Server: server})
		script, _ := json.Marshal(ct.Script())
		for _, v := range []string{ct.History(), convert.PushJSON(ct.Push()), string(script)} {
			if strings.Contains(v, "NEVER-TEXT") {
				t.Errorf("N6: server %q: an embedded resource's own never did not withhold it: %s", server, v)
			}
		}
	}
}

// TestNewRefuses pins the safe constructor: no Registrar and a negative
// bound are errors, never a panic or an unbounded view.
func TestNewRefuses(t *testing.T) {
	reg := mustRegistry(t, refs.Config{})
	tests := []struct {
		name string
		reg  convert.Registrar
		p    convert.Policy
	}{
		{"nil-registrar", nil, convert.Policy{}},
		{"negative-view", reg, convert.Policy{ViewMax: -1}},
		{"negative-stub", reg, convert.Policy{StubMax: -1}},
		{"negative-name", reg, convert.Policy{NameMax: -5}},
		{"negative-type", reg, convert.Policy{TypeMax: -5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := convert.New(tt.reg, tt.p); err == nil || c != nil {
				t.Errorf("New = %v, %v; want an error", c, err)
			}
		})
	}
}

// TestTypeMaxAboveLabelBound pins that a host's TypeMax above the label
// package's own bound takes effect, in the stub and in the script view.
func TestTypeMaxAboveLabelBound(t *testing.T) {
	long := "application/" + strings.Repeat("x", 200)
	raw := json.RawMessage(`{"type":"resource","uri":"https://s.example/a","mimeType":"` + long + `"}`)
	for _, max := range []int{50, 120, 180} {
		c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{TypeMax: max})
		ct := c.Ingest(t.Context(), []json.RawMessage{raw}, convert.Source{Server: "s", Lane: convert.LaneToolResult})
		want := long[:max-1] + "…"
		if !strings.Contains(ct.History(), " "+want+",") {
			t.Errorf("TypeMax %d: stub %q lacks the type cut at %d runes", max, ct.History(), max)
		}
		if got := ct.Script()[0].MimeType; got != want {
			t.Errorf("TypeMax %d: script type %q, want %q", max, got, want)
		}
	}
}

// TestMinViewMaxAsDocumented keeps the number MinViewMax's documentation
// states equal to the constant, which is computed from unexported ones.
func TestMinViewMaxAsDocumented(t *testing.T) {
	if convert.MinViewMax != 437 {
		t.Errorf("MinViewMax = %d; its documentation says 437", convert.MinViewMax)
	}
}

// TestNewRefusals pins convert.New's refusals: each is an error that
// matches ErrBadConfig, a Registrar that is a nil pointer included, which
// used to pass the nil check and panic in the first Ingest.
func TestNewRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  convert.Registrar
		p    convert.Policy
	}{
		{"nil Registrar", nil, convert.Policy{}},
		{"nil *refs.Registry", (*refs.Registry)(nil), convert.Policy{}},
		{"negative NameMax", newRegistry(t), convert.Policy{NameMax: -1}},
		{"StubMax below the minimum", newRegistry(t), convert.Policy{StubMax: convert.MinStubMax - 1}},
		{"ViewMax below the minimum", newRegistry(t), convert.Policy{ViewMax: convert.MinViewMax - 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := convert.New(tc.reg, tc.p)
			if err == nil || c != nil {
				t.Fatalf("New = %v, %v; want an error and no Converter", c, err)
			}
			if !errors.Is(err, convert.ErrBadConfig) {
				t.Errorf("New's error %v does not match ErrBadConfig", err)
			}
		})
	}
}
