package convert_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// leftOutNote matches the notice a view ends with when its bound left
// blocks out.
var leftOutNote = regexp.MustCompile(`^\[([0-9]+) more block\(s\) not shown: this view reached its size bound\]$`)

// leftOutCount returns the count a left-out notice states, and false when
// s is no such notice.
func leftOutCount(s string) (int, bool) {
	m := leftOutNote.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// TestPushLeftOutCount pins S6 on the push view: the notice that ends a
// cut view counts exactly the blocks it left out, and a block left out at
// the end is never dropped without one.
func TestPushLeftOutCount(t *testing.T) {
	text := `{"type":"text","text":"` + strings.Repeat("a", 440) + `"}`
	never := func(i int) string {
		return fmt.Sprintf(`{"type":"resource","uri":"https://vault.example/%d","name":"take-%d.wav","disposition":"never"}`, i, i)
	}
	tests := []struct {
		name, reason string
		blocks       []string
		left         int
	}{
		{"two-stubs-after-text", "S6 both stubs left out are counted", []string{text, never(1), never(2)}, 2},
		{"trailing-never-stub", "S6 a last stub left out still gets its notice", []string{text, never(1)}, 1},
		{"all-fit", "S6 no notice when nothing is left out", []string{never(1)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{ViewMax: 600})
			ct := c.Ingest(t.Context(), raws(tt.blocks...), convert.Source{Server: "vst", Lane: convert.LanePush, Event: "render_done"})
			push := ct.Push()
			if n := utf16Len(convert.PushJSON(push)); n > 600 {
				t.Fatalf("S4: push view is %d code units, over 600", n)
			}
			left, noted := leftOutCount(push[len(push)-1].Text)
			if !noted {
				left = 0
			}
			if left != tt.left {
				t.Errorf("%s: the notice says %d left out (noted %v), want %d\n%s", tt.reason, left, noted, tt.left, convert.PushJSON(push))
			}
			if shown := len(push) - boolInt(noted); shown+left != len(tt.blocks) {
				t.Errorf("%s: %d blocks shown and %d counted as left out, of %d", tt.reason, shown, left, len(tt.blocks))
			}
		})
	}
}

// TestTextViewsLeftOutCount pins S4 and S6 on the history and wake texts:
// a text view cut by its bound shows whole stubs, one a line, and ends
// with a notice that counts exactly the blocks left out.
func TestTextViewsLeftOutCount(t *testing.T) {
	const n = 200
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{ViewMax: 1000})
	ct := c.Ingest(t.Context(), referenceBlocks(n), convert.Source{Server: "vst", Tool: "vst_render"})
	for name, view := range map[string]string{"history": ct.History(), "wake": ct.Wake()} {
		if got := utf16Len(view); got > 1000 {
			t.Errorf("S4: %s is %d code units, over 1000", name, got)
		}
		lines := strings.Split(view, "\n")
		left, ok := leftOutCount(lines[len(lines)-1])
		if !ok {
			t.Errorf("S6: a cut %s must end with a notice of what it left out:\n%s", name, view)
			continue
		}
		stubs := lines[:len(lines)-1]
		for _, s := range stubs {
			if !strings.HasPrefix(s, "[ref_") || !strings.HasSuffix(s, "]") {
				t.Errorf("S4: %s cut a stub: %q", name, s)
			}
		}
		if len(stubs)+left != n {
			t.Errorf("S6: %s shows %d stubs and says %d were left out, of %d", name, len(stubs), left, n)
		}
	}
}

// TestNewRefusesSmallBounds pins L5's host side: a view bound too small
// to hold one whole stub and the left-out notice, or a stub bound too
// small for the host's own notices, is refused, and the minimums are
// accepted.
func TestNewRefusesSmallBounds(t *testing.T) {
	reg := mustRegistry(t, refs.Config{})
	for _, p := range []convert.Policy{{ViewMax: 1}, {ViewMax: 87}, {ViewMax: convert.MinViewMax - 1}, {StubMax: 1}, {StubMax: convert.MinStubMax - 1}} {
		if c, err := convert.New(reg, p); err == nil || c != nil {
			t.Errorf("L5: New(%+v) = %v, %v; want an error", p, c, err)
		}
	}
	for _, p := range []convert.Policy{{ViewMax: convert.MinViewMax}, {StubMax: convert.MinStubMax}, {ViewMax: convert.MinViewMax, StubMax: 4 * convert.DefaultStubMax}} {
		if _, err := convert.New(reg, p); err != nil {
			t.Errorf("L5: New(%+v) refused a bound at or above the minimum: %v", p, err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
