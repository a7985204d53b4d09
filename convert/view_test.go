package convert_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/internal/golden"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// fixedNow is the clock every golden view is rendered at.
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// seededReader makes registry ids deterministic for golden files.
type seededReader struct{ r *rand.ChaCha8 }

func (s seededReader) Read(p []byte) (int, error) { return s.r.Read(p) }

func newRegistry(tb testing.TB) *refs.Registry {
	tb.Helper()
	return mustRegistry(tb, refs.Config{Rand: seededReader{rand.NewChaCha8([32]byte{1})}})
}

// mustRegistry returns a registry configured by cfg, failing tb when
// refs.New refuses the configuration.
func mustRegistry(tb testing.TB, cfg refs.Config) *refs.Registry {
	tb.Helper()
	reg, err := refs.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}

func raws(blocks ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(blocks))
	for i, b := range blocks {
		out[i] = json.RawMessage(b)
	}
	return out
}

const secretURI = "https://files.example/render/chord.wav?token=SECRET-TOKEN"

// goldenCases are the representative results whose views the golden files
// pin (S1-S6). Each names the rules it shows.
var goldenCases = []struct {
	name, reason string
	blocks       []string
	server       string
	// prepare runs before ingestion (for saved copies, earlier marks).
	prepare func(t *testing.T, reg *refs.Registry)
	// marks, if set, is the registry's mark store.
	marks refs.MarkStore
}{
	{name: "text-and-references", reason: "S1 uniform stubs for never, ref and absent dispositions beside text", server: "vst",
		blocks: []string{`{"type":"text","text":"{\"peak\":0.6}"}`,
			`{"type":"resource","uri":"` + secretURI + `","mimeType":"audio/wav","sizeBytes":4233704,"name":"chord.wav","disposition":"never"}`,
			`{"type":"resource","uri":"https://files.example/a.png","mimeType":"image/png","sizeBytes":1200,"name":"a.png","disposition":"ref"}`,
			`{"type":"image","uri":"https://files.example/b.png","mimeType":"image/png","sizeBytes":999}`}},
	{name: "expired-three-ways", reason: "E1 passed, unparseable and rejected expiry each say why", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/old","name":"old.bin","expiresAt":"2020-01-01T00:00:00Z"}`,
			`{"type":"resource","uri":"https://files.example/bad","name":"bad.bin","expiresAt":"soon"}`,
			`{"type":"resource","uri":"https://files.example/long","name":"long.bin","expiresAt":"` + strings.Repeat("9", 65) + `"}`,
			`{"type":"resource","uri":"https://files.example/live","name":"live.bin","expiresAt":"2027-01-01"}`}},
	{name: "saved-copy", reason: "S3 a fetched reference names its saved copy and verified facts", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/s.wav","mimeType":"image/png","sizeBytes":19,"name":"s.wav","disposition":"ref"}`},
		prepare: func(t *testing.T, reg *refs.Registry) {
			e := reg.Register(t.Context(), convert.Registration{Testimony: convert.Classify(json.RawMessage(`{"type":"resource","uri":"https://files.example/s.wav"}`)).Testimony, Server: "vst"})
			if err := reg.Save(e.ID, convert.Copy{Path: "refs/" + e.ID + ".wav", Bytes: 19, MimeType: "audio/wav", DigestVerified: true}, e.Testimony); err != nil {
				t.Fatal(err)
			}
		}},
	{name: "serverless-never", reason: "N4 a serverless never withholds with a notice, no id", server: "",
		blocks: []string{`{"type":"text","text":"relayed"}`, `{"type":"resource","uri":"` + secretURI + `","name":"chord.wav","disposition":"never"}`}},
	{name: "serverless-never-marked", reason: "N4 a serverless never over a server-marked record shows that record's stub", server: "",
		blocks: []string{`{"type":"resource","uri":"` + secretURI + `","name":"chord.wav","disposition":"never"}`},
		prepare: func(t *testing.T, reg *refs.Registry) {
			if _, ok := reg.MarkNever(t.Context(), secretURI, "vst"); !ok {
				t.Fatal("MarkNever with a server marked nothing")
			}
		}},
	{name: "never-marked-elsewhere", reason: "N7 a mark another server made withholds the stub, in words that blame no one's own server", server: "vst",
		blocks: []string{`{"type":"resource","uri":"` + secretURI + `","name":"chord.wav"}`},
		prepare: func(t *testing.T, reg *refs.Registry) {
			if _, ok := reg.MarkNever(t.Context(), secretURI, "other"); !ok {
				t.Fatal("MarkNever with a server marked nothing")
			}
		}},
	{name: "marks-unreadable", reason: "N7 a reference that arrives while the mark store cannot be read is withheld, and the stub says why", server: "vst",
		blocks: []string{`{"type":"resource","uri":"` + secretURI + `","name":"chord.wav"}`},
		marks:  downStore{}},
	{name: "embedded-resource", reason: "N6 an embedded resource a never names is a notice; a plain one shows its text", server: "vst",
		blocks: []string{`{"type":"resource","resource":{"uri":"` + secretURI + `","mimeType":"text/plain","text":"SECRET-PAYLOAD"}}`,
			`{"type":"resource","uri":"` + secretURI + `","disposition":"never","name":"chord.wav"}`,
			`{"type":"resource","resource":{"uri":"https://files.example/notes.txt","mimeType":"text/plain","text":"plain notes"}}`}},
	{name: "message-scope-never", reason: "N2 a never later in the message governs an earlier image by uri", server: "vst",
		blocks: []string{`{"type":"image","uri":"` + secretURI + `","mimeType":"image/png"}`,
			`{"type":"resource","uri":"` + secretURI + `","disposition":"never"}`}},
	{name: "inline-contradiction", reason: "P5 inline data beside a disposition or uri is withheld", server: "vst",
		blocks: []string{`{"type":"image","data":"U0VDUkVULVBheWxvYWQ=","mimeType":"image/png","disposition":"never"}`,
			`{"type":"audio","data":"U0VDUkVU","uri":"https://files.example/x"}`,
			`{"type":"image","data":"aW1n","mimeType":"image/png"}`}},
	{name: "over-long-uri", reason: "P4 an over-long link is a notice and registers nothing", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/` + strings.Repeat("a", 4100) + `","name":"x","disposition":"never"}`, `{"type":"hologram"}`, `42`}},
	{name: "megabyte-name", reason: "vector 17: a 1 MiB name is rejected as a field; the stub keeps its size", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/n","name":"` + strings.Repeat("x", 1<<20) + `","mimeType":"audio/wav","sizeBytes":12,"disposition":"never"}`,
			`{"type":"resource","uri":"https://files.example/m","name":"` + strings.Repeat("y", 255) + `","mimeType":"` + strings.Repeat("z", 255) + `","sizeBytes":12}`}},
	{name: "hostile-labels", reason: "L2/L3 controls, bidi and invisibles are stripped from every label", server: "v\u202est\u0007",
		blocks: []string{`{"type":"resource","uri":"https://files.example/l","name":"bad\u0000\u0007\u0085\u202ename\u200b","mimeType":" Audio/WAV\u2066 ","sizeBytes":12}`}},
	{name: "duplicate-keys", reason: "N8/P3/P4 a repeated disposition with a never reads as never, a repeated name is set aside, a repeated uri rejects the block yet marks both uris", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/d.wav","name":"d.wav","name":"e.wav","disposition":"ref","disposition":"never"}`,
			`{"type":"resource","uri":"` + secretURI + `","uri":"https://files.example/y","disposition":"never"}`,
			`{"type":"image","uri":"` + secretURI + `","mimeType":"image/png"}`}},
	{name: "rejected-never", reason: "N1/P4 a block nested past the decoder's limit is a notice, yet the never of its top level withholds a sibling", server: "vst",
		blocks: []string{`{"type":"resource","uri":"` + secretURI + `","disposition":"never","ext":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
			`{"type":"image","uri":"` + secretURI + `","mimeType":"image/png","sizeBytes":12}`}},
	{name: "never-in-text", reason: "N1/N2/S2 a never the server wrote as JSON into a text withholds the uri in that text and in a sibling reference", server: "vst",
		blocks: []string{`{"type":"text","text":"{\"files\":[{\"type\":\"resource\",\"uri\":\"` + secretURI + `\",\"name\":\"chord.wav\",\"disposition\":\"never\"}],\"peak\":0.6}"}`,
			`{"type":"resource","uri":"` + secretURI + `","name":"chord.wav","mimeType":"audio/wav","sizeBytes":4233704}`}},
	{name: "own-testimony", reason: "S1/S3/E1 two blocks naming one uri share an id, and each stub shows its own block's words and expiry", server: "vst",
		blocks: []string{`{"type":"resource","uri":"https://files.example/take.wav","name":"old.wav","mimeType":"audio/wav","sizeBytes":10,"expiresAt":"2020-01-01T00:00:00Z"}`,
			`{"type":"resource","uri":"https://files.example/take.wav","name":"new.wav","mimeType":"audio/flac","sizeBytes":2000,"expiresAt":"2027-01-01T00:00:00Z"}`}},
}

func TestViewsGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			reg := newRegistry(t)
			if gc.marks != nil {
				reg = mustRegistry(t, refs.Config{Marks: gc.marks, Rand: seededReader{rand.NewChaCha8([32]byte{1})}})
			}
			if gc.prepare != nil {
				gc.prepare(t, reg)
			}
			c := mustConverter(t, reg, convert.Policy{Now: func() time.Time { return fixedNow }})
			result := c.Ingest(t.Context(), raws(gc.blocks...), convert.Source{Server: gc.server, Lane: convert.LaneToolResult, Tool: "vst_render"})
			push := c.Ingest(t.Context(), raws(gc.blocks...), convert.Source{Server: gc.server, Lane: convert.LanePush, Event: "render_done"})
			script, err := json.MarshalIndent(result.Script(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("# %s\n\n## history\n%s\n\n## wake\n%s\n\n## push\n%s\n\n## script\n%s\n",
				gc.reason, result.History(), push.Wake(), convert.PushJSON(push.Push()), script)
			checkGolden(t, filepath.Join("..", "testdata", "convert", gc.name+".golden"), got)
			for _, view := range []string{result.History(), push.Wake(), convert.PushJSON(push.Push()), string(script)} {
				for _, secret := range []string{"SECRET-TOKEN", "SECRET-PAYLOAD", "U0VDUkVU", "?token="} {
					if strings.Contains(view, secret) {
						t.Errorf("S2/P5/N6: a view carries %q", secret)
					}
				}
			}
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, got)
}

// mustConverter returns a Converter, failing the test when New refuses.
func mustConverter(tb testing.TB, reg convert.Registrar, p convert.Policy) *convert.Converter {
	tb.Helper()
	c, err := convert.New(reg, p)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
