package convert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// A host turns a tool result into the text its model history keeps. The
// reference becomes a stub: an opaque id, labels and the claimed size,
// never the uri.
func ExampleConverter_Ingest_toolResult() {
	reg, err := refs.New(refs.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv, err := convert.New(reg, convert.Policy{})
	if err != nil {
		fmt.Println(err)
		return
	}
	result := []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"rendered in 676 ms"}`),
		json.RawMessage(`{"type":"resource","uri":"https://render.example/files/chord.wav?sig=abc",
			"mimeType":"audio/wav","sizeBytes":4233704,"name":"chord.wav","disposition":"never"}`),
	}
	content := conv.Ingest(context.Background(), result, convert.Source{Server: "vst", Lane: convert.LaneToolResult, Tool: "vst_render"})
	history := content.History()
	id := content.IDs()[0]
	fmt.Println(strings.ReplaceAll(history, id, "ref_…"))
	fmt.Println("uri shown:", strings.Contains(history, "render.example"))
	// Output:
	// rendered in 676 ms
	// [ref_… "chord.wav" audio/wav, claimed 4.2 MB, from tool vst_render of vst; withheld: its server marked it never, so neither the model nor its tools may receive it]
	// uri shown: false
}

// A push event wakes the model with the event's text and a stub for its
// attachment. The attachment's size claim cannot inflate the wake.
func ExampleContent_Wake() {
	reg, err := refs.New(refs.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv, err := convert.New(reg, convert.Policy{})
	if err != nil {
		fmt.Println(err)
		return
	}
	event := []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"capture finished"}`),
		json.RawMessage(`{"type":"image","uri":"https://cam.example/shot.png","mimeType":"image/png","sizeBytes":9007199254740991}`),
	}
	content := conv.Ingest(context.Background(), event, convert.Source{Server: "camera", Lane: convert.LanePush, Event: "capture"})
	fmt.Println(strings.ReplaceAll(content.Wake(), content.IDs()[0], "ref_…"))
	// Output:
	// capture finished
	// [ref_… image/png, claimed 9.0 PB, attachment on push event capture from camera; fetch it by this id]
}

// Classify reads a block under the one invalid-field rule: a bad optional
// field is absent and named, and the disposition stays in force.
func ExampleClassify() {
	b := convert.Classify(json.RawMessage(`{"type":"resource","uri":"https://s.example/p","sizeBytes":-1,"disposition":"never"}`))
	fmt.Println(b.Kind, b.Testimony.RejectedNames(), b.Testimony.Never())
	// Output:
	// reference [sizeBytes] true
}
