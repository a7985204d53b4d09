package convert_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// hostileBounds are the view bounds every hostile row is rendered at:
// the minimum, just above it, a few in between, and the default.
var hostileBounds = []int{convert.MinViewMax, convert.MinViewMax + 1, convert.MinViewMax + 97, 1000, 4096, convert.DefaultViewMax}

// hostileSecret is in every never uri of the hostile rows; no view may
// show it.
const hostileSecret = "HOSTILE-SIG"

func hostileNever(i int) string {
	return fmt.Sprintf("https://vault.example/%d?sig=%s", i, hostileSecret)
}

// nest returns value wrapped in depth arrays.
func nest(value string, depth int) string {
	return strings.Repeat("[", depth) + value + strings.Repeat("]", depth)
}

// jsonText returns a text block holding s.
func jsonText(s string) string {
	q, _ := json.Marshal(s)
	return `{"type":"text","text":` + string(q) + `}`
}

// TestHostileInputs drives content built to be expensive or misleading
// through every view at every bound from the minimum up. Each row's cost
// is bounded by its design, not by a clock: the views stop at their bound
// and clean each source name once, so no row takes time in proportion to
// blocks times name length. Every row asserts that nothing panics, every
// view is within its bound, no never uri shows, and every view counts
// exactly the blocks it left out (L5, S2, S4, S6, N1, N2, N8). -short
// shrinks the largest sizes.
func TestHostileInputs(t *testing.T) {
	const deep = 100000
	big, many := 16<<20, 100000
	if testing.Short() {
		big, many = 1<<20, 10000
	}
	type row struct {
		name   string
		src    convert.Source
		blocks func() []string
	}
	references := func(n int, never bool) []string {
		out := make([]string, n)
		for i := range out {
			disp := ""
			if never && i%2 == 0 {
				disp = `,"disposition":"never"`
			}
			out[i] = fmt.Sprintf(`{"type":"resource","uri":"%s","name":"take-%d.wav","sizeBytes":%d%s}`, hostileNever(i), i, i, disp)
		}
		return out
	}
	rows := []row{
		{"deep-json-block", convert.Source{Server: "vst", Lane: convert.LanePush}, func() []string {
			return []string{
				`{"type":"resource","uri":"` + hostileNever(0) + `","disposition":"never","x":` + nest("0", deep) + `}`,
				`{"type":"image","uri":"` + hostileNever(0) + `","mimeType":"image/png"}`,
				`{"type":"text","text":"after"}`,
			}
		}},
		{"deep-json-in-text", convert.Source{Server: "vst", Tool: "t"}, func() []string {
			return []string{
				jsonText(`{"files":[{"uri":"` + hostileNever(0) + `","disposition":"never"}],"deep":` + nest("1", deep) + `}`),
				jsonText(`{"deep":` + nest("1", deep) + `,"files":[{"uri":"` + hostileNever(1) + `","disposition":"never"}]}`),
				`{"type":"resource","uri":"` + hostileNever(0) + `","name":"sibling"}`,
				`{"type":"resource","uri":"` + hostileNever(1) + `","name":"sibling"}`,
				`{"type":"resource","resource":{"uri":"https://plain.example/e","text":` + func() string {
					q, _ := json.Marshal(`{"files":[{"uri":"` + hostileNever(2) + `","disposition":"never"}],"deep":` + nest("1", deep) + `}`)
					return string(q)
				}() + `}}`,
			}
		}},
		{"16MiB-names", convert.Source{Server: zeroWidthName(big), Lane: convert.LaneChannel, Tool: strings.Repeat("t", big), Event: strings.Repeat("\u202e", big/3)}, func() []string {
			return append(references(200, true), `{"type":"resource","uri":"`+hostileNever(999)+`","name":"`+strings.Repeat("n", big)+`","disposition":"never"}`)
		}},
		{"16MiB-text", convert.Source{Server: "vst", Lane: convert.LanePush}, func() []string {
			return []string{jsonText(strings.Repeat("<&\u2028\"😀\n", big/16)), `{"type":"resource","uri":"` + hostileNever(0) + `","disposition":"never"}`}
		}},
		{"many-blocks", convert.Source{Server: "vst", Tool: "vst_render"}, func() []string { return references(many, true) }},
		{"many-blocks-serverless", convert.Source{Lane: convert.LaneInjection}, func() []string { return references(many, true) }},
		{"1MiB-zero-width-tool-10k-blocks", convert.Source{Server: "vst", Tool: zeroWidthName(1 << 20)}, func() []string { return references(10000, true) }},
		{"duplicate-keys", convert.Source{Server: "vst", Lane: convert.LanePush}, func() []string {
			return []string{
				`{"type":"resource","uri":"` + hostileNever(0) + `","disposition":"ref","name":"a","disposition":"never","name":"b"}`,
				`{"type":"image","uri":"` + hostileNever(0) + `","mimeType":"image/png"}`,
				`{"type":"resource","uri":"` + hostileNever(1) + `","uri":"` + hostileNever(2) + `","disposition":"never"}`,
				`{"type":"resource","uri":"` + hostileNever(2) + `"}`,
				`{"type":"image","uri":"` + hostileNever(3) + `","disposition":"never","dispositio\u006e":"ref"}`,
				`{"type":"resource","uri":"` + hostileNever(3) + `"}`,
			}
		}},
		{"long-never-uris-in-text", convert.Source{Server: "vst", Lane: convert.LanePush}, func() []string {
			var files []string
			for i := 0; i < 200; i++ {
				files = append(files, `{"uri":"`+hostileNever(i)+`&pad=`+strings.Repeat("p", 4000)+`","disposition":"never"}`)
			}
			list := "[" + strings.Join(files, ",") + "]"
			return []string{jsonText(list), `{"type":"resource","resource":{"uri":"https://plain.example/e","text":` + func() string { q, _ := json.Marshal(list); return string(q) }() + `}}`, jsonText("after")}
		}},
		{"never-nested-in-text", convert.Source{Server: "vst", Tool: "t"}, func() []string {
			inner := `{"type":"resource","uri":"` + hostileNever(0) + `","disposition":"never"}`
			for d := 0; d < 60; d++ {
				inner = `{"level":` + fmt.Sprint(d) + `,"next":` + inner + `}`
			}
			return []string{
				jsonText(inner),
				`{"type":"resource","resource":{"uri":"https://plain.example/e","text":` + func() string { q, _ := json.Marshal(inner); return string(q) }() + `}}`,
				`{"type":"resource","uri":"` + hostileNever(0) + `","name":"sibling"}`,
				`{"type":"image","uri":"` + hostileNever(0) + `"}`,
			}
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			raw := r.blocks()
			blocks := make([]convert.Block, len(raw))
			for i, b := range raw {
				blocks[i] = convert.Classify(json.RawMessage(b))
			}
			// One registry for every bound: the later ingestions find
			// the records the first one made, as a host's would.
			reg := mustRegistry(t, refs.Config{Capacity: len(blocks) + 16})
			for _, max := range hostileBounds {
				c := mustConverter(t, reg, convert.Policy{ViewMax: max})
				ct := c.IngestBlocks(t.Context(), blocks, r.src)
				checkViews(t, ct, max, hostileSecret, "vault.example")
			}
		})
	}
}
