package convert_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestViewAllocations pins how much garbage a view of an ordinary tool
// result makes: one text and ten references, rendered as history and as
// push blocks. Every reference's stub is written into one buffer of its
// final size, and each view's pieces are joined once, so a view costs
// about two allocations per stub (its size text and its line): 22 and 21
// when this test was written, against 66 and 65 with buffers grown step
// by step. (A count, not a time: it does not depend on the machine.)
func TestViewAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts; .ci/run runs this test without it")
	}
	blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"render 7 finished"}`)}
	for j := range 10 {
		blocks = append(blocks, json.RawMessage(fmt.Sprintf(
			`{"type":"resource","uri":"https://files.example/out/7/%d.wav?sig=0123456789abcdef","name":"take-7-%d.wav","mimeType":"audio/wav","sizeBytes":1048576}`, j, j)))
	}
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	ct := c.Ingest(t.Context(), blocks, convert.Source{Server: "vst", Tool: "render"})
	for _, tt := range []struct {
		view string
		max  float64
		f    func()
	}{
		{"History", 24, func() { sink = ct.History() }},
		{"Push", 24, func() { sinkBlocks = ct.Push() }},
	} {
		if n := testing.AllocsPerRun(50, tt.f); n > tt.max {
			t.Errorf("%s of 1 text and 10 references: %v allocations, want at most %v", tt.view, n, tt.max)
		}
	}
}

var (
	sink       string
	sinkBlocks []convert.ModelBlock
)

// TestLiveProvenanceAllocations: a tool name that writes out one of the
// content's uris makes its provenance live (a later mark may cut it), and
// each stub then judges the cut again; that must cost a few lookups, not
// a new search of the name per stub. (A count, not a time.)
func TestLiveProvenanceAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts; .ci/run runs this test without it")
	}
	var blocks []json.RawMessage
	for j := range 10 {
		blocks = append(blocks, json.RawMessage(fmt.Sprintf(`{"type":"resource","uri":"urn:studio:take:%d","name":"take-%d.wav"}`, j, j)))
	}
	c := mustConverter(t, mustRegistry(t, refs.Config{}), convert.Policy{})
	ct := c.Ingest(t.Context(), blocks, convert.Source{Server: "vst", Tool: "RENDER OF URN:STUDIO:TAKE:3 " + strings.Repeat("PAD ", 12)})
	if n := testing.AllocsPerRun(50, func() { sink = ct.History() }); n > 24 {
		t.Errorf("History of 10 references under a live provenance: %v allocations, want at most 24", n)
	}
}
