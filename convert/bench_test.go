package convert_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// hundredBlocks is a 100-block tool result: text, references of every
// disposition, and small inline images.
func hundredBlocks() []json.RawMessage {
	out := make([]json.RawMessage, 0, 100)
	for i := 0; len(out) < 100; i++ {
		out = append(out,
			json.RawMessage(fmt.Sprintf(`{"type":"text","text":"step %d finished in %d ms"}`, i, 10*i)),
			json.RawMessage(fmt.Sprintf(`{"type":"resource","uri":"https://render.example/out/%d.wav?sig=abc%d","mimeType":"audio/wav","sizeBytes":%d,"name":"take-%d.wav","disposition":"never"}`, i, i, 4233704+i, i)),
			json.RawMessage(fmt.Sprintf(`{"type":"image","uri":"https://render.example/out/%d.png","mimeType":"image/png","sizeBytes":%d,"disposition":"ref"}`, i, 1000+i)),
			json.RawMessage(`{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==","mimeType":"image/png"}`),
		)
	}
	return out[:100]
}

// BenchmarkRender measures turning content into history text (bench
// README, convert row): a 100-block result, and one block whose name is a
// mebibyte. It reports the output size, which for the megabyte name must
// equal a normal stub's, and, for comparison, the cost of decoding the
// same JSON alone (…/decode-only, see decodeOnly) and the ratio of the two
// measured side by side in one loop (…/vs-decode).
func BenchmarkRender(b *testing.B) {
	huge := []json.RawMessage{json.RawMessage(`{"type":"resource","uri":"https://render.example/n","name":"` +
		strings.Repeat("x", 1<<20) + `","mimeType":"audio/wav","sizeBytes":12,"disposition":"never"}`)}
	normal := []json.RawMessage{json.RawMessage(`{"type":"resource","uri":"https://render.example/n","mimeType":"audio/wav","sizeBytes":12,"disposition":"never"}`)}
	for _, bc := range []struct {
		name   string
		blocks []json.RawMessage
	}{{"100blocks", hundredBlocks()}, {"1MiBname", huge}, {"stub", normal}} {
		b.Run(bc.name, func(b *testing.B) {
			var size int
			for _, r := range bc.blocks {
				size += len(r)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			c := mustConverter(b, mustRegistry(b, refs.Config{}), convert.Policy{})
			ctx := b.Context()
			var out string
			for i := 0; i < b.N; i++ {
				out = c.Ingest(ctx, bc.blocks, convert.Source{Server: "vst", Tool: "vst_render"}).History()
			}
			b.ReportMetric(float64(len(out)), "out-bytes")
		})
		b.Run(bc.name+"/decode-only", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				decodeOnly(b, bc.blocks)
			}
		})
		// The ratio in one loop: each iteration renders the blocks and
		// decodes them alone, timing each, so that a shared machine's
		// noise falls on both sides alike. The bench README's target is
		// render/decode ≤ 1.5 for 100blocks.
		b.Run(bc.name+"/vs-decode", func(b *testing.B) {
			c := mustConverter(b, mustRegistry(b, refs.Config{}), convert.Policy{})
			ctx := b.Context()
			var render, decode time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				_ = c.Ingest(ctx, bc.blocks, convert.Source{Server: "vst", Tool: "vst_render"}).History()
				t1 := time.Now()
				decodeOnly(b, bc.blocks)
				render, decode = render+t1.Sub(t0), decode+time.Since(t1)
			}
			b.ReportMetric(float64(render)/float64(decode), "render/decode")
		})
	}
}

// decodeOnly is the baseline a render is measured against: each block
// decoded once by encoding/json into map[string]json.RawMessage. That is
// the least a host must do to look at a block's properties with the
// standard library (it checks the whole block and splits its top level,
// as rendering must), and the cheapest honest one: decoding into
// map[string]any would also build every nested value, work a render does
// not need, and flatter the ratio.
func decodeOnly(b *testing.B, blocks []json.RawMessage) {
	for _, r := range blocks {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMegabyteNameStubSize pins the bench README's convert target as a
// test: a mebibyte name yields exactly the stub an absent name does.
func TestMegabyteNameStubSize(t *testing.T) {
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	huge := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"u1","name":"`+strings.Repeat("x", 1<<20)+`","sizeBytes":12,"disposition":"never"}`), convert.Source{Server: "s"}).History()
	plain := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"u2","sizeBytes":12,"disposition":"never"}`), convert.Source{Server: "s"}).History()
	if len(huge) != len(plain) {
		t.Errorf("vector 17: a 1 MiB name gives a %d-byte stub, an absent name %d", len(huge), len(plain))
	}
}

// zeroWidthName is a tool name of n bytes: letters with a zero-width space
// after each, which the label sanitizer must delete one by one.
func zeroWidthName(n int) string {
	return strings.Repeat("a\u200b", n/len("a\u200b"))
}

// referenceBlocks returns n reference blocks, each naming its own uri.
func referenceBlocks(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"type":"resource","uri":"https://render.example/out/%d.wav","name":"take-%d.wav","mimeType":"audio/wav","sizeBytes":%d}`, i, i, 1000+i))
	}
	return out
}

// BenchmarkRenderLinear pins that rendering costs what the content costs
// to read (bench README, hostile source row): 10,000 reference blocks
// ingested and shown in every view, once under a short tool name and once
// under a tool name of a mebibyte of zero-width-laced text. The long name
// adds one mebibyte to clean per content, not one per stub, so both land
// in the same order of time.
func BenchmarkRenderLinear(b *testing.B) {
	blocks := referenceBlocks(10000)
	for _, bc := range []struct{ name, tool string }{
		{"short-name", "vst_render"},
		{"1MiB-name", zeroWidthName(1 << 20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			c := mustConverter(b, mustRegistry(b, refs.Config{Capacity: 20000}), convert.Policy{})
			ctx := b.Context()
			src := convert.Source{Server: "vst", Tool: bc.tool}
			for i := 0; i < b.N; i++ {
				ct := c.Ingest(ctx, blocks, src)
				_ = ct.History()
				_ = ct.Wake()
				_ = convert.PushJSON(ct.Push())
				_ = ct.Script()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(blocks)), "ns/block")
		})
	}
}
