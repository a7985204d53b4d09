package convert_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/label"
	"github.com/mcplrefs/refcore/refs"
)

// neverURI is the uri the tests in this file mark; its host must never
// reach a view once a never names it.
const neverURI = "https://vault.example/take.wav?sig=NEVER-SIG"

// showAll is a ShowURI policy that would show every uri it is asked about,
// so a test sees whether a never, not the default, keeps a uri out.
func showAll(convert.Entry) bool { return true }

// views renders every model-facing view of ct.
func views(t *testing.T, ct *convert.Content) []string {
	t.Helper()
	script, err := json.Marshal(ct.Script())
	if err != nil {
		t.Fatal(err)
	}
	return []string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push()), string(script)}
}

// assertHidden fails when any view of ct shows the never uri or offers a
// fetch for it.
func assertHidden(t *testing.T, ct *convert.Content, reason string) {
	t.Helper()
	for _, v := range views(t, ct) {
		for _, s := range []string{"vault.example", "NEVER-SIG", convert.DefaultFetchHint} {
			if strings.Contains(v, s) {
				t.Errorf("%s: a view shows %q:\n%s", reason, s, v)
			}
		}
	}
}

// deepNever is a resource block whose top level says never about neverURI
// but that nests past the JSON decoder's depth limit in an unknown
// property, so no decoder reads it whole.
func deepNever(uri string) string {
	return `{"type":"resource","uri":"` + uri + `","disposition":"never","ext":` +
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
}

// TestDuplicateKeyNeverMarks pins N8 and N1 end to end: a block that says
// never and ref for one property is read as never, marks the uri's record
// and withholds a sibling reference; a block naming two uris under never
// marks both.
func TestDuplicateKeyNeverMarks(t *testing.T) {
	const other = "https://vault.example/other.wav?sig=NEVER-SIG"
	tests := []struct {
		name, reason string
		blocks       []string
		marked       []string
	}{
		{"disposition-twice", "N8 never in any occurrence holds",
			[]string{`{"type":"resource","uri":"` + neverURI + `","disposition":"never","disposition":"ref"}`, `{"type":"image","uri":"` + neverURI + `"}`},
			[]string{neverURI}},
		{"disposition-twice-reversed", "N8 whatever the order",
			[]string{`{"type":"image","uri":"` + neverURI + `"}`, `{"type":"resource","uri":"` + neverURI + `","disposition":"ref","disposition":"never"}`},
			[]string{neverURI}},
		{"uri-twice", "N8/N1 a never on a block naming two uris marks both",
			[]string{`{"type":"resource","uri":"` + neverURI + `","uri":"` + other + `","disposition":"never"}`, `{"type":"resource","uri":"` + neverURI + `"}`, `{"type":"resource","uri":"` + other + `"}`},
			[]string{neverURI, other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			ct := c.Ingest(t.Context(), raws(tt.blocks...), convert.Source{Server: "s", Tool: "t"})
			assertHidden(t, ct, tt.reason)
			for _, u := range tt.marked {
				if !reg.MarkedHere(u) {
					t.Errorf("%s: %s is not marked", tt.reason, u)
				}
			}
		})
	}
}

// TestInvalidBlockKeepsNever pins item 6 of the never rules (N1, N4, P4):
// a block rejected whole whose top level still reads as never marks its
// uri's record when a server sent it, and withholds the uri within
// serverless content. A never deeper than the top level, or a uri the
// host could never accept, marks nothing.
func TestInvalidBlockKeepsNever(t *testing.T) {
	sibling := `{"type":"resource","uri":"` + neverURI + `","name":"sibling"}`
	tests := []struct {
		name, reason, block string
		marks               bool
	}{
		{"too-deep", "N1 nesting past the decoder's limit in an unknown property", deepNever(neverURI), true},
		{"no-type", "N1 a block with no type", `{"uri":"` + neverURI + `","disposition":"never"}`, true},
		{"bad-text", "N1 a text block carrying a number where its text belongs", `{"type":"text","text":7,"uri":"` + neverURI + `","disposition":"never"}`, true},
		{"bad-data", "N1 an image whose data is not a string", `{"type":"image","data":7,"uri":"` + neverURI + `","disposition":"never"}`, true},
		{"unknown-type", "N1 a type this host does not know", `{"type":"video","uri":"` + neverURI + `","disposition":"never"}`, true},
		{"truncated", "N1 a block cut short after its never", `{"type":"resource","uri":"` + neverURI + `","disposition":"never","name":`, true},
		{"truncated-in-meta", "N1 a block cut short inside the _meta that says never", `{"type":"resource","uri":"` + neverURI + `","_meta":{"disposition":"never","x":`, true},
		{"truncated-in-annotations", "N1 a block cut short inside the annotations that say never", `{"type":"resource","uri":"` + neverURI + `","annotations":{"audience":["user"],"disposition":"never","x":[1`, true},
		{"embedded-repeated-resource", "N1 an embedded resource naming its nested resource twice",
			`{"type":"resource","disposition":"never","resource":{"uri":"` + neverURI + `","text":"x"},"resource":{"uri":"` + neverURI + `","text":"y"}}`, true},
		{"embedded-too-deep", "N1 an embedded resource whose nested resource nests past the decoder's limit",
			`{"type":"resource","disposition":"never","resource":{"uri":"` + neverURI + `","text":"x","ext":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, true},
		{"deep-never-only", "only the top level testifies", `{"type":"resource","uri":"` + neverURI + `","ext":{"disposition":"never"},"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			ct := c.Ingest(t.Context(), raws(tt.block, sibling), convert.Source{Server: "s", Tool: "t"})
			if got := reg.MarkedHere(neverURI); got != tt.marks {
				t.Fatalf("marked = %v, want %v (%s)", got, tt.marks, tt.reason)
			}
			if tt.marks {
				assertHidden(t, ct, tt.reason)
			}

			// Serverless content marks nothing but withholds within itself.
			reg = newRegistry(t)
			c = mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			ct = c.Ingest(t.Context(), raws(tt.block, sibling), convert.Source{Tool: "t"})
			if reg.MarkedHere(neverURI) {
				t.Errorf("N4: serverless content marked the uri (%s)", tt.reason)
			}
			if tt.marks {
				assertHidden(t, ct, "N4 "+tt.reason)
				if ids := ct.IDs(); len(ids) != 0 {
					t.Errorf("N4: a serverless never left the sibling an id: %v", ids)
				}
			}
		})
	}

	// An over-long uri is rejected whole and its never governs nothing: no
	// record is made (P4).
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{})
	long := "https://vault.example/" + strings.Repeat("a", 4100)
	c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+long+`","disposition":"never"}`), convert.Source{Server: "s"})
	if reg.Len() != 0 {
		t.Errorf("P4: an over-long uri made %d record(s)", reg.Len())
	}
}

// textBlock is a text block holding s.
func textBlock(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return `{"type":"text","text":` + string(b) + `}`
}

// TestNeverInText pins item 7 of the never rules (N1, N2, N4): a reference
// a server writes as JSON into a text block of the same content is still
// its testimony. Its never marks the record and withholds every block of
// the content naming that uri; nothing else is taken from text.
func TestNeverInText(t *testing.T) {
	text := func(s string) string { return textBlock(t, s) }
	sibling := `{"type":"resource","uri":"` + neverURI + `","name":"sibling"}`
	ref := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	tests := []struct {
		name, reason, text string
		marks              bool
	}{
		{"nested", "N1 a never at any depth of the text's JSON", `{"result":{"files":[` + ref + `]}}`, true},
		{"top", "N1 the text is the reference itself", ref, true},
		{"escaped", "N1 keys and values compare after unescaping", `[{"\u0075ri":"` + strings.ReplaceAll(neverURI, "/", `\/`) + `","disposition":"\u006eever"}]`, true},
		{"embedded-shape", "N6 an embedded resource written as text", `{"type":"resource","disposition":"never","resource":{"uri":"` + neverURI + `","text":"x"}}`, true},
		{"disposition-after-nesting", "N2 order does not matter within an object", `{"uri":"` + neverURI + `","meta":{"a":[1,2,{"b":3}]},"disposition":"never"}`, true},
		{"deep-63", "bounded depth: a never within 64 levels counts", strings.Repeat("[", 62) + ref + strings.Repeat("]", 62), true},
		{"ref-only", "only never is taken from text", `{"type":"resource","uri":"` + neverURI + `","disposition":"ref"}`, false},
		{"prose", "a text that is not JSON is just text", `see ` + ref, false},
		{"beyond-depth", "bounded depth: a never past 64 levels is not read", strings.Repeat("[", 70) + ref + strings.Repeat("]", 70), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			ct := c.Ingest(t.Context(), raws(text(tt.text), sibling), convert.Source{Server: "s", Tool: "t"})
			if got := reg.MarkedHere(neverURI); got != tt.marks {
				t.Fatalf("marked = %v, want %v (%s)", got, tt.marks, tt.reason)
			}
			if !tt.marks {
				if !strings.Contains(ct.History(), convert.DefaultFetchHint) {
					t.Errorf("%s: the sibling reference is no longer offered: %s", tt.reason, ct.History())
				}
				return
			}
			assertHidden(t, ct, tt.reason)

			reg = newRegistry(t)
			c = mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			ct = c.Ingest(t.Context(), raws(text(tt.text), sibling), convert.Source{Tool: "t"})
			if reg.MarkedHere(neverURI) {
				t.Errorf("N4: serverless text marked the uri (%s)", tt.reason)
			}
			assertHidden(t, ct, "N4 "+tt.reason)
		})
	}

	// A text alone marks the uri, so a later delivery is withheld too.
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
	c.Ingest(t.Context(), raws(text(`{"files":[`+ref+`]}`)), convert.Source{Server: "s"})
	later := c.Ingest(t.Context(), raws(sibling), convert.Source{Server: "s"})
	assertHidden(t, later, "N1 a text's never outlives its content")
}

// TestNeverInTextBounded pins that a hostile text cannot make the scan
// expensive: many megabytes of nesting or of small objects are read within
// the documented bounds, and a never past them is simply not seen.
func TestNeverInTextBounded(t *testing.T) {
	hostile := []string{
		strings.Repeat("[", 5<<20),
		"[" + strings.Repeat(`{"uri":"x","disposition":"ref"},`, 200000) + "1]",
		`["` + strings.Repeat(`\\\"`, 1<<20) + `"]`,
		strings.Repeat(`{"a":`, 1<<20),
	}
	for i, h := range hostile {
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		reg := newRegistry(t)
		c := mustConverter(t, reg, convert.Policy{})
		start := time.Now()
		ct := c.Ingest(t.Context(), []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(b) + `}`)}, convert.Source{Server: "s"})
		_ = ct.History()
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("hostile text %d took %v", i, d)
		}
		if reg.Len() != 0 {
			t.Errorf("hostile text %d made %d record(s)", i, reg.Len())
		}
	}
}

// TestOwnTestimonyPerBlock pins S1, S3 and E1 per block (item 8): when
// one message names a uri twice, each stub shows its own block's words,
// while the id and the mark stay shared.
func TestOwnTestimonyPerBlock(t *testing.T) {
	expired := `{"type":"resource","uri":"https://files.example/take.wav","name":"old.wav","mimeType":"audio/wav","sizeBytes":10,"expiresAt":"2020-01-01T00:00:00Z"}`
	live := `{"type":"resource","uri":"https://files.example/take.wav","name":"new.wav","mimeType":"audio/flac","sizeBytes":2000,"expiresAt":"2027-01-01T00:00:00Z"}`
	for _, order := range [][]string{{expired, live}, {live, expired}} {
		c := mustConverter(t, newRegistry(t), convert.Policy{Now: func() time.Time { return fixedNow }})
		ct := c.Ingest(t.Context(), raws(order...), convert.Source{Server: "s", Tool: "t"})
		ids := ct.IDs()
		if len(ids) != 2 || ids[0] != ids[1] {
			t.Fatalf("R2: one uri gave ids %v", ids)
		}
		lines := strings.Split(ct.History(), "\n")
		script := ct.Script()
		for i, raw := range order {
			own := convert.Classify(json.RawMessage(raw)).Testimony
			wantName, otherName := "old.wav", "new.wav"
			if own.Name == "new.wav" {
				wantName, otherName = otherName, wantName
			}
			if !strings.Contains(lines[i], `"`+wantName+`"`) || strings.Contains(lines[i], otherName) {
				t.Errorf("S1: block %d's stub does not show its own name %q: %s", i, wantName, lines[i])
			}
			if !strings.Contains(lines[i], own.MimeType) || !strings.Contains(lines[i], "claimed "+map[int64]string{10: "10 bytes", 2000: "2.0 kB"}[own.SizeBytes]) {
				t.Errorf("S1: block %d's stub does not show its own type and size: %s", i, lines[i])
			}
			offered := strings.Contains(lines[i], convert.DefaultFetchHint)
			if isExpired := own.Expiry(fixedNow).Expired(); offered == isExpired {
				t.Errorf("S3/E1: block %d (expired %v) offered %v: %s", i, isExpired, offered, lines[i])
			}
			if script[i].Name != wantName || (script[i].Unfetchable != "") != own.Expiry(fixedNow).Expired() {
				t.Errorf("S4: script item %d = %+v, want its own block's words", i, script[i])
			}
		}
	}

	// A never on one block still marks the shared record: both stubs are
	// withheld, each with its own name.
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"https://files.example/n","name":"first"}`,
		`{"type":"resource","uri":"https://files.example/n","name":"second","disposition":"never"}`), convert.Source{Server: "s"})
	lines := strings.Split(ct.History(), "\n")
	for i, name := range []string{"first", "second"} {
		if !strings.Contains(lines[i], `"`+name+`"`) || !strings.Contains(lines[i], "withheld") {
			t.Errorf("N1/S1: stub %d = %s, want its own name and withheld", i, lines[i])
		}
	}
}

// TestServerlessNeverWording pins S3, S6 and N4's words: content no server
// sent cannot have been marked by its server, so what it withholds on its
// own says the content asked for it; a record a server did mark says a
// server marked it.
func TestServerlessNeverWording(t *testing.T) {
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{})
	ct := c.Ingest(t.Context(), raws(
		`{"type":"resource","uri":"https://files.example/a","name":"a","disposition":"never"}`,
		`{"type":"resource","disposition":"never","resource":{"uri":"https://files.example/b","text":"B-TEXT"}}`,
		`{"type":"resource","resource":{"uri":"https://files.example/a","text":"A-TEXT"}}`,
	), convert.Source{Tool: "t"})
	for _, v := range views(t, ct) {
		if strings.Contains(v, "server marked") || strings.Contains(v, "content marked") {
			t.Errorf("N4/S6: a serverless never is worded as a mark: %s", v)
		}
		if strings.Count(v, "this content asks") != 3 {
			t.Errorf("N4/S6: every withheld block should say the content asked: %s", v)
		}
	}

	if _, ok := reg.MarkNever(t.Context(), "https://files.example/m", "vst"); !ok {
		t.Fatal("MarkNever marked nothing")
	}
	ct = c.Ingest(t.Context(), raws(`{"type":"resource","uri":"https://files.example/m","name":"m"}`,
		`{"type":"resource","resource":{"uri":"https://files.example/m","text":"M-TEXT"}}`), convert.Source{Tool: "t"})
	for _, v := range views(t, ct) {
		if strings.Contains(v, "its server") || strings.Count(v, "a server marked it never") != 2 {
			t.Errorf("N4/S3: a serverless view of a marked record should say a server marked it: %s", v)
		}
	}
}

// recordingRemover is a refs.Remover that notes every path it is asked
// to remove.
type recordingRemover struct {
	mu    sync.Mutex
	paths []string
}

func (r *recordingRemover) Remove(_ context.Context, path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, path)
	return nil
}

func (r *recordingRemover) removed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// TestNeverRemovesSavedCopy pins N3 from convert's side: every shape that
// can carry a never for a uri, arriving in a server's content after a copy
// was saved, marks the record, so the registry hands the copy to the
// host's remover and no view names it again.
func TestNeverRemovesSavedCopy(t *testing.T) {
	const u = "https://files.example/saved.bin"
	const path = "saved/COPY-PATH.bin"
	textBlock, err := json.Marshal(`{"files":[{"type":"resource","uri":"` + u + `","disposition":"never"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	shapes := []struct {
		name, reason string
		blocks       []string
	}{
		{"reference", "N1 a reference's own never", []string{`{"type":"resource","uri":"` + u + `","disposition":"never"}`}},
		{"image-uri", "N1 an image by uri", []string{`{"type":"image","uri":"` + u + `","disposition":"never"}`}},
		{"audio-uri", "N1 an audio block by uri", []string{`{"type":"audio","uri":"` + u + `","disposition":"never"}`}},
		{"sibling", "N2 another block's never for the uri", []string{`{"type":"resource","uri":"` + u + `"}`, `{"type":"image","uri":"` + u + `","disposition":"never"}`}},
		{"embedded-outer", "N6 an embedded resource's outer never", []string{`{"type":"resource","disposition":"never","resource":{"uri":"` + u + `","text":"x"}}`}},
		{"embedded-inner", "N6 an embedded resource's inner never", []string{`{"type":"resource","resource":{"uri":"` + u + `","blob":"AAAA","disposition":"never"}}`}},
		{"inline-beside-uri", "P5 inline data beside a uri and a never", []string{`{"type":"audio","data":"AAAA","mimeType":"audio/wav","uri":"` + u + `","disposition":"never"}`}},
		{"duplicate-disposition", "N8 a never beside a repeated disposition", []string{`{"type":"resource","uri":"` + u + `","disposition":"never","disposition":"ref"}`}},
		{"rejected-block", "N1 a block rejected whole that says never", []string{deepNever(u)}},
		{"text-json", "N1 a never in the content's text", []string{`{"type":"text","text":` + string(textBlock) + `}`}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			rem := &recordingRemover{}
			reg := mustRegistry(t, refs.Config{Remover: rem})
			e := reg.Register(t.Context(), convert.Registration{Testimony: convert.Testimony{URI: u, Present: convert.FieldURI}, Server: "s"})
			if err := reg.Save(e.ID, convert.Copy{Path: path, Bytes: 4}, e.Testimony); err != nil {
				t.Fatal(err)
			}
			c := mustConverter(t, reg, convert.Policy{})
			ct := c.Ingest(t.Context(), raws(sh.blocks...), convert.Source{Server: "s", Tool: "t"})
			if got := rem.removed(); !slices.Equal(got, []string{path}) {
				t.Errorf("N3: remover saw %v, want [%s] (%s)", got, path, sh.reason)
			}
			for _, v := range views(t, ct) {
				if strings.Contains(v, "COPY-PATH") {
					t.Errorf("N3: a view names the withdrawn copy (%s): %s", sh.reason, v)
				}
			}
		})
	}
}

// embeddedPayload is an embedded resource carrying neverURI's payload
// inline, and the payload it shows when nothing withholds it.
const (
	embeddedPayload = "PAYLOAD-OF-THE-NEVER-URI"
	embeddedNever   = `{"type":"resource","resource":{"uri":"` + neverURI + `","mimeType":"text/plain","text":"` + embeddedPayload + `"}}`
	embeddedImage   = `{"type":"resource","resource":{"uri":"` + neverURI + `","mimeType":"image/png","blob":"` + embeddedPayload + `"}}`
)

// assertNoPayload fails when any view of ct shows the embedded payload.
func assertNoPayload(t *testing.T, ct *convert.Content, reason string) {
	t.Helper()
	for _, v := range views(t, ct) {
		if strings.Contains(v, embeddedPayload) {
			t.Errorf("%s: a view shows the payload:\n%s", reason, v)
		}
	}
}

// TestMarkOutlivesRecordInViews pins N7 with N6 and S2: the registry
// remembers a server's never after evicting the record, and the views
// honour that memory for blocks that register nothing, an embedded
// resource and a uri written into text, not only for references.
func TestMarkOutlivesRecordInViews(t *testing.T) {
	src := convert.Source{Server: "vst", Tool: "render"}
	marked := func(t *testing.T) *convert.Converter {
		reg := mustRegistry(t, refs.Config{Capacity: 4})
		c := mustConverter(t, reg, convert.Policy{})
		c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+neverURI+`","disposition":"never"}`), src)
		for i := range 8 {
			c.Ingest(t.Context(), raws(`{"type":"resource","uri":"https://files.example/`+strconv.Itoa(i)+`"}`), src)
		}
		if _, ok := reg.ByURI(neverURI); ok || !reg.MarkedHere(neverURI) {
			t.Fatal("setup: the marked record should be evicted and its mark remembered")
		}
		return c
	}
	tests := []struct {
		name   string
		blocks []string
		src    convert.Source
	}{
		{"embedded-text", []string{embeddedNever}, src},
		{"embedded-image", []string{embeddedImage}, src},
		{"embedded-serverless", []string{embeddedNever}, convert.Source{}},
		{"text-json", []string{`{"type":"text","text":"{\"uri\":\"` + neverURI + `\"}"}`}, src},
		{"text-json-serverless", []string{`{"type":"text","text":"{\"uri\":\"` + neverURI + `\"}"}`}, convert.Source{}},
		{"reference", []string{`{"type":"resource","uri":"` + neverURI + `"}`}, src},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := marked(t).Ingest(t.Context(), raws(tt.blocks...), tt.src)
			assertHidden(t, ct, "N7 a remembered mark")
			assertNoPayload(t, ct, "N7 a remembered mark")
		})
	}
}

// TestLaterNeverWithholdsEmbedded pins N6 and S4: views render from the
// registry's present state, so an embedded resource shown before a server
// marked its uri never is withheld from then on, in every view.
func TestLaterNeverWithholdsEmbedded(t *testing.T) {
	src := convert.Source{Server: "vst", Tool: "render"}
	for _, blk := range []string{embeddedNever, embeddedImage} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		first := c.Ingest(t.Context(), raws(blk), src)
		if h := first.History(); !strings.Contains(h, embeddedPayload) && strings.Contains(blk, "text/plain") {
			t.Fatalf("setup: before any never the payload shows:\n%s", h)
		}
		c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+neverURI+`","disposition":"never"}`), src)
		assertNoPayload(t, first, "N6 a never after the embedded resource was shown")
		assertHidden(t, first, "N6 a never after the embedded resource was shown")
	}
}

// TestLabelsCarryNoURI pins S2: a server cannot carry a uri to the model
// in a label it supplies (a name, a media type, a type, its tool's name),
// whether or not the reference is marked never. Each uri there shows as
// "[uri withheld]".
func TestLabelsCarryNoURI(t *testing.T) {
	never := `,"disposition":"never"`
	tests := []struct {
		name, block string
		src         convert.Source
	}{
		{"name-is-uri-never", `{"type":"resource","uri":"` + neverURI + `","name":"` + neverURI + `"` + never + `}`, convert.Source{Server: "vst"}},
		{"name-is-uri", `{"type":"resource","uri":"` + neverURI + `","name":"` + neverURI + `"}`, convert.Source{Server: "vst"}},
		{"name-holds-uri-zero-width", `{"type":"resource","uri":"` + neverURI + `","name":"take https:/\u200b/vault.example/take.wav?sig=NEVER-SIG"}`, convert.Source{Server: "vst"}},
		{"mime-parameter", `{"type":"resource","uri":"` + neverURI + `","mimeType":"audio/wav; src=` + neverURI + `"` + never + `}`, convert.Source{Server: "vst"}},
		{"unknown-type", `{"type":"https://vault.example/x?sig=NEVER-SIG","uri":"` + neverURI + `"` + never + `}`, convert.Source{Server: "vst"}},
		{"embedded-name", `{"type":"resource","disposition":"never","resource":{"uri":"` + neverURI + `","name":"` + neverURI + `","text":"x"}}`, convert.Source{Server: "vst"}},
		{"embedded-mime", `{"type":"resource","resource":{"uri":"https://files.example/a.txt","mimeType":"text/plain; see=` + neverURI + `","text":"x"}}`, convert.Source{Server: "vst"}},
		{"inline-mime", `{"type":"image","data":"AAAA","mimeType":"image/png; src=` + neverURI + `"}`, convert.Source{Server: "vst"}},
		{"tool-name", `{"type":"resource","uri":"https://files.example/b.wav"}`, convert.Source{Server: "vst", Tool: neverURI}},
		{"apostrophe-in-uri", `{"type":"resource","uri":"https://vault.example/it's.wav?sig=NEVER-SIG","name":"https://vault.example/it's.wav?sig=NEVER-SIG"` + never + `}`, convert.Source{Server: "vst"}},
		{"backtick-in-name", `{"type":"resource","uri":"` + neverURI + `","name":"https://vault.example/take.wav` + "`" + `sig=NEVER-SIG"` + never + `}`, convert.Source{Server: "vst"}},
		{"name-escaped-slashes", `{"type":"resource","uri":"https://files.example/b.wav","name":"take https:\\/\\/vault.example\\/take.wav?sig=NEVER-SIG"}`, convert.Source{Server: "vst"}},
		{"tool-name-escaped-slashes", `{"type":"resource","uri":"https://files.example/b.wav"}`, convert.Source{Server: "vst", Tool: strings.ReplaceAll(neverURI, "/", `\/`)}},
		{"own-uri-without-slashes", `{"type":"resource","uri":"urn:x-vault.example:take?sig=NEVER-SIG","name":"URN:x-vault.example:take?sig=NEVER-SIG"` + never + `}`, convert.Source{Server: "vst"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{})
			ct := c.Ingest(t.Context(), raws(tt.block), tt.src)
			for _, v := range views(t, ct) {
				if strings.Contains(v, "vault.example") || strings.Contains(v, "NEVER-SIG") {
					t.Errorf("S2: a label carries the uri:\n%s", v)
				}
			}
			if h := ct.History(); !strings.Contains(h, "[uri withheld]") {
				t.Errorf("the label does not say a uri was withheld:\n%s", h)
			}
		})
	}
}

// TestNeverURIInAnyText pins S2 and N2 for text: where the content calls
// a uri never, or a server marked it, the views withhold it wherever a
// text writes it out, not only in the "uri" members of JSON the text
// reading reaches: in prose, under other keys, in JSON nested past the
// reading's depth or after its first value, in a value too long to be
// read. A uri nobody withholds stays visible.
func TestNeverURIInAnyText(t *testing.T) {
	text := func(s string) string { return textBlock(t, s) }
	neverOf := func(u string) string { return `{"type":"resource","uri":"` + u + `","disposition":"never"}` }
	never := neverOf(neverURI)
	const amp = "https://vault.example/take.wav?a=1&sig=NEVER-SIG"
	const apostrophe = "https://vault.example/it's.wav?sig=NEVER-SIG"
	goJSON, err := json.Marshal(map[string]string{"url": amp}) // writes & as \u0026
	if err != nil {
		t.Fatal(err)
	}
	goAround, err := json.Marshal(map[string]string{"result": phpJSON(t, map[string]string{"url": neverURI})})
	if err != nil {
		t.Fatal(err)
	}
	goAroundPHP := string(goAround)
	const cjkProse = "，有效期1小时，大小3MB，格式WAV，采样率48kHz，位深24bit，声道2个，时长3分钟，编号A1，版本2，作者Bob，日期2026年1月2日，备注x，状态ok，类型mix，来源vst，语言zh，格式2，编码utf8，质量hi。"
	// A uri in a row of values: more marks in the uri than the first cuts
	// reach, and more separators after it than the last cuts reach.
	const rowURI = "https://cdn.vault.example/v1.2/take_final.wav?sig=NEVER-SIG"
	row := func(sep string) string {
		return "take" + sep + rowURI + sep + strings.Join(strings.Fields("48000 2 24 wav 3m12s A1 v2 bob 2026-01-02 x ok mix vst zh utf8 hi 7 8 9 10"), sep)
	}
	const markEnd = "https://vault.example/take.wav?sig=NEVER_SIG_"
	const parenEnd = "https://vault.example/wiki/Take_(NEVER-SIG)"
	cjkURIs := []string{
		"https://cdn.vault.example/take.wav?sig=NEVER-SIG",
		"https://vault.example/v1.2/take.wav?sig=NEVER-SIG",
		"https://vault.example/my_take.wav?sig=NEVER-SIG",
	}
	tests := []struct{ name, text, uri string }{
		{"depth-65", strings.Repeat("[", 65) + `{"uri":"` + neverURI + `"}` + strings.Repeat("]", 65), ""},
		{"json-lines", `{"id":1}` + "\n" + `{"uri":"` + neverURI + `"}`, ""},
		{"second-value", `[] {"uri":"` + neverURI + `"}`, ""},
		{"long-value", `{"uri":"` + neverURI + "#" + strings.Repeat("x", 4200) + `"}`, ""},
		{"trailing-spaces", `{"uri":"` + neverURI + strings.Repeat(" ", 4100) + `"}`, ""},
		{"bom", "\ufeff" + `{"uri":"` + neverURI + `"}`, ""},
		{"prose", "the take is at " + neverURI + ", see there", ""},
		{"prose-parenthesis", "the take (" + neverURI + ").", ""},
		{"glued-letters", "download" + neverURI + ".", ""},
		{"markdown-link", "[the take](" + neverURI + ")", ""},
		{"markdown-autolink", "[" + neverURI + "](" + neverURI + ")", ""},
		{"markdown-bold", "the take: **" + neverURI + "**", ""},
		{"markdown-italic", "the take: _" + neverURI + "_", ""},
		{"html-entities", "&lt;" + neverURI + "&gt;", ""},
		{"cjk-full-stop", "\u30c6\u30a4\u30af " + neverURI + "\u3002", ""},
		{"no-break-space", "at " + neverURI + "\u00a0now", ""},
		{"table", "|take|" + neverURI + "|", ""},
		{"json-escaped-ampersand", string(goJSON), amp},
		{"apostrophe-in-uri", "the take is at " + apostrophe + " ok", apostrophe},
		{"fence", "```json\n{\"uri\":\"" + neverURI + "\"}\n```", ""},
		{"url-key", `{"url":"` + neverURI + `"}`, ""},
		{"array", `["` + neverURI + `"]`, ""},
		{"double-encoded", `{"result":"{\"uri\":\"` + neverURI + `\"}"}`, ""},
		// PHP's json_encode escapes every slash.
		{"escaped-slashes", `{"download_url":"` + strings.ReplaceAll(neverURI, "/", `\/`) + `"}`, ""},
		// A word glued before the scheme, longer than the rest of the uri.
		{"glued-long-word", "token " + strings.Repeat("0123456789abcdef", 4) + neverURI + " end", ""},
		// JSON with escaped slashes inside a JSON string, as PHP or Go
		// writes it around PHP's.
		{"double-encoded-escaped-slashes", phpJSON(t, map[string]string{"result": phpJSON(t, map[string]string{"url": neverURI})}), ""},
		{"go-around-escaped-slashes", goAroundPHP, ""},
		// A "uri" member whose whole value is the uri escaped twice, or
		// glued to a word, which one decoding of the member does not undo.
		{"uri-member-escaped-twice", `{"uri":"` + strings.ReplaceAll(neverURI, "/", `\\/`) + `"}`, ""},
		{"uri-member-ampersand-escaped-twice", `{"uri":"` + strings.ReplaceAll(amp, "&", `\\u0026`) + `"}`, amp},
		{"uri-member-glued", `{"uri":"download` + neverURI + `"}`, ""},
		// A "uri" member that holds more than the uri.
		{"uri-member-with-prose", `{"uri":"see ` + neverURI + `"}`, ""},
		{"uri-member-two-uris", `{"uri":"https://mirror.example/a ` + neverURI + `"}`, ""},
		// Prose with no spaces runs on past the uri, with a cut at every
		// change of script.
		{"cjk-no-spaces", "下载地址：" + neverURI + "，有效期1小时，大小3MB，格式WAV，采样率48kHz，位深24bit，声道2个，时长3分钟，编号A1，版本2，作者Bob，日期2026年1月2日，备注x，状态ok，类型mix，来源vst，语言zh，格式2，编码utf8，质量hi。", ""},
		// The same with more marks in the uri than the first cuts reach.
		{"cjk-subdomain", "下载地址：" + cjkURIs[0] + cjkProse, cjkURIs[0]},
		{"cjk-path-dot", "下载地址：" + cjkURIs[1] + cjkProse, cjkURIs[1]},
		{"cjk-underscore", "下载地址：" + cjkURIs[2] + cjkProse, cjkURIs[2]},
		// A row of values with no white space: CSV, and lists joined by
		// a semicolon or a bar.
		{"csv-row", row(","), rowURI},
		{"semicolon-row", row(";"), rowURI},
		{"bar-row", row("|"), rowURI},
		// A uri that ends in a mark, followed by another mark: a
		// signature ending in "_" at the end of a sentence, a title in
		// parentheses.
		{"underscore-end-prose", "the take is at " + markEnd + ". Enjoy", markEnd},
		{"underscore-end-row", "take," + markEnd + ",48000,2", markEnd},
		{"parenthesis-end-prose", "see " + parenEnd + ".", parenEnd},
		{"parenthesis-end-markdown-link", "[the take](" + parenEnd + ")", parenEnd},
		// Another uri glued right after it by a character a scheme may
		// hold.
		{"glued-next-uri-dot", "at " + neverURI + ".https://h.example/x now", ""},
		{"glued-next-uri-dash", "at " + neverURI + "-https://h.example/x now", ""},
		{"glued-next-uri-plus", "at " + neverURI + "+a://b now", ""},
		{"glued-next-uri-escaped", "at " + neverURI + `.https:\/\/h.example\/x now`, ""},
		{"glued-next-uri-no-mark", "at " + neverURI + "https://h.example/x now", ""},
		{"glued-next-scheme-marks", "at " + neverURI + "-svn+ssh://h.example/x now", ""},
		{"glued-next-scheme-dashes", "at " + neverURI + "-x-custom://a now", ""},
		{"glued-at-run-start", "at https://vault.example/NEVER-SIG/x.y://z now", "https://vault.example/NEVER-SIG/"},
		{"glued-callback", "at https://vault.example/take?sig=NEVER-SIG&cb=x-callback-url://done now", "https://vault.example/take?sig=NEVER-SIG&cb="},
		// A never uri whose own scheme holds marks, glued after a word.
		{"glued-never-scheme", "at https://h.example/x.svn+ssh://vault.example/NEVER-SIG now", "svn+ssh://vault.example/NEVER-SIG"},
		// Escaped slashes, with a long run of other characters after the
		// uri before any white space.
		{"escaped-then-long-run", strings.ReplaceAll(neverURI, "/", `\/`) + ";" + strings.Repeat("a", 270000), ""},
		// PHP's default encoding of prose with no spaces: every slash and
		// every non-ASCII character escaped.
		{"php-cjk-prose", phpUnicodeJSON(t, map[string]string{"msg": "下载地址：" + neverURI + "，有效期1小时，大小3MB，格式WAV，采样率48kHz，位深24bit，声道2个，时长3分钟，编号A1，版本2，作者Bob，日期2026年1月2日"}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			never := never
			if tt.uri != "" {
				never = neverOf(tt.uri)
			}
			for _, src := range []convert.Source{{Server: "s", Tool: "t"}, {Tool: "t"}} {
				c := mustConverter(t, newRegistry(t), convert.Policy{})
				ct := c.Ingest(t.Context(), raws(never, text(tt.text)), src)
				assertHidden(t, ct, "S2 a text naming a never uri")
			}
			// A mark made by earlier content withholds it too.
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{})
			c.Ingest(t.Context(), raws(never), convert.Source{Server: "s"})
			assertHidden(t, c.Ingest(t.Context(), raws(text(tt.text)), convert.Source{Server: "s"}), "N7 a text naming a marked uri")
		})
	}
	// Other uris in a text are left as they are.
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	const other = "https://docs.example/guide?page=2"
	ct := c.Ingest(t.Context(), raws(never, text("see "+other+" and {\"url\":\""+other+"\"}")), convert.Source{Server: "s"})
	if h := ct.History(); strings.Count(h, other) != 2 {
		t.Errorf("a uri nobody withholds was changed:\n%s", h)
	}
}

// TestNeverURIPastTextBounds pins S2 where a text is larger than what the
// reading checks (more bare uris than it keeps, more bytes than it reads)
// and the host's view bound lets it show that far: what was not checked
// for uris is not shown.
func TestNeverURIPastTextBounds(t *testing.T) {
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	for name, text := range map[string]string{
		"many-uris":  strings.Repeat("a://b ", 1<<14) + "see " + neverURI,
		"long-text":  strings.Repeat("x", 4<<20) + " " + neverURI,
		"long-plain": strings.Repeat("x", 4<<20) + " the end",
	} {
		t.Run(name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 8 << 20})
			h := c.Ingest(t.Context(), raws(never, textBlock(t, text)), convert.Source{Server: "s"}).History()
			if strings.Contains(h, "NEVER-SIG") || strings.Contains(h, "vault.example") {
				t.Errorf("S2: a never uri past the checked part of a text shows (view %d bytes)", len(h))
			}
			const rest = "[the rest of this text is withheld: it names more uris, or is longer, than this host checks]"
			if name == "long-plain" {
				if !strings.Contains(h, " the end") || strings.Contains(h, rest) {
					t.Errorf("a long text naming no uri lost its end (view %d bytes)", len(h))
				}
			} else if !strings.Contains(h, rest) {
				t.Errorf("the view does not say the rest of the text is withheld (view %d bytes)", len(h))
			}
		})
	}
}

// TestStoredMarkInText pins N7 across processes: a mark the registry
// finds only in its durable mark store (made by an earlier process)
// withholds the uri where a text names it, as it does a reference.
func TestStoredMarkInText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marks")
	open := func() *refs.Registry {
		m, err := refs.OpenFileMarks(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return mustRegistry(t, refs.Config{Marks: m})
	}
	first := open()
	if _, ok := first.MarkNever(t.Context(), neverURI, "vst"); !ok {
		t.Fatal("setup: MarkNever refused")
	}
	c := mustConverter(t, open(), convert.Policy{}) // a later process
	for _, text := range []string{`{"uri":"` + neverURI + `"}`, "the take is at " + neverURI + " now"} {
		ct := c.Ingest(t.Context(), raws(textBlock(t, text)), convert.Source{Server: "vst"})
		assertHidden(t, ct, "N7 a mark only the store holds")
	}
}

// TestWithheldTextExact pins the replacement itself (S2): member and bare
// spans interleaved in one JSON text become "[uri withheld]" in place, the
// text stays valid JSON, and a uri nobody withholds is left alone.
func TestWithheldTextExact(t *testing.T) {
	const other = "https://docs.example/g?p=2"
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	text := `{"a":"` + neverURI + `","uri":"` + neverURI + `","b":"` + other + `","c":["x ` + neverURI + `."]}`
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(never, textBlock(t, text)), convert.Source{Server: "s"})
	want := `{"a":"[uri withheld]","uri":"[uri withheld]","b":"` + other + `","c":["x [uri withheld]"]}`
	var got string
	for _, it := range ct.Script() {
		if it.Kind == "text" {
			got = it.Text
		}
	}
	if got != want {
		t.Errorf("S2: the text shows\n%s\nwant\n%s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("the withheld text is no longer JSON: %s", got)
	}
}

// TestWithheldTextAtTheCut pins S5 with S2: wherever a withheld uri falls
// against a view's bound, the view fits the bound and shows no part of it.
func TestWithheldTextAtTheCut(t *testing.T) {
	p := convert.Policy{ViewMax: convert.MinViewMax}
	long := "https://vault.example/" + strings.Repeat("z", 300) + "?sig=NEVER-SIG"
	for _, u := range []string{neverURI, long} {
		never := `{"type":"resource","uri":"` + u + `","disposition":"never"}`
		for pre := 0; pre < 2*convert.MinViewMax; pre += 7 {
			text := strings.Repeat("x", pre) + " " + u + " " + u + " " + strings.Repeat("y", 200)
			ct := mustConverter(t, newRegistry(t), p).Ingest(t.Context(), raws(never, textBlock(t, text)), convert.Source{Server: "s"})
			for k, v := range []string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push())} {
				if n := len(utf16.Encode([]rune(v))); n > p.ViewMax {
					t.Fatalf("S5: %d chars before the uri: view %d is %d units, over %d", pre, k, n, p.ViewMax)
				}
				if strings.Contains(v, "NEVER-SIG") || strings.Contains(v, "vault.example") {
					t.Fatalf("S2: %d chars before the uri: view %d shows part of it", pre, k)
				}
			}
		}
	}
}

// TestSplittingNeverURIInText pins S2 and N2 for a never uri that the
// reading of bare uris would cut in pieces: one with another URL in its
// query (legal in a query) or with a space a server did not escape. Where
// a text of the same content writes it out, as prose, markdown, under any
// JSON key, JSON-escaped or in other letter case, the views withhold it
// whole. A plain block's splitting uri that a later content marks is
// withheld from then on; one nobody withholds is left as it is, and a
// "uri" member keeps its quotes, so a JSON text stays JSON.
func TestSplittingNeverURIInText(t *testing.T) {
	const nested = "https://vault.example/proxy?src=https://cdn.example/take.wav&sig=NEVER-SIG"
	const spaced = "https://vault.example/My Take.wav?sig=NEVER-SIG"
	const umlaut = "https://vault.example/Mein Täke.wav?sig=NEVER-SIG"
	const ampersand = "https://vault.example/a b.wav?x=1&sig=NEVER-SIG"
	neverOf := func(u string) string {
		b, _ := json.Marshal(map[string]string{"type": "resource", "uri": u, "disposition": "never"})
		return string(b)
	}
	goJSON, _ := json.Marshal(map[string]string{"download_url": nested}) // & as \u0026
	for _, tt := range []struct{ name, uri, text string }{
		{"nested-prose", nested, "your render is at " + nested + " (valid for an hour)"},
		{"nested-json-other-key", nested, string(goJSON)},
		{"nested-markdown", nested, "[take.wav](" + nested + ")"},
		{"nested-upper-case", nested, "at " + strings.ToUpper(nested[:22]) + nested[22:]},
		{"spaced-prose", spaced, "saved as " + spaced},
		{"spaced-uri-member", spaced, `{"uri":"` + spaced + `"}`},
		// Python's json.dumps escapes every non-ASCII letter; PHP's
		// json_encode escapes the slashes too.
		{"python-escaped", umlaut, `{"download_url": "` + strings.ReplaceAll(umlaut, "ä", `\u00e4`) + `"}`},
		{"php-escaped", umlaut, `{"download_url":"` + strings.ReplaceAll(strings.ReplaceAll(umlaut, "ä", `\u00e4`), "/", `\/`) + `"}`},
		// PHP with JSON_UNESCAPED_UNICODE escapes slashes but no letters;
		// escaped slashes beside an escaped ampersand.
		{"php-raw-letters", umlaut, `{"u":"` + strings.ReplaceAll(umlaut, "/", `\/`) + `"}`},
		{"escaped-slashes-and-ampersand", ampersand, `{"u":"` + strings.ReplaceAll(strings.ReplaceAll(ampersand, "/", `\/`), "&", `\u0026`) + `"}`},
		// Gson escapes = and ' as well.
		{"gson", spaced, `{"download_url":"` + strings.ReplaceAll(spaced, "=", `\u003d`) + `"}`},
		{"gson-nested", nested, `{"u":"` + strings.NewReplacer("=", `\u003d`, "&", `\u0026`).Replace(nested) + `"}`},
		// The bare reading starts at the scheme right before "://".
		{"jar-scheme", "jar:https://vault.example/app.jar!/take.wav?sig=NEVER-SIG", "open jar:https://vault.example/app.jar!/take.wav?sig=NEVER-SIG now"},
		{"blob-scheme", "blob:https://vault.example/NEVER-SIG", "see blob:https://vault.example/NEVER-SIG"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, src := range []convert.Source{{Server: "s", Tool: "t"}, {Tool: "t"}} {
				c := mustConverter(t, newRegistry(t), convert.Policy{})
				ct := c.Ingest(t.Context(), raws(textBlock(t, tt.text), neverOf(tt.uri)), src)
				assertHidden(t, ct, "S2 a text writing out a never uri the bare reading splits")
			}
		})
	}

	// A "uri" member stays a JSON string.
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(textBlock(t, `{"uri":"`+spaced+`"}`), neverOf(spaced)), convert.Source{Server: "s"})
	if h := ct.History(); !strings.HasPrefix(h, `{"uri":"[uri withheld]"}`) {
		t.Errorf("a withheld uri member lost its quotes:\n%s", h)
	}

	// A plain splitting uri shows, until a later content marks it.
	reg := newRegistry(t)
	c = mustConverter(t, reg, convert.Policy{})
	plainRef := `{"type":"resource","uri":"` + nested + `"}`
	ct = c.Ingest(t.Context(), raws(textBlock(t, "at "+nested+" now"), plainRef), convert.Source{Server: "s"})
	if h := ct.History(); !strings.Contains(h, "at "+nested+" now") {
		t.Errorf("a splitting uri nobody withholds was changed:\n%s", h)
	}
	c.Ingest(t.Context(), raws(neverOf(nested)), convert.Source{Server: "s"})
	assertHidden(t, ct, "N1 a later never for a splitting uri an earlier text writes out")
}

// TestSplittingURIsPastTheBound pins the bound of that search: a content
// naming more splitting uris than the search takes has each text withheld
// from its first uri on, as a text past the reading's bounds is (S2).
func TestSplittingURIsPastTheBound(t *testing.T) {
	var blocks []string
	for i := range 70 {
		blocks = append(blocks, `{"type":"resource","uri":"https://vault.example/take `+strconv.Itoa(i)+`.wav?sig=NEVER-SIG"}`)
	}
	last := "https://vault.example/take 69.wav?sig=NEVER-SIG"
	blocks = append(blocks, `{"type":"resource","uri":"`+last+`","disposition":"never"}`)
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
	ct := c.Ingest(t.Context(), raws(append([]string{textBlock(t, "intro; saved as "+last)}, blocks...)...), convert.Source{Server: "s"})
	h := ct.History()
	if !strings.HasPrefix(h, "intro; saved as [the rest of this text is withheld") || strings.Contains(h, "take 69.wav") {
		t.Errorf("S2: a text past the bound of the splitting-uri search:\n%.400s", h)
	}
}

// TestSplittingPlacesPastTheirCount pins S2 for the count of places the
// texts of a content write out a splitting uri: once an earlier text has
// used it up, a later text is withheld from the first place any spelling
// is written, not from the next place of whichever spelling was being
// looked for. Here the raw spelling fills the count, and the later text
// writes the JSON-escaped spelling before the raw one.
func TestSplittingPlacesPastTheirCount(t *testing.T) {
	const uri = "urn:vault.example:\u00e9 NEVER-SIG"
	never := `{"type":"resource","uri":"` + uri + `","disposition":"never"}`
	escaped := `urn:vault.example:\u00e9 NEVER-SIG`
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	ct := c.Ingest(t.Context(), raws(never, textBlock(t, strings.Repeat(uri+"\n", 1<<14)),
		textBlock(t, "first "+escaped+" then "+uri)), convert.Source{Server: "s"})
	assertHidden(t, ct, "S2 a later spelling's earlier place, past the count of places")
}

// TestSplittingNeverFromTextJSON pins N2 and S2 for a splitting never uri
// that only a text's JSON calls never, past the first 256 such nevers
// (the bound on marking a server's record from text, not on withholding):
// another text of the content that writes it out shows it withheld.
func TestSplittingNeverFromTextJSON(t *testing.T) {
	const nested = "https://vault.example/proxy?src=https://cdn.example/take.wav&sig=NEVER-SIG"
	for _, n := range []int{1, 300} {
		var objs []string
		for i := range n - 1 {
			objs = append(objs, `{"uri":"https://other.example/`+strconv.Itoa(i)+`","disposition":"never"}`)
		}
		objs = append(objs, `{"uri":"`+nested+`","disposition":"never"}`)
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
		ct := c.Ingest(t.Context(), raws(textBlock(t, "["+strings.Join(objs, ",")+"]"), textBlock(t, "your render is at "+nested)), convert.Source{Server: "s"})
		if !ct.Claims().Never(nested) {
			t.Fatal("setup: the content does not call the uri never")
		}
		if showsSecret(t, ct) {
			t.Errorf("S2: with %d nevers in a text's JSON, a view shows the last, a splitting uri another text writes out", n)
		}
	}
}

// TestNeverURIAcrossScanBound pins S2 at the end of what the reading of a
// text checks: a never uri whose scheme, "://" or body crosses that end is
// withheld from where it starts, not shown because its cut reading is not
// the never uri.
func TestNeverURIAcrossScanBound(t *testing.T) {
	const uri = "https://vault.example/take.wav?sig=NEVER-SIG"
	never := `{"type":"resource","uri":"` + uri + `","disposition":"never"}`
	for _, cut := range []int{3, strings.Index(uri, "://") + 1, strings.Index(uri, "://") + 3, strings.Index(uri, "NEVER"), len(uri) - 1} {
		// The text's first 4 MiB end cut bytes into the uri.
		text := strings.Repeat("a", 4<<20-cut-1) + " " + uri + " done"
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		ct := c.Ingest(t.Context(), raws(textBlock(t, text), never), convert.Source{Server: "s"})
		if showsSecret(t, ct) {
			t.Errorf("S2: a never uri cut %d bytes in by the end of the checked part shows", cut)
		}
	}
}

// TestSplittingNeverURIAcrossScanBound pins S2 where the end of the part
// of a text that is checked falls inside a never uri the bare reading
// splits (after its space): its spelling is found whole, in prose and in a
// "uri" member.
func TestSplittingNeverURIAcrossScanBound(t *testing.T) {
	const spaced = "https://vault.example/My Take.wav?sig=NEVER-SIG"
	never := `{"type":"resource","uri":"` + spaced + `","disposition":"never"}`
	sp := strings.Index(spaced, " ")
	for _, cut := range []int{sp + 1, sp + 3, strings.Index(spaced, "NEVER"), len(spaced) - 1} {
		for form, text := range map[string]string{
			"prose":  strings.Repeat("a", 4<<20-cut-1) + " " + spaced + " done",
			"member": "[" + strings.Repeat(" ", 4<<20-cut-len(`[{"uri":"`)) + `{"uri":"` + spaced + `"}]`,
		} {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			ct := c.Ingest(t.Context(), raws(textBlock(t, text), never), convert.Source{Server: "s"})
			if showsSecret(t, ct) {
				t.Errorf("S2: %s: a splitting never uri cut %d bytes in by the end of the checked part shows", form, cut)
			}
		}
	}
}

// TestSplittingPastTheBoundEscaped pins the fallback past the bound of the
// splitting-uri search for a text that writes its uris with escaped
// slashes, and so holds no plain "://": it is withheld from its first uri
// as well (S2).
func TestSplittingPastTheBoundEscaped(t *testing.T) {
	const spaced = "https://vault.example/My Take.wav?sig=NEVER-SIG"
	var blocks []string
	for i := range 70 {
		blocks = append(blocks, `{"type":"resource","uri":"https://other.example/take `+strconv.Itoa(i)+`.wav"}`)
	}
	blocks = append(blocks, `{"type":"resource","uri":"`+spaced+`","disposition":"never"}`)
	text := `{"download_url":"` + strings.ReplaceAll(spaced, "/", `\/`) + `"}`
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(append([]string{textBlock(t, text)}, blocks...)...), convert.Source{Server: "s"})
	for _, v := range views(t, ct) {
		if strings.Contains(v, "NEVER-SIG") || strings.Contains(v, "vault.example") {
			t.Errorf("S2: an escaped text past the bound of the splitting-uri search shows the never uri:\n%.300s", v)
		}
	}
}

// TestNeverURIWithoutSeparatorInText pins S2 and N2 for a never uri with
// no "://" (a urn, a mailto), which the bare reading does not recognize:
// where a text of the same content writes it out, in prose, under any
// JSON key or in other letter case, the views withhold it, whether a
// block or the JSON of a text calls it never, and also past the bound of
// the uris the texts are searched for. A plain one shows as written,
// until a later content marks it (N1).
func TestNeverURIWithoutSeparatorInText(t *testing.T) {
	const urn = "urn:vault.example:take:NEVER-SIG"
	const mailto = "mailto:ops@vault.example?subject=NEVER-SIG"
	neverOf := func(u string) string { return `{"type":"resource","uri":"` + u + `","disposition":"never"}` }
	text := func(s string) string { return textBlock(t, s) }
	var plenty []string // more plain uris than the search takes
	for i := range 140 {
		plenty = append(plenty, `{"type":"resource_link","uri":"urn:other.example:`+strconv.Itoa(i)+`","name":"n"}`)
	}
	var schemes []string // as many, of more schemes than the fallback keeps
	var nevers []string  // more never uris than the search takes
	for i := range 140 {
		schemes = append(schemes, `{"type":"resource_link","uri":"s`+strconv.Itoa(i%20)+`:other.example:`+strconv.Itoa(i)+`","name":"n"}`)
		nevers = append(nevers, neverOf("urn:other.example:"+strconv.Itoa(i)))
	}
	const mailtoURL = "mailto:ops@vault.example?subject=NEVER-SIG&body=https://docs.example/runbook"
	big := strings.Repeat("x", 4<<20) // the part of a text that is checked
	// after is base and then more, in a slice of their own.
	after := func(base []string, more ...string) []string { return append(slices.Clip(base), more...) }
	for _, tt := range []struct {
		name   string
		blocks []string
	}{
		{"block-prose", []string{neverOf(urn), text("the take is " + urn + ", ready")}},
		{"block-json-other-key", []string{neverOf(urn), text(`{"id":"` + urn + `"}`)}},
		{"block-upper-case", []string{neverOf(urn), text("at " + strings.ToUpper(urn[:4]) + urn[4:])}},
		{"mailto-markdown", []string{neverOf(mailto), text("[write to ops](" + mailto + ")")}},
		{"text-json-same-text", []string{text(`{"uri":"` + urn + `","disposition":"never"} then ` + urn)}},
		{"text-json-other-text", []string{text(`{"uri":"` + urn + `","disposition":"never"}`), text("see " + urn)}},
		{"past-the-bound", after(plenty, neverOf(urn), text("intro; saved as "+urn))},
		{"past-the-bound-text-json", after(plenty, text(`[{"uri":"`+urn+`","disposition":"never"}]`), text("saved as "+urn))},
		{"past-the-bound-many-schemes", after(schemes, neverOf(urn), text("saved as "+urn))},
		// The never uris past the bound themselves: the rest of a text is
		// withheld from their scheme, also when "://" comes later in one.
		{"past-the-bound-nevers", after(nevers, neverOf(urn), text("saved as "+urn))},
		{"past-the-bound-nevers-url-inside", after(nevers, neverOf(mailtoURL), text("write to "+mailtoURL))},
		// A plain uri that differs only in letter case comes first.
		{"case-twin", []string{`{"type":"resource_link","uri":"` + strings.ToLower(urn) + `","name":"n"}`, neverOf(urn), text("saved as " + urn)}},
		// Past the checked part of a long text.
		{"past-the-checked-part", []string{neverOf(urn), text(big + " saved as " + urn)}},
		{"at-the-checked-part", []string{neverOf(urn), text(big + urn)}},
		{"past-the-checked-part-and-bound", after(nevers, neverOf(urn), text(big+" saved as "+urn))},
		// Characters around the uri that its key leaves out.
		{"invisible-before", []string{neverOf("\u200b" + urn), text("saved as " + urn)}},
		{"newline-after", []string{neverOf(urn + `\n`), text("(" + urn + ")")}},
		{"text-json-space-after", []string{text(`{"uri":"` + urn + ` ","disposition":"never"}`), text("saved as " + urn + ".")}},
		// Python's json.dumps escapes DEL, as it does every non-ASCII letter.
		{"python-del", []string{neverOf("urn:vault.example:NEVER\u007f-SIG"), text(`{"download": "urn:vault.example:NEVER\u007f-SIG"}`)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			ct := c.Ingest(t.Context(), raws(tt.blocks...), convert.Source{Server: "s", Tool: "t"})
			for _, v := range views(t, ct) {
				if strings.Contains(v, "NEVER-SIG") || strings.Contains(v, "vault.example") {
					t.Errorf("S2: a text writing out a never uri with no \"://\" shows it:\n%.300s", v)
				}
			}
		})
	}

	// A plain one shows as it is, until a later content marks it.
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{})
	ct := c.Ingest(t.Context(), raws(text("at "+urn+" now"), `{"type":"resource","uri":"`+urn+`"}`), convert.Source{Server: "s"})
	if h := ct.History(); !strings.Contains(h, "at "+urn+" now") {
		t.Errorf("a uri nobody withholds was changed:\n%s", h)
	}
	c.Ingest(t.Context(), raws(neverOf(urn)), convert.Source{Server: "s"})
	assertHidden(t, ct, "N1 a later never for a uri with no \"://\" an earlier text writes out")

	// The same where another plain reference differs only in letter case.
	c = mustConverter(t, newRegistry(t), convert.Policy{})
	ct = c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+strings.ToLower(urn)+`"}`, `{"type":"resource","uri":"`+urn+`"}`,
		text("at "+urn+" now")), convert.Source{Server: "s"})
	c.Ingest(t.Context(), raws(neverOf(urn)), convert.Source{Server: "s"})
	if showsSecret(t, ct) {
		t.Error("N1: a later never for one of two uris differing in letter case shows it where an earlier text writes it")
	}
}

// caseTwins returns n spellings of uri that differ in the letter case of
// what follows its first from bytes (so their keys differ), uri itself
// last.
func caseTwins(uri string, n, from int) []string {
	var out []string
	for m := 1; len(out) < n-1; m++ {
		b := []byte(strings.ToLower(uri))
		for j, bit := from, 0; j < len(b) && bit < 20; j++ {
			if 'a' <= b[j] && b[j] <= 'z' {
				if m>>bit&1 == 1 {
					b[j] -= 'a' - 'A'
				}
				bit++
			}
		}
		if v := string(b); v != uri {
			out = append(out, v)
		}
	}
	return append(out, uri)
}

// TestMarkedURIWithoutSeparatorInText pins N1 and N7 for uris with no
// "://" and others the bare reading does not take whole: a mark a server
// made, before the content or after it, withholds the uri where a text of
// the content writes it, also when the content names it in many letter
// cases (each a key of its own), also past the bound of the search, and
// a mark only the durable store holds is not crowded out of the store's
// questions by those letter-case twins.
func TestMarkedURIWithoutSeparatorInText(t *testing.T) {
	const urn = "urn:vault.example:take:NEVER-SIG"
	const spaced = "https://vault.example/My Take/NEVER-SIG"
	link := func(u string) string { return `{"type":"resource_link","uri":"` + u + `","name":"n"}` }
	never := func(u string) string { return `{"type":"resource","uri":"` + u + `","disposition":"never"}` }
	links := func(uris []string) []string {
		var out []string
		for _, u := range uris {
			out = append(out, link(u))
		}
		return out
	}
	var isbn []string
	for i := range 130 {
		isbn = append(isbn, link("urn:isbn:978"+strconv.Itoa(1000000000+i)))
	}
	for _, tt := range []struct {
		name, uri string
		blocks    []string
		before    bool // the mark is made before the content, not after
	}{
		{"twins-later", urn, links(caseTwins(urn, 10, len("urn:"))), false},
		{"twins-earlier", urn, links(caseTwins(urn, 10, len("urn:"))), true},
		// A host's letter case is not in a key; a path's is.
		{"spaced-twins-later", spaced, links(caseTwins(spaced, 10, len("https://vault.example/"))), false},
		{"earlier-past-the-bound", urn, append(slices.Clip(isbn), link(urn)), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
			if tt.before {
				c.Ingest(t.Context(), raws(never(tt.uri)), convert.Source{Server: "s"})
			}
			ct := c.Ingest(t.Context(), raws(append(tt.blocks, textBlock(t, "saved as "+tt.uri+" today"))...), convert.Source{Server: "s"})
			if !tt.before {
				c.Ingest(t.Context(), raws(never(tt.uri)), convert.Source{Server: "s"})
			}
			if showsSecret(t, ct) {
				t.Errorf("N1: a text shows a uri a server marked:\n%.300s", ct.History()[strings.LastIndex(ct.History(), "\n")+1:])
			}
		})
	}

	t.Run("store-questions", func(t *testing.T) {
		store := refs.NewMemoryMarks(0)
		if _, ok := mustRegistry(t, refs.Config{Marks: store}).MarkNever(t.Context(), neverURI, "vst"); !ok {
			t.Fatal("setup: MarkNever refused")
		}
		c := mustConverter(t, mustRegistry(t, refs.Config{Marks: store}), convert.Policy{ViewMax: 1 << 20}) // a later process
		var blocks []string
		var text strings.Builder
		for i := range 29 {
			u := "urn:isbn:item" + strconv.Itoa(i) + "abcd"
			blocks = append(blocks, links(caseTwins(u, 9, len("urn:")))...)
			text.WriteString("see " + u + "\n")
		}
		text.WriteString("the take is at " + neverURI + " now")
		ct := c.Ingest(t.Context(), raws(append(blocks, textBlock(t, text.String()))...), convert.Source{Server: "vst"})
		if showsSecret(t, ct) {
			t.Error("N7: a url only the store marked, the 30th distinct uri a text writes, shows")
		}
	})

	// The other readings of a text's first uri (cut at a comma, decoded
	// from another url's query) are asked about before the uris after it.
	for name, first := range map[string]string{
		"store-cut-reading":     "see " + neverURI + ",more\n",
		"store-decoded-reading": "see https://r.example/go?u=" + url.QueryEscape(neverURI) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			store := refs.NewMemoryMarks(0)
			if _, ok := mustRegistry(t, refs.Config{Marks: store}).MarkNever(t.Context(), neverURI, "vst"); !ok {
				t.Fatal("setup: MarkNever refused")
			}
			c := mustConverter(t, mustRegistry(t, refs.Config{Marks: store}), convert.Policy{ViewMax: 1 << 20})
			var text strings.Builder
			text.WriteString(first)
			for i := range 300 {
				text.WriteString("https://e.example/p" + strconv.Itoa(i) + " ")
			}
			if ct := c.Ingest(t.Context(), raws(textBlock(t, text.String())), convert.Source{Server: "s"}); showsSecret(t, ct) {
				t.Error("N7: the first uri a text writes, marked only in the store, shows")
			}
		})
	}
}

// TestNeverURIWithoutSeparatorInLabel pins S2 for the labels a server
// supplies with another block of the content (a name, a media type): a
// never or marked uri with no "://", or with text before its "://" (a
// mailto: whose body holds a URL), written into one is withheld from
// there on, as a uri with "://" is. A plain one stays as written.
func TestNeverURIWithoutSeparatorInLabel(t *testing.T) {
	const urn = "urn:vault.example:take:NEVER-SIG"
	const mailtoURL = "mailto:ops@vault.example?subject=NEVER-SIG&body=https://docs.example/runbook"
	never := func(u string) string { return `{"type":"resource","uri":"` + u + `","disposition":"never"}` }
	for _, tt := range []struct{ name, uri, block string }{
		{"link-name", urn, `{"type":"resource_link","uri":"https://files.example/a","name":"copy of ` + urn + `"}`},
		{"link-name-upper", urn, `{"type":"resource_link","uri":"https://files.example/a","name":"copy of ` + strings.ToUpper(urn) + `"}`},
		{"link-mime-type", urn, `{"type":"resource_link","uri":"https://files.example/a","name":"a","mimeType":"audio/wav; src=` + urn + `"}`},
		{"embedded-name", urn, `{"type":"resource","resource":{"uri":"https://files.example/b","name":"from ` + urn + `","text":"hello"}}`},
		{"inline-media-type", urn, `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png; src=` + urn + `"}`},
		{"mailto-with-url", mailtoURL, `{"type":"resource_link","uri":"https://files.example/a","name":"ask ` + mailtoURL + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// With a text in the content and without one.
			for _, blocks := range [][]string{{never(tt.uri), tt.block, textBlock(t, "done")}, {tt.block, never(tt.uri)}} {
				c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
				ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s", Tool: "t"})
				for _, v := range views(t, ct) {
					if strings.Contains(strings.ToUpper(v), "NEVER-SIG") {
						t.Errorf("S2: a label shows a never uri:\n%.400s", v)
					}
				}
			}
		})
	}

	// A plain one shows, until a later content marks it.
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource_link","uri":"`+urn+`","name":"n"}`,
		`{"type":"resource_link","uri":"https://files.example/a","name":"copy of `+urn+`"}`, textBlock(t, "done")), convert.Source{Server: "s"})
	if h := ct.History(); !strings.Contains(h, `"copy of `+urn+`"`) {
		t.Errorf("a label naming a uri nobody withholds was changed:\n%s", h)
	}
	c.Ingest(t.Context(), raws(never(urn)), convert.Source{Server: "s"})
	if showsSecret(t, ct) {
		t.Error("N1: a label shows a uri a later content marked")
	}
}

// TestPlainURIsWithoutSeparatorKeepTexts pins the other side of S2 for
// uris with no "://" that nobody calls never: a content naming more of
// them than the search for such uris takes (a bibliography of urn:isbn
// links, a contact list of mailto links, tags of many schemes) shows its
// texts whole, as it did before they were searched for.
func TestPlainURIsWithoutSeparatorKeepTexts(t *testing.T) {
	link := func(u string) string { return `{"type":"resource_link","uri":"` + u + `","name":"n"}` }
	var isbn, mailto, tags, schemes []string
	var contacts strings.Builder
	for i := range 130 {
		isbn = append(isbn, link("urn:isbn:978"+strconv.Itoa(1000000000+i)))
		tags = append(tags, link("tag:blog.example,2026:post-"+strconv.Itoa(i)))
		schemes = append(schemes, link("s"+strconv.Itoa(i%17)+":item-"+strconv.Itoa(i)))
	}
	for i := range 50 {
		u := "mailto:user" + strconv.Itoa(i) + "@corp.example?subject=Hello&body=Hi"
		mailto = append(mailto, link(u))
		contacts.WriteString(u + "\n")
	}
	big := strings.Repeat("x", 4<<20) // the part of a text that is checked
	for _, tt := range []struct {
		name, text string
		blocks     []string
	}{
		{"isbn", "Found 130 books. First: urn:isbn:9781000000000 (see https://books.example/b)", isbn},
		// The uris without "://" leave room for one the bare reading splits.
		{"isbn-and-spaced-url", "Found 130 books; the list is at https://books.example/My List.pdf",
			append(slices.Clip(isbn), link("https://books.example/My List.pdf"))},
		// Past the checked part of a long text, words that end like a
		// scheme the content names, or a text naming no uri at all.
		{"long-return-colon", big + " return: nothing", []string{link("urn:isbn:9781000000000")}},
		{"long-hashtag-colon", big + " hashtag: golang", []string{link("tag:blog.example,2026:post-0")}},
		{"long-17-schemes", big + " names no uri at all", schemes[:17]},
		{"mailto", "Contacts:\n" + contacts.String(), mailto},
		{"tags", "Posts tagged (hashtag: golang), first tag:blog.example,2026:post-0", tags},
		{"17-schemes", "Hello, this text names no uri at all.", schemes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			ct := c.Ingest(t.Context(), raws(append([]string{textBlock(t, tt.text)}, tt.blocks...)...), convert.Source{Server: "s"})
			if h := ct.History(); !strings.HasPrefix(h, tt.text) {
				t.Errorf("a text naming no never uri lost a part:\n%.300s", h)
			}
		})
	}
}

// TestNeverAfterReadingBudget pins S2 for the readings budget the texts of
// a content share: once an earlier text has used it up, a never uri a
// later text writes out is withheld, whether this content calls it never
// or an earlier one marked it.
func TestNeverAfterReadingBudget(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 4<<20-64; i++ {
		b.WriteString("xhttp://a.b/%41." + strconv.Itoa(i) + ".a.a. ")
	}
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	for _, later := range []string{"see " + neverURI + " now", `{"uri":"` + neverURI + `"}`} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		assertHidden(t, c.Ingest(t.Context(), raws(textBlock(t, b.String()), textBlock(t, later), never), convert.Source{Server: "s"}),
			"S2 a later text after the readings budget")
		c = mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		c.Ingest(t.Context(), raws(never), convert.Source{Server: "s"})
		assertHidden(t, c.Ingest(t.Context(), raws(textBlock(t, b.String()), textBlock(t, later)), convert.Source{Server: "s"}),
			"N7 a later text after the readings budget, marked before")
	}
}

// TestNeverMemberPastMembersBound pins S2 and N1 for the "uri" members
// the texts of one content keep between them: once an earlier text has
// used up that bound, a later text's member must not show a never uri,
// whether a block calls it never or only its own object does, and
// whether it writes "://" or not. The rest of that text is withheld from
// the member on, and its object's never is still read, so a text before
// it that writes the uri out withholds it too.
func TestNeverMemberPastMembersBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 1 << 14 {
		fmt.Fprintf(&b, `{"uri":"urn:x:%d"},`, i)
	}
	b.WriteString(`{}]`)
	for name, tc := range map[string]struct{ before, later, block string }{
		"block-never-urn": {later: `[{"name":"vault","uri":"urn:vault.example:NEVER-SIG"}]`,
			block: `{"type":"resource","uri":"urn:vault.example:NEVER-SIG","disposition":"never"}`},
		"own-never-https": {later: `[{"name":"vault","uri":"` + neverURI + `","disposition":"never"}]`},
		"own-never-written-before": {before: "the take is at " + neverURI + " for now",
			later: `[{"name":"vault","uri":"` + neverURI + `","disposition":"never"}]`},
		"own-never-escaped-before": {before: "the take is at " + neverURI + " for now",
			later: `[{"disposition":"never","uri":"` + strings.ReplaceAll(neverURI, "/", `\/`) + `"}]`},
		// A scheme letter escaped, which the bare reading does not take
		// for a scheme; a link the content offers to the uri its JSON
		// calls never.
		"block-never-escaped-scheme": {later: `[{"name":"v","uri":"` + strings.Replace(neverURI, "https", `\u0068ttps`, 1) + `"}]`,
			block: `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`},
		"own-never-linked": {later: `[{"uri":"` + neverURI + `","disposition":"never"}]`,
			block: `{"type":"resource_link","uri":"` + neverURI + `","name":"take"}`},
	} {
		t.Run(name, func(t *testing.T) {
			var blocks []json.RawMessage
			if tc.before != "" {
				blocks = raws(textBlock(t, tc.before))
			}
			blocks = append(blocks, raws(textBlock(t, b.String()), textBlock(t, tc.later))...)
			if tc.block != "" {
				blocks = append(blocks, json.RawMessage(tc.block))
			}
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			assertHidden(t, c.Ingest(t.Context(), blocks, convert.Source{Server: "s"}), "S2 a later text's member past the content's bound of members")
		})
	}
}

// TestOneRestNoticePastBothBounds pins the notice a view puts where a text
// stops being shown: a text whose bare uris use up the reading budget
// before a "uri" member past the members' bound gets one notice, not one
// for each bound.
func TestOneRestNoticePastBothBounds(t *testing.T) {
	var members, bare strings.Builder
	members.WriteString("[")
	for i := range 1 << 14 {
		fmt.Fprintf(&members, `{"uri":"urn:x:%d"},`, i)
	}
	members.WriteString(`{}]`)
	bare.WriteString("[")
	for range 1<<14 + 1 {
		bare.WriteString(`"a://b",`)
	}
	bare.WriteString(`{"uri":"urn:y"}]`)
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	h := c.Ingest(t.Context(), raws(textBlock(t, members.String()), textBlock(t, bare.String())), convert.Source{Server: "s"}).History()
	if n := strings.Count(h, "[the rest of this text is withheld"); n != 1 {
		t.Errorf("the view says %d times that the rest of a text is withheld; want once", n)
	}
}

// neverNest returns inner as the members of an object that calls its uri
// never, inside depth-1 more such objects, each the "resource" of the one
// around it.
func neverNest(depth int, inner string) string {
	return strings.Repeat(`{"disposition":"never","resource":`, depth-1) +
		`{"disposition":"never",` + inner + `}` + strings.Repeat(`}`, depth-1)
}

// TestNeverNestCountsEachMemberOnce pins N1 and S2 for the count of uris
// a content's texts are read as calling never: a member that objects
// nested as one another's "resource" all call never counts once, not once
// a level. 256 members 64 levels deep used to spend the whole count, so a
// later text's own never went unread and its uri showed.
func TestNeverNestCountsEachMemberOnce(t *testing.T) {
	members := strings.TrimSuffix(strings.Repeat(`"uri":"urn:x:1",`, 256), ",")
	later := `[{"name":"vault","uri":"` + neverURI + `","disposition":"never"}]`
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	ct := c.Ingest(t.Context(), raws(textBlock(t, neverNest(64, members)), textBlock(t, later)), convert.Source{Server: "s"})
	assertHidden(t, ct, "N1 a never after a nest of never objects")
}

// TestMembersPastReadingWithheld pins S2 and N1 where the reading of a
// text's JSON stops or skips: past its bound of objects, in a value
// nested deeper than it reads, after the text's first JSON value, and
// past the bytes it reads. A "uri" member there that names a never uri
// with no "://" (which the bare reading would not find) used to show; the
// rest of the text is now withheld from where the reading left off. A
// text with no such member there shows whole.
func TestMembersPastReadingWithheld(t *testing.T) {
	const uri = "urn:vault.example:NEVER-SIG"
	member := `{"uri":"` + uri + `"}`
	never := `{"type":"resource","uri":"` + uri + `","disposition":"never"}`
	for name, text := range map[string]string{
		"past-objects":   "[" + strings.Repeat("{},", 1<<14) + member + "]",
		"escaped-key":    "[" + strings.Repeat("{},", 1<<14) + `{"\u0075ri":"` + uri + `"}]`,
		"too-deep":       strings.Repeat("[", 70) + member + strings.Repeat("]", 70),
		"after-value":    `{"a":1} then ` + member,
		"past-scan-size": `["` + strings.Repeat("x", 4<<20) + `",` + member + "]",
	} {
		t.Run(name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			assertHidden(t, c.Ingest(t.Context(), raws(textBlock(t, text), never), convert.Source{Server: "s"}),
				"S2 a member where the reading of the text's JSON stopped")
		})
	}
	listing := "[" + strings.Repeat(`{"id":1},`, 1<<14) + `{"url":"https://docs.example/a"}]`
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	if h := c.Ingest(t.Context(), raws(textBlock(t, listing)), convert.Source{Server: "s"}).History(); strings.Contains(h, "withheld") {
		t.Errorf("a listing with no \"uri\" member past the bound of objects lost its rest")
	}
}

// TestWithheldRestCutsNoURI pins S2 where a text's rest is withheld from
// a point inside a uri it writes out bare: the bare reading must still
// read the whole uri, not the part before the point. And it pins N1 for
// JSON lines: a never in a later value of a text governs an earlier one.
func TestWithheldRestCutsNoURI(t *testing.T) {
	base := "https://vault.example/take.wav?sig=NEVER-SIG"
	scanEnd := func(uri string) string {
		head := "[" + strings.Repeat("1,", 1<<20)
		cut := strings.Index(uri, "NEVER-SIG") + len("NEVER-SIG")
		return head + strings.Repeat(" ", (4<<20)-len(head)-cut) + uri + ` {"uri":"a"}]`
	}
	for name, tc := range map[string]struct{ text, never string }{
		"after-first-value": {text: `[1,` + base + `]z {"uri":"a"}`, never: base + "]z"},
		"after-object":      {text: `{"a":` + base + `}z {"uri":"a"}`, never: base + "}z"},
		"at-scan-bound":     {text: scanEnd(neverURI + "&x=1"), never: neverURI + "&x=1"},
		"json-lines":        {text: `{"uri":"` + neverURI + `"}` + "\n" + `{"uri":"` + neverURI + `","disposition":"never"}`},
	} {
		t.Run(name, func(t *testing.T) {
			blocks := raws(textBlock(t, tc.text))
			if tc.never != "" {
				blocks = append(blocks, json.RawMessage(`{"type":"resource","uri":`+strconv.Quote(tc.never)+`,"disposition":"never"}`))
			}
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			assertHidden(t, c.Ingest(t.Context(), blocks, convert.Source{Server: "s"}), "S2 a withheld rest that starts inside a uri")
		})
	}
}

// phpJSON encodes v as PHP's json_encode does by default: every slash
// escaped.
func phpJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "/", `\/`)
}

// phpUnicodeJSON is v as PHP's json_encode writes it by default: every
// slash and every non-ASCII character escaped. v's strings must hold no
// character past the Basic Multilingual Plane, which PHP writes as two
// escapes.
func phpUnicodeJSON(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range phpJSON(t, v) {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r) // '\u4e0b'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// showsSecret reports whether any view of ct shows the never uri's
// credential.
func showsSecret(t *testing.T, ct *convert.Content) bool {
	t.Helper()
	return slices.ContainsFunc(views(t, ct), func(v string) bool { return strings.Contains(v, "NEVER-SIG") })
}

// TestURIMemberExtendingNeverShown pins the other side of S2 for a JSON
// "uri" member: a member whose whole value is another uri, one that only
// starts like a never uri (guide.html against guide), is shown as it is.
func TestURIMemberExtendingNeverShown(t *testing.T) {
	never := `{"type":"resource","uri":"https://docs.example/guide","disposition":"never"}`
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(never, textBlock(t, `[{"uri":"https://docs.example/guide.html","name":"Guide"}]`)), convert.Source{Server: "s", Tool: "t"})
	if h := ct.History(); !strings.Contains(h, `"https://docs.example/guide.html"`) {
		t.Errorf("a uri member naming another uri is withheld:\n%s", h)
	}
}

// downStore is a mark store that cannot be read or written.
type downStore struct{}

func (downStore) Mark(context.Context, string, string) error { return errors.New("mark store down") }
func (downStore) Marked(context.Context, string) (bool, error) {
	return false, errors.New("mark store down")
}

// TestStoreOutageWithholdsTextURI pins N7's failure rule for texts: while
// the mark store cannot be read, a uri a text writes out counts as marked,
// as a reference or an embedded resource naming it would (S2).
func TestStoreOutageWithholdsTextURI(t *testing.T) {
	c := mustConverter(t, mustRegistry(t, refs.Config{Marks: downStore{}}), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(textBlock(t, "the take is at "+neverURI)), convert.Source{Server: "s", Tool: "t"})
	if showsSecret(t, ct) {
		t.Errorf("S2: a uri in a text shows while the mark store cannot say whether it is marked")
	}
}

// TestStoredMarkAfterRepeatedURIs pins N7 against a text that repeats one
// harmless uri many times before the uri a store marked: the store is asked
// once per uri, not once per mention, so the repeats do not use up the
// questions the content may ask (S2).
func TestStoredMarkAfterRepeatedURIs(t *testing.T) {
	for _, store := range []refs.MarkStore{downStore{}, nil} {
		var reg *refs.Registry
		if store == nil {
			path := filepath.Join(t.TempDir(), "marks")
			first, err := refs.OpenFileMarks(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := mustRegistry(t, refs.Config{Marks: first}).MarkNever(t.Context(), neverURI, "vst"); !ok {
				t.Fatal("setup: MarkNever refused")
			}
			first.Close()
			later, err := refs.OpenFileMarks(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { later.Close() })
			reg = mustRegistry(t, refs.Config{Marks: later}) // a later process
		} else {
			reg = mustRegistry(t, refs.Config{Marks: store})
		}
		c := mustConverter(t, reg, convert.Policy{})
		text := strings.Repeat("see https://docs.example/a ", 300) + "the take is at " + neverURI + " now"
		if showsSecret(t, c.Ingest(t.Context(), raws(textBlock(t, text)), convert.Source{Server: "vst"})) {
			t.Errorf("N7/S2: a marked uri after 300 mentions of another shows (store %T)", store)
		}
	}
}

// countingStore is a mark store that counts the questions it is asked.
type countingStore struct {
	*refs.MemoryMarks
	asked atomic.Int64
}

func (s *countingStore) Marked(ctx context.Context, key string) (bool, error) {
	s.asked.Add(1)
	return s.MemoryMarks.Marked(ctx, key)
}

// TestStoreQuestionsBounded pins the bound the Ingest documentation
// states for N7: a text naming a thousand distinct uris asks the durable
// mark store about 256 of them at most, however many it names, while a
// mark the registry holds in memory still withholds a uri past them (S2).
func TestStoreQuestionsBounded(t *testing.T) {
	store := &countingStore{MemoryMarks: refs.NewMemoryMarks(0)}
	reg := mustRegistry(t, refs.Config{Marks: store})
	if _, ok := reg.MarkNever(t.Context(), neverURI, "vst"); !ok {
		t.Fatal("setup: MarkNever refused")
	}
	c := mustConverter(t, reg, convert.Policy{ViewMax: 1 << 20}) // the whole text shows
	var text strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&text, "see https://docs.example/page/%d\n", i)
	}
	text.WriteString("the take is at " + neverURI + " now")
	store.asked.Store(0)
	ct := c.Ingest(t.Context(), raws(textBlock(t, text.String())), convert.Source{Server: "vst"})
	if n := store.asked.Load(); n > 256 {
		t.Errorf("N7: ingesting one text asked the mark store %d times; the documented bound is 256", n)
	}
	if showsSecret(t, ct) {
		t.Errorf("S2: a uri the registry marked shows after a thousand others")
	}
}

// TestLabelsCarryNoSpacedURI pins S2 for a never uri holding a space that
// a server writes into the name of another block, of the same content or
// of later content: no part of it after the space shows either.
func TestLabelsCarryNoSpacedURI(t *testing.T) {
	const spaced = "https://vault.example/my take.wav?sig=NEVER-SIG"
	never := `{"type":"resource","uri":"` + spaced + `","disposition":"never"}`
	other := `{"type":"resource","uri":"https://files.example/b.wav","name":"copy of ` + spaced + `"}`
	tool := `{"type":"resource","uri":"https://files.example/c.wav"}`
	check := func(t *testing.T, ct *convert.Content) {
		t.Helper()
		for _, v := range views(t, ct) {
			if strings.Contains(v, "NEVER-SIG") || strings.Contains(v, "take.wav") {
				t.Errorf("S2: a label carries part of a never uri:\n%s", v)
			}
		}
	}
	t.Run("same-content", func(t *testing.T) {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		check(t, c.Ingest(t.Context(), raws(never, other), convert.Source{Server: "vst"}))
	})
	t.Run("later-content", func(t *testing.T) {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		c.Ingest(t.Context(), raws(never), convert.Source{Server: "vst"})
		check(t, c.Ingest(t.Context(), raws(other), convert.Source{Server: "vst"}))
	})
	t.Run("tool-name", func(t *testing.T) {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		check(t, c.Ingest(t.Context(), raws(never, tool), convert.Source{Server: "vst", Tool: "render " + spaced}))
	})
}

// TestNeverURIWithBackslash pins S2 for a never uri that holds a
// backslash: the reading of bare uris takes a backslash for a JSON escape
// and reads what it decodes to, so such a uri is looked for as the
// content's blocks write it, raw or JSON-escaped, like one holding a
// space.
func TestNeverURIWithBackslash(t *testing.T) {
	const odd = `https://vault.example/a\u0026b.wav?sig=NEVER-SIG`
	lit, err := json.Marshal(odd)
	if err != nil {
		t.Fatal(err)
	}
	never := `{"type":"resource","uri":` + string(lit) + `,"disposition":"never"}`
	for name, text := range map[string]string{
		"raw":     "the take is at " + odd + " now",
		"escaped": `{"download":` + string(lit) + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{})
			assertHidden(t, c.Ingest(t.Context(), raws(never, textBlock(t, text)), convert.Source{Server: "s"}), "S2 a text naming a never uri with a backslash")
		})
	}
}

// denyRegistry is a host's registrar that wraps a registry and calls
// marked every uri that holds "DENY", whatever the registry says.
type denyRegistry struct{ *refs.Registry }

func (d denyRegistry) Marked(ctx context.Context, uri string) bool {
	return strings.Contains(uri, "DENY") || d.Registry.Marked(ctx, uri)
}

func (d denyRegistry) MarkedHere(uri string) bool {
	return strings.Contains(uri, "DENY") || d.Registry.MarkedHere(uri)
}

// TestWrappedMarkReaderAsked pins N7 for a host that wraps the registry:
// the converter asks the wrapper's Marked and MarkedHere about the uris
// of texts, not the registry's own methods beneath it.
func TestWrappedMarkReaderAsked(t *testing.T) {
	c := mustConverter(t, denyRegistry{newRegistry(t)}, convert.Policy{})
	ct := c.Ingest(t.Context(), raws(textBlock(t, "see https://vault.example/a?sig=DENY now")), convert.Source{Server: "s"})
	if h := ct.History(); strings.Contains(h, "DENY") {
		t.Errorf("N7 the host's mark reader was passed over:\n%s", h)
	}
}

// TestNeverWindowsPathMarkedEarlier pins N7 for a never uri holding
// backslashes that are no JSON encoder's escapes (a Windows path, "\t"
// and "\n" in it): a later content that writes it out has it withheld by
// the mark alone, as it stands.
func TestNeverWindowsPathMarkedEarlier(t *testing.T) {
	const win = `file:///C:\temp\new\take.wav?sig=NEVER-SIG`
	lit, err := json.Marshal(win)
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(t)
	c := mustConverter(t, reg, convert.Policy{})
	c.Ingest(t.Context(), raws(`{"type":"resource","uri":`+string(lit)+`,"disposition":"never"}`), convert.Source{Server: "s"})
	ct := c.Ingest(t.Context(), raws(textBlock(t, "saved to "+win+" now")), convert.Source{Server: "s"})
	if showsSecret(t, ct) {
		t.Errorf("N7 a marked Windows path shows in later content:\n%s", ct.History())
	}
}

// TestNeverCoversUnicodeHostRespellings pins N8 for hosts whose key is
// their written form, ASCII letters lower-cased (a label the IDNA mapping
// cannot take, bytes that are not UTF-8): a never on one spelling
// withholds the spellings that differ in ASCII case, a default port or
// the scheme's case, in a text and as a reference. A fallback that
// lower-cased with Unicode rules made keys that did not key to
// themselves, and each spelling was keyed by its raw text.
func TestNeverCoversUnicodeHostRespellings(t *testing.T) {
	for _, tc := range []struct{ never, shown string }{
		{"http://\u0130_x.\u00fc/doc?sig=NEVER-SIG", "http://\u0130_X.\u00fc/doc?sig=NEVER-SIG"},
		{"http://\u0130_x.\u00fc/doc?sig=NEVER-SIG", "http://\u0130_x.\u00fc:80/doc?sig=NEVER-SIG"},
		{"http://\u0130_x.\u00fc/doc?sig=NEVER-SIG", "HTTP://\u0130_x.\u00fc/doc?sig=NEVER-SIG"},
		{"http://%FF.test/doc?sig=NEVER-SIG", "http://%ff.test/doc?sig=NEVER-SIG"},
		{"http://%FF.test/doc?sig=NEVER-SIG", "http://%FF.TEST/doc?sig=NEVER-SIG"},
		{"https://xn--fa-hia.test/doc?sig=NEVER-SIG", "https://fa\u00df.test/doc?sig=NEVER-SIG"},
		{"https://fa\u00df.test/doc?sig=NEVER-SIG", "https://xn--fa-hia.test/doc?sig=NEVER-SIG"},
		{"https://xn--0xaajbq.test/doc?sig=NEVER-SIG", "https://\u03c3\u03bf\u03c6\u03bf\u03c2.test/doc?sig=NEVER-SIG"},
		{"https://xn--4xa.test/doc?sig=NEVER-SIG", "https://\u03f2.test/doc?sig=NEVER-SIG"},     // a compatibility sigma is σ
		{"https://xn--4xa.test/doc?sig=NEVER-SIG", "https://\U0001d6d3.test/doc?sig=NEVER-SIG"}, // so is a mathematical final sigma
		{"https://xn--58d.test/doc?sig=NEVER-SIG", "https://\uab70.test/doc?sig=NEVER-SIG"},     // a small Cherokee letter is its capital
		{"https://xn--11b2ezcw70k.test/doc?sig=NEVER-SIG", "https://\u0915\u094d\u200d\u0937.test/doc?sig=NEVER-SIG"},
		{"https://\u0628\u200c\u0628.test/doc?sig=NEVER-SIG", "https://xn--ngba799q.test/doc?sig=NEVER-SIG"},
		{"https://xn--1-0mc899q.test/doc?sig=NEVER-SIG", "https://\u0628\u200c1.test/doc?sig=NEVER-SIG"},
		{"https://\u0915\u094d\u200d\u0937.test/doc?sig=NEVER-SIG", "https://\u0915\u094d\u00ad\u200d\u0937.test/doc?sig=NEVER-SIG"},
		{"https://\u1f00\u03af.test/doc?sig=NEVER-SIG", "https://\u1f80\u0301.test/doc?sig=NEVER-SIG"},
		{"https://xn--7ba.test/doc?sig=NEVER-SIG", "https://\U00010041\u0308.test/doc?sig=NEVER-SIG"},
	} {
		t.Run(tc.shown, func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			src := convert.Source{Server: "s", Tool: "t"}
			c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+tc.never+`","disposition":"never"}`), src)
			for _, blocks := range [][]string{
				{textBlock(t, "see "+tc.shown+" now")},
				{`{"type":"resource","uri":"` + tc.shown + `"}`},
			} {
				ct := c.Ingest(t.Context(), raws(blocks...), src)
				for _, v := range views(t, ct) {
					if strings.Contains(v, "NEVER-SIG") {
						t.Errorf("N8: after a never on %q, a view shows %q:\n%s", tc.never, tc.shown, v)
						break
					}
				}
			}
		})
	}
}

// TestNeverWordsSayWhoseMark pins the words of a withheld stub (N1, N7):
// "its server" only for a mark the content's own server made, "a server"
// for another server's mark, and neither while the mark store could not
// be read when the reference arrived, which is no server's word.
func TestNeverWordsSayWhoseMark(t *testing.T) {
	const own, other, unread = "its server marked it never", "a server marked it never", "could not read its never marks"
	ref := `{"type":"resource","uri":"` + neverURI + `"}`
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	for _, tc := range []struct {
		name       string
		reg        func(testing.TB) *refs.Registry
		first      string // content of server "y" ingested first, if any
		block      string // then content of server "x"
		want, nots string
	}{
		{"own never", newRegistry, "", never, own, unread},
		{"another server's never", newRegistry, never, ref, other, own},
		{"store unreadable", func(tb testing.TB) *refs.Registry { return mustRegistry(tb, refs.Config{Marks: downStore{}}) }, "", ref, unread, "marked it never"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustConverter(t, tc.reg(t), convert.Policy{})
			if tc.first != "" {
				c.Ingest(t.Context(), raws(tc.first), convert.Source{Server: "y", Tool: "t"})
			}
			h := c.Ingest(t.Context(), raws(tc.block), convert.Source{Server: "x", Tool: "t"}).History()
			if !strings.Contains(h, tc.want) || strings.Contains(h, tc.nots) {
				t.Errorf("N1/N7: the stub reads %q; want %q in it and not %q", h, tc.want, tc.nots)
			}
		})
	}
}

// TestNeverURIWithoutSeparatorAtBounds attacks the search for uris with no
// "://" at the edges of a host's settings and a server's floods (S2, L5):
// the smallest view bound a host may set, and a content repeating one
// never urn ten thousand times in blocks and in its text.
func TestNeverURIWithoutSeparatorAtBounds(t *testing.T) {
	const urn = "urn:vault.example:take:NEVER-SIG"
	never := `{"type":"resource","uri":"` + urn + `","disposition":"never"}`
	named := `{"type":"resource_link","uri":"https://files.example/a","name":"copy of ` + urn + `"}`
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: convert.MinViewMax})
	ct := c.Ingest(t.Context(), raws(named, textBlock(t, "at "+urn), never), convert.Source{Server: "s"})
	if showsSecret(t, ct) {
		t.Error("S2: at the smallest view bound a view shows the never urn")
	}

	blocks := slices.Repeat([]string{never, named}, 5000)
	blocks = append(blocks, textBlock(t, strings.Repeat(urn+" ", 10000)))
	blk := raws(blocks...)
	size := 0
	for _, b := range blk {
		size += len(b)
	}
	c = mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	got := allocated(func() { ct = c.Ingest(t.Context(), blk, convert.Source{Server: "s"}) })
	if got > eightTimes(size) {
		t.Errorf("L5: ingesting %d KiB of repeated never urns allocated %d KiB, over eight times the content", size>>10, got>>10)
	}
	if showsSecret(t, ct) {
		t.Error("S2: a flood of one never urn shows it")
	}
}

// TestShownURINamesNoNever pins S2 for a host that shows uris: a stub
// never shows a uri that writes out a never uri, such as the never uri
// with a parameter added, just as a text writing it out is withheld. The
// reference itself is still shown, without its uri; an unrelated uri is
// still shown.
func TestShownURINamesNoNever(t *testing.T) {
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	longer := `{"type":"resource","uri":"` + neverURI + `&x=1","name":"longer"}`
	other := `{"type":"resource","uri":"https://other.example/take.wav","name":"other"}`
	check := func(t *testing.T, ct *convert.Content, reason string) {
		t.Helper()
		for _, v := range views(t, ct) {
			if strings.Contains(v, "NEVER-SIG") {
				t.Errorf("%s: a view shows the never uri:\n%s", reason, v)
			}
			if !strings.Contains(v, "longer") || !strings.Contains(v, "https://other.example/take.wav") {
				t.Errorf("%s: a view lost the longer reference or the other uri:\n%s", reason, v)
			}
		}
	}
	for _, src := range []convert.Source{{Server: "s", Tool: "t"}, {Tool: "t"}} {
		reg := newRegistry(t)
		c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
		check(t, c.Ingest(t.Context(), raws(never, longer, other), src), "the same content, server "+src.Server)
		if src.Server != "" {
			check(t, c.Ingest(t.Context(), raws(longer, other), src), "a later content")
		}
	}
}

// TestNeverWithBlankURI pins N1 and S3 for a reference whose uri is empty
// or only white space or invisible characters: such a uri has no key for
// a claim, but the block's own never still binds its record and its stub,
// which offers no fetch. A reference after it with another blank uri names
// the same record, so it is withheld too (failing closed).
func TestNeverWithBlankURI(t *testing.T) {
	for _, uri := range []string{"", "   ", "\u200b", "\t\u2060"} {
		t.Run(strconv.Quote(uri), func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{})
			never, _ := json.Marshal(map[string]string{"type": "resource", "uri": uri, "name": "blank.wav", "disposition": "never"})
			other := `{"type":"resource","uri":" ","name":"other.wav"}`
			ct := c.Ingest(t.Context(), raws(string(never), other), convert.Source{Server: "s", Tool: "t"})
			for _, id := range ct.IDs() {
				rec, ok := reg.Lookup(id)
				if !ok || !rec.Never {
					t.Errorf("record %s: found %v, never %v; want a never record", id, ok, rec.Never)
				}
			}
			for _, v := range views(t, ct) {
				if strings.Contains(v, convert.DefaultFetchHint) {
					t.Errorf("a view offers a fetch:\n%s", v)
				}
			}
		})
	}
}

// TestScriptURICleaned pins L1 and S4 for a uri a ShowURI policy lets
// through: the script's view shows it cleaned and bounded as the stub
// does, never with the controls and invisible characters a server put in
// it.
func TestScriptURICleaned(t *testing.T) {
	raw := "https://a.example/x\u202egnp.exe\n\u200b\a"
	blk, _ := json.Marshal(map[string]string{"type": "resource", "uri": raw, "name": "x"})
	c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
	ct := c.Ingest(t.Context(), raws(string(blk)), convert.Source{Server: "s", Tool: "t"})
	want := label.Display(raw, convert.MaxURILen)
	if !strings.Contains(ct.History(), ", at "+want+";") {
		t.Fatalf("the stub does not show the cleaned uri %q:\n%s", want, ct.History())
	}
	items := ct.Script()
	if len(items) != 1 || items[0].URI != want {
		t.Errorf("the script shows the uri %+q; want %+q, as the stub does", items[0].URI, want)
	}
}

// TestShownURIReadCleaned pins S2 and S4 for a uri a ShowURI policy lets
// through: the stub and the script show it cleaned, so it is judged
// cleaned too. A never uri split by an invisible or bidi character, which
// cleaning takes out, is withheld as the never uri itself is, before or
// after the never in the content.
func TestShownURIReadCleaned(t *testing.T) {
	never := `{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`
	for _, u := range []string{
		"https://vault.example/take.wav?sig=NEVER-\u200bSIG",
		"https://vault.\u202eexample/take.wav?sig=NEVER-SIG",
		"https://vault.example/take.wav?sig=NEVER-SIG\u2060&x=1",
		"\u200bhttps://vault.example/take.wav?sig=NEVER-SIG",
	} {
		blk, _ := json.Marshal(map[string]string{"type": "resource", "uri": u, "name": "split"})
		for _, order := range [][]string{{never, string(blk)}, {string(blk), never}} {
			c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
			ct := c.Ingest(t.Context(), raws(order...), convert.Source{Server: "s", Tool: "t"})
			for _, v := range views(t, ct) {
				if strings.Contains(v, "NEVER-SIG") || !strings.Contains(v, "split") {
					t.Errorf("%+q: a view shows the never uri, or lost the reference:\n%s", u, v)
				}
			}
		}
	}
}

// TestProvenanceWithholdsNeverURIs pins S2 and S4 for the names of a
// content's source: a tool, event or server name that writes out a uri
// the content calls never is cut there in every lane's provenance, as a
// name or media type of a block is, also for a uri with no "://", which
// only the content's own uris reveal.
func TestProvenanceWithholdsNeverURIs(t *testing.T) {
	for _, u := range []string{"urn:secret:tok3n", "mailto:tok3n@x.example", "https://a.example/tok3n"} {
		never := `{"type":"resource","uri":"` + u + `","disposition":"never"}`
		other := `{"type":"resource","uri":"https://b.example/f","name":"` + u + `","mimeType":"` + u + `"}`
		for _, lane := range []convert.Lane{convert.LaneToolResult, convert.LanePush, convert.LaneChannel} {
			c := mustConverter(t, newRegistry(t), convert.Policy{})
			ct := c.Ingest(t.Context(), raws(never, other), convert.Source{Server: "s " + u, Lane: lane, Tool: u, Event: "ev " + u})
			for _, v := range views(t, ct) {
				if strings.Contains(v, "tok3n") {
					t.Errorf("%s, lane %v: a view shows the never uri:\n%s", u, lane, v)
				}
			}
		}
	}
	// A long name is searched only as far as it can be shown: a never uri
	// past that is never shown, and one that starts within it is cut.
	u := "urn:secret:tok3n"
	never := `{"type":"resource","uri":"` + u + `","disposition":"never"}`
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	for _, tool := range []string{strings.Repeat("a", 60) + u, strings.Repeat("a", 1<<20) + u} {
		ct := c.Ingest(t.Context(), raws(never), convert.Source{Server: "s", Tool: tool})
		if h := ct.History(); strings.Contains(h, "urn:se") || strings.Contains(h, "tok3n") {
			t.Errorf("a long tool name shows part of the never uri:\n%s", h)
		}
	}
}

// TestInlineNestedDispositionWithheld pins P5 end to end for a disposition
// written where the schema does not read it (revision 1's annotations, or
// _meta): the inline data it sits beside reaches no view.
func TestInlineNestedDispositionWithheld(t *testing.T) {
	const data = "U0VDUkVULVBheWxvYWQ="
	// Beside a uri, such a never also claims the uri: a link to it offers
	// no fetch and, under ShowURI, shows no uri.
	for _, blk := range []string{
		`{"type":"image","data":"` + data + `","uri":"` + neverURI + `","annotations":{"disposition":"never"}}`,
		`{"type":"audio","data":"` + data + `","uri":"` + neverURI + `","_meta":{"disposition":"never"}}`,
	} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
		link := `{"type":"resource_link","uri":"` + neverURI + `","name":"link"}`
		ct := c.Ingest(t.Context(), raws(blk, link), convert.Source{Server: "s", Tool: "t"})
		assertHidden(t, ct, blk)
		for _, v := range views(t, ct) {
			if strings.Contains(v, data) {
				t.Errorf("%s: a view shows the data:\n%s", blk, v)
			}
		}
	}
	for _, blk := range []string{
		`{"type":"audio","data":"` + data + `","mimeType":"audio/wav","annotations":{"disposition":"never"}}`,
		`{"type":"image","data":"` + data + `","mimeType":"image/png","_meta":{"disposition":"ref"}}`,
	} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		ct := c.Ingest(t.Context(), raws(blk), convert.Source{Server: "s", Lane: convert.LanePush})
		for _, v := range views(t, ct) {
			if strings.Contains(v, data) || !strings.Contains(v, "withheld") {
				t.Errorf("%s: a view shows the data, or no notice:\n%s", blk, v)
			}
		}
	}
}

// TestLabelsPastTheSearch pins S2 and S4 for the labels and provenance
// of a content that names more never uris without "://" than the search
// for their spellings takes: past it, a label is cut from the first place
// it writes out the scheme of such a uri, as a text is, rather than shown.
func TestLabelsPastTheSearch(t *testing.T) {
	const last = "urn:vault:take:NEVER-SIG"
	for _, tt := range []struct {
		name   string
		before func(k int) string
		n      int
	}{
		{"plain", func(k int) string { return fmt.Sprintf("urn:x:%d", k) }, 200},
		{"many-spellings", func(k int) string { return fmt.Sprintf("urn:x:%d/<a>&b='\u00e9'", k) }, 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var blocks []string
			for k := range tt.n {
				b, _ := json.Marshal(map[string]string{"type": "resource", "uri": tt.before(k), "disposition": "never"})
				blocks = append(blocks, string(b))
			}
			blocks = append(blocks,
				`{"type":"resource","uri":"`+last+`","disposition":"never"}`,
				`{"type":"resource","uri":"https://files.example/a","name":"copy of `+last+`","mimeType":"x/`+last+`"}`)
			c := mustConverter(t, newRegistry(t), convert.Policy{})
			ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s", Tool: "tool " + last})
			for _, v := range views(t, ct) {
				if strings.Contains(v, "NEVER-SIG") {
					t.Fatalf("after %d never uris, a label or the provenance shows the last one:\n%.600s", tt.n, v)
				}
			}
		})
	}
}

// TestProvenanceAfterLaterMark pins N2 and S2 for provenance: a name that
// writes out a uri a server marks never after the content came is cut
// from then on, also when a view of the content was rendered before.
func TestProvenanceAfterLaterMark(t *testing.T) {
	const urn = "urn:vault.example:take:NEVER-SIG"
	c := mustConverter(t, newRegistry(t), convert.Policy{})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+urn+`","name":"n"}`),
		convert.Source{Server: "s", Tool: "tool " + urn})
	if h := ct.History(); !strings.Contains(h, "NEVER-SIG") {
		t.Fatalf("before any never the provenance is cut:\n%s", h)
	}
	c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+urn+`","disposition":"never"}`), convert.Source{Server: "s"})
	for _, v := range views(t, ct) {
		if strings.Contains(v, "NEVER-SIG") {
			t.Errorf("after the mark, a view still shows the urn:\n%s", v)
		}
	}
}

// TestShownURIHoldsNeverSpellings pins S2 for a uri a ShowURI policy lets
// through that holds a never uri the reading of a text does not take
// whole: one with no "://", or with a space in it.
func TestShownURIHoldsNeverSpellings(t *testing.T) {
	for _, tt := range []struct{ never, shown string }{
		{"urn:vault.example:take:NEVER-SIG", "https://files.example/get?src=urn:vault.example:take:NEVER-SIG"},
		{"urn:vault.example:take:NEVER-SIG", "urn:vault.example:take:NEVER-SIG/extra"},
		{"mailto:ops@vault.example?subject=NEVER-SIG", "mailto:ops@vault.example?subject=NEVER-SIG&cc=x"},
		{"https://vault.example/take wav?sig=NEVER-SIG", "https://vault.example/take wav?sig=NEVER-SIG&x=1"},
	} {
		never, _ := json.Marshal(map[string]string{"type": "resource", "uri": tt.never, "disposition": "never"})
		shown, _ := json.Marshal(map[string]string{"type": "resource", "uri": tt.shown, "name": "other"})
		c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
		ct := c.Ingest(t.Context(), raws(string(never), string(shown)), convert.Source{Server: "s", Tool: "t"})
		for _, v := range views(t, ct) {
			if strings.Contains(v, "NEVER-SIG") {
				t.Errorf("%s: a view shows the never uri:\n%s", tt.shown, v)
			}
		}
	}
}

// TestEmbeddedNestedNever pins N6 and P5 for an embedded resource whose
// never is written in annotations or _meta, of the block or of its
// resource: its content reaches no view.
func TestEmbeddedNestedNever(t *testing.T) {
	const blob = "U0VDUkVULVBheWxvYWQ="
	res := `"uri":"https://files.example/x.png","mimeType":"image/png","blob":"` + blob + `"`
	// The same with the nested resource's uri written twice, which
	// rejects the block whole: its uri stays claimed never.
	dup := `"uri":"https://files.example/x.png",` + res
	for _, blk := range []string{
		// Other ways the block is rejected whole: the resource named
		// twice, the type named twice, the block cut short.
		`{"type":"resource","_meta":{"disposition":"never"},"resource":{` + res + `},"resource":{` + res + `}}`,
		`{"type":"resource","type":"resource","annotations":{"disposition":"never"},"resource":{` + res + `}}`,
		`{"type":"resource","resource":{` + res + `,"_meta":{"disposition":"never"}},"resource":{` + res + `}}`,
		`{"type":"resource","_meta":{"disposition":"never"},"resource":{` + res + `},"x":`,
		// Cut short inside the object that says never, or inside the
		// nested resource after it said never.
		`{"type":"resource","resource":{` + res + `},"_meta":{"disposition":"never","x":`,
		`{"type":"resource","resource":{` + res + `,"_meta":{"disposition":"never"},"x":[`,
		`{"type":"resource","resource":{` + res + `,"annotations":{"disposition":"never",`,
		`{"type":"resource","disposition":"never","resource":{` + res + `,"x":`,
		`{"type":"resource","annotations":{"disposition":"never"},"resource":{` + dup + `}}`,
		`{"type":"resource","_meta":{"disposition":"never"},"resource":{` + dup + `}}`,
		`{"type":"resource","resource":{` + dup + `,"_meta":{"disposition":"never"}}}`,
		`{"type":"resource","annotations":{"disposition":"never"},"resource":{` + res + `}}`,
		`{"type":"resource","_meta":{"disposition":"never"},"resource":{` + res + `}}`,
		`{"type":"resource","resource":{` + res + `,"_meta":{"disposition":"never"}}}`,
		`{"type":"resource","resource":{` + res + `,"annotations":{"disposition":"never"}}}`,
	} {
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		link := `{"type":"resource_link","uri":"https://files.example/x.png","name":"link"}`
		ct := c.Ingest(t.Context(), raws(blk, link), convert.Source{Server: "s", Lane: convert.LanePush})
		for _, v := range views(t, ct) {
			if strings.Contains(v, blob) || strings.Contains(v, convert.DefaultFetchHint) {
				t.Errorf("%s: a view shows the blob, or offers the uri for fetching:\n%s", blk, v)
			}
		}
	}
}

// TestLabelsWithholdEncodedURIs pins S2 for a name, media type or source
// name that writes a uri out percent-encoded: a model decodes it as well
// as the plain form, so it is withheld as the plain form is.
func TestLabelsWithholdEncodedURIs(t *testing.T) {
	for _, enc := range []string{
		"next=https%3A%2F%2Fvault.example%2Ftake.wav%3Fsig%3DNEVER-SIG",
		"next=https%3a//vault.example/take.wav?sig=NEVER-SIG",
		"next=https:%2F%2Fvault.example/take.wav?sig=NEVER-SIG",
		"next=https%253A%252F%252Fvault.example%252Ftake.wav%253Fsig%253DNEVER-SIG",
	} {
		blk, _ := json.Marshal(map[string]string{"type": "resource", "uri": "https://files.example/a", "name": enc, "mimeType": "x/" + enc})
		c := mustConverter(t, newRegistry(t), convert.Policy{})
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+neverURI+`","disposition":"never"}`, string(blk)),
			convert.Source{Server: "s", Tool: enc})
		for _, v := range views(t, ct) {
			if strings.Contains(v, "NEVER-SIG") {
				t.Errorf("%s: a view shows the never uri:\n%s", enc, v)
			}
		}
	}
}

// TestNeverPastTheKeptOccurrences pins N1 and N8 for a block that writes
// "uri" or "resource" more times than the reading of its top level keeps
// (eight of each): a never governs every occurrence, the last one (the
// one a decoder keeps) among them, so the never uri in the ninth is
// marked and withheld from a link beside it.
func TestNeverPastTheKeptOccurrences(t *testing.T) {
	const blob = "U0VDUkVULVBheWxvYWQ="
	repeat := func(member string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, member+",", i)
		}
		return b.String()
	}
	uris := repeat(`"uri":"https://files.example/%d"`, 8)
	for _, tt := range []struct{ name, block string }{
		{"ninth-uri", `{"type":"resource",` + uris + `"uri":"` + neverURI + `","disposition":"never"}`},
		{"ninth-uri-cut-short", `{"type":"resource","disposition":"never",` + uris + `"uri":"` + neverURI + `","name":`},
		{"ninth-uri-beside-data", `{"type":"audio","data":"` + blob + `",` + uris + `"uri":"` + neverURI + `","disposition":"never"}`},
		{"ninth-resource-outer-never", `{"type":"resource","disposition":"never",` + repeat(`"resource":{"uri":"https://files.example/%d","text":"x"}`, 8) +
			`"resource":{"uri":"` + neverURI + `","blob":"` + blob + `"}}`},
		{"ninth-resource-own-never", `{"type":"text","text":"hello",` + repeat(`"resource":{"uri":"https://files.example/%d"}`, 8) +
			`"resource":{"uri":"` + neverURI + `","_meta":{"disposition":"never"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRegistry(t)
			c := mustConverter(t, reg, convert.Policy{ShowURI: showAll})
			link := `{"type":"resource_link","uri":"` + neverURI + `","name":"link"}`
			ct := c.Ingest(t.Context(), raws(tt.block, link), convert.Source{Server: "s", Tool: "t"})
			if !reg.MarkedHere(neverURI) {
				t.Errorf("N1: the never uri in the ninth occurrence is not marked")
			}
			assertHidden(t, ct, "N1 "+tt.name)
			for _, v := range views(t, ct) {
				if strings.Contains(v, blob) {
					t.Errorf("N1: a view shows the blob:\n%s", v)
				}
			}
		})
	}
}

// TestNeverCoversPercentEncodedURIs pins S2 for a never uri that the
// bare reading does not take whole (a urn:, mailto: or tag: uri, one
// with a space) written percent-encoded as a whole, as a page's link
// carries another uri in its query: in a text, bare or in a link, and in
// a shown reference's uri. The forms are those common URL encoders
// write (RFC 3986's unreserved set kept; JavaScript's
// encodeURIComponent, which also keeps !*'(); Python's quote, which
// keeps "/"; form encoders, which write a space as "+" and, in PHP and
// Java, "~" as %7E; .NET's, which keep "!*()"), with hex digits in
// either case, and the uri encoded again for a query within a query, up
// to three levels as for a uri with "://". Before, each was shown whole,
// secret and all.
func TestNeverCoversPercentEncodedURIs(t *testing.T) {
	for _, tc := range []struct{ never, shown string }{
		{"urn:vault.example:NEVER-SIG", "urn%3Avault.example%3ANEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "URN%3avault.example%3aNEVER-SIG"},
		{"mailto:ops@x.example?subject=NEVER-SIG/1", "mailto%3Aops%40x.example%3Fsubject%3DNEVER-SIG%2F1"},
		{"mailto:ops@x.example?subject=NEVER-SIG/1", "mailto%3Aops%40x.example%3Fsubject%3DNEVER-SIG/1"},
		{"tag:x.example,2026:NEVER-SIG~(v1)*", "tag%3Ax.example%2C2026%3ANEVER-SIG~%28v1%29%2A"},
		{"tag:x.example,2026:NEVER-SIG~(v1)*", "tag%3Ax.example%2C2026%3ANEVER-SIG~(v1)*"},
		{"tag:x.example,2026:NEVER-SIG~(v1)*", "tag%3Ax.example%2C2026%3ANEVER-SIG%7E%28v1%29%2A"},
		{"tag:x.example,2026:NEVER-SIG~(v1)*", "tag%3Ax.example%2C2026%3ANEVER-SIG%7E%28v1%29*"},
		{"urn:x:NEVER-SIG-\u00e9", "urn%3Ax%3ANEVER-SIG-%C3%A9"},
		{"urn:x:NEVER-SIG a", "urn%3Ax%3ANEVER-SIG%20a"},
		{"urn:x:NEVER-SIG a", "urn%3Ax%3ANEVER-SIG+a"},
		{"https://files.example/a b?sig=NEVER-SIG", "https%3A%2F%2Ffiles.example%2Fa%20b%3Fsig%3DNEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "urn%253Avault.example%253ANEVER-SIG"},     // a query within a query
		{"urn:vault.example:NEVER-SIG", "urn%25253Avault.example%25253ANEVER-SIG"}, // and one more
		{"urn:x:NEVER-SIG a", "urn%253Ax%253ANEVER-SIG%2520a"},
		{"urn:x:NEVER-SIG (1)", "urn%3ax%3aNEVER-SIG+(1)"},                                 // .NET's HttpUtility.UrlEncode
		{"tag:x.example,2026:NEVER-SIG~(v1)", "tag%3Ax.example%2C2026%3ANEVER-SIG%7E(v1)"}, // WebUtility.UrlEncode
		{"tag:x.example,2026:NEVER-SIG~ (v1)", "tag%3Ax.example%2C2026%3ANEVER-SIG~+(v1)"}, // encodeURIComponent, "+" for a space
	} {
		t.Run(tc.shown, func(t *testing.T) {
			never := `{"type":"resource","uri":"` + tc.never + `","disposition":"never"}`
			for _, block := range []string{
				textBlock(t, "see "+tc.shown+" now"),
				textBlock(t, "open https://viewer.example/?src="+tc.shown+"&x=1 to view"),
				`{"type":"resource","uri":"https://viewer.example/?src=` + tc.shown + `"}`,
			} {
				c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
				ct := c.Ingest(t.Context(), raws(never, block), convert.Source{Server: "s", Tool: "t"})
				if !ct.Claims().Never(tc.never) {
					t.Fatalf("the content does not call %q never", tc.never)
				}
				if showsSecret(t, ct) {
					t.Errorf("S2: with %q never, a view shows %q:\n%s", tc.never, tc.shown, ct.History())
				}
			}
		})
	}
}

// TestPercentEncodedNeverPastTheBound pins S2 for the fallback past the
// bound of the spellings the texts are searched for: a never uri left out
// of the search, or only its encoded forms left out, written in a text
// percent-encoded (its colon as "%3A",
// "%253A" one level deeper, a "+" in its scheme as "%2B"), withholds the
// text from there, as the uri written plainly does.
func TestPercentEncodedNeverPastTheBound(t *testing.T) {
	for _, tc := range []struct{ never, shown string }{
		{"urn:vault.example:NEVER-SIG", "urn%3Avault.example%3ANEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "URN%3avault.example%3aNEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "urn%253Avault.example%253ANEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "urn%25253Avault.example%25253ANEVER-SIG"},
		{"urn:vault.example:NEVER-SIG", "urn:vault.example:NEVER-SIG"},
		{"web+vault:x.example:NEVER-SIG", "web%2Bvault%3Ax.example%3ANEVER-SIG"},
		{"web+vault:x.example:NEVER-SIG", "web%252Bvault%253Ax.example%253ANEVER-SIG"},
		{"web+vault:x.example:NEVER-SIG", "web+vault:x.example:NEVER-SIG"},
	} {
		// With 130 others the uri is left out; with 70 only its encoded
		// forms are.
		for _, others := range []int{70, 130} {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
			blocks := append(fillSpellings(others), `{"type":"resource","uri":"`+tc.never+`","disposition":"never"}`,
				textBlock(t, "intro; see https://viewer.example/?src="+tc.shown+" now"))
			ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s"})
			if showsSecret(t, ct) {
				t.Errorf("S2: after %d others, a never uri past the bound of the search, written %q, shows:\n%.300s", others, tc.shown, ct.History())
			}
		}
	}
}

// fillSpellings returns n blocks of never urns, one spelling each and
// three percent-encoded forms (the colon encoded at each depth), which
// fill the bound of the spellings searched for once n passes 128.
func fillSpellings(n int) []string {
	var blocks []string
	for i := range n {
		blocks = append(blocks, `{"type":"resource","uri":"urn:other.example:`+strconv.Itoa(i)+`","disposition":"never"}`)
	}
	return blocks
}

// TestPercentEncodedNeverAtScanEnd pins S2 where the checked part of a
// long text (its first 4 MiB) ends inside a percent-encoded never urn
// left out of the search: the fallback reads on past that end for the
// whole encoded scheme ("urn%3A" is two bytes longer than "urn:"), so the
// urn is withheld from where it starts.
func TestPercentEncodedNeverAtScanEnd(t *testing.T) {
	const urn = "urn:vault.example:NEVER-SIG"
	for _, shown := range []string{urn, "urn%3Avault.example%3ANEVER-SIG", "urn%25253Avault.example%25253ANEVER-SIG"} {
		for back := 1; back <= 8; back++ {
			text := strings.Repeat("a ", 2<<20)[:4<<20-back] + shown + " now"
			blocks := append(fillSpellings(130), `{"type":"resource","uri":"`+urn+`","disposition":"never"}`, textBlock(t, text))
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			if ct := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s"}); showsSecret(t, ct) {
				t.Errorf("S2: %q starting %d bytes before the end of the checked part shows", shown, back)
			}
		}
	}
}

// TestEncodedFormsTakeNoPlaceOfOthers pins the room the percent-encoded
// forms take in the search: only what the other spellings of every uri
// leave. So a content whose uris all fit without them keeps its texts
// whole where they write no encoded form: 70 never urns, and 30 shown
// uris holding a space, each with its encoded forms past the bound,
// withhold no prose that names another urn or a plain link.
func TestEncodedFormsTakeNoPlaceOfOthers(t *testing.T) {
	const prose = "The ISBN is urn:isbn:0451450523; docs at https://docs.example/guide."
	var spaced []string
	for i := range 30 {
		spaced = append(spaced, `{"type":"resource","uri":"https://files.example/my file `+strconv.Itoa(i)+`.txt","name":"f"}`)
	}
	for name, blocks := range map[string][]string{"never urns": fillSpellings(70), "shown spaced uris": spaced} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20, ShowURI: showAll})
		ct := c.Ingest(t.Context(), raws(append(blocks, textBlock(t, prose))...), convert.Source{Server: "s"})
		if h := ct.History(); !strings.Contains(h, prose) {
			t.Errorf("%s: a text that writes none of them was cut:\n%s", name, h[strings.LastIndex(h, "]\n")+2:])
		}
	}
}

// TestEncodedFallbackWithManySchemes pins the proportion of the fallback
// when only percent-encoded forms were left out and the never uris use
// more schemes than are kept one by one: a text or label that writes no
// encoded colon, as every such form does, is shown whole (it was withheld
// whole, provenance included), while one that writes an encoded never
// uri is withheld from there (S2).
func TestEncodedFallbackWithManySchemes(t *testing.T) {
	const prose = "The meeting is at noon; bring the printed agenda."
	for _, schemes := range []int{16, 17} {
		var blocks []string
		for i := range 40 {
			blocks = append(blocks, `{"type":"resource","uri":"s`+strconv.Itoa(i%schemes)+`:other.example:`+strconv.Itoa(i)+`","disposition":"never"}`)
		}
		blocks = append(blocks, `{"type":"resource","uri":"s3:vault.example:NEVER-SIG","disposition":"never"}`)
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
		ct := c.Ingest(t.Context(), raws(append(blocks, textBlock(t, prose), textBlock(t, "see s3%3Avault.example%3ANEVER-SIG now"),
			`{"type":"resource_link","uri":"https://files.example/a","name":"plain report name"}`)...), convert.Source{Server: "s", Tool: "search"})
		h := ct.History()
		if !strings.Contains(h, prose) || !strings.Contains(h, "plain report name") || !strings.Contains(h, "from tool search of s") {
			t.Errorf("%d schemes: a text or label that writes no encoded colon was cut:\n%s", schemes, h[strings.LastIndex(h, "]\n[ref")+2:])
		}
		if showsSecret(t, ct) {
			t.Errorf("%d schemes: the encoded never uri shows", schemes)
		}
	}
}

// TestEncodedNeverPastScan pins S2 past the checked 4 MiB of a text: a
// never uri holding "://" written there percent-encoded, or encoded
// across that end, withholds the rest of the text from there, as its
// plain form does; a text whose part past the end writes none is kept.
func TestEncodedNeverPastScan(t *testing.T) {
	const never = "https://vault.example/a b?sig=NEVER-SIG"
	pad := strings.Repeat("a ", 2<<20)
	for _, text := range []string{
		pad + "tail " + never + " now",
		pad + "tail https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG now",
		pad + "tail https%3A%2F%2Fvault.example%2Fa+b%3Fsig%3DNEVER-SIG now",
		pad[:4<<20-4] + "https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG now",
		pad[:4<<20-12] + "https%253A%252F%252Fvault.example%252Fa%2520b%253Fsig%253DNEVER-SIG now",
	} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+never+`","disposition":"never"}`, textBlock(t, text)), convert.Source{Server: "s"})
		if showsSecret(t, ct) {
			t.Errorf("S2: the never uri written %q past the checked part shows", text[4<<20-16:])
		}
	}
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+never+`","disposition":"never"}`, textBlock(t, pad+"tail 100%25 done")), convert.Source{Server: "s"})
	if h := ct.History(); !strings.HasSuffix(strings.TrimSpace(h), "tail 100%25 done") {
		t.Errorf("a long text writing no separator past the checked part was cut: %q", h[max(0, len(h)-80):])
	}
}

// TestShownURICarryingLeftOutNever pins S2 for a uri a ShowURI policy
// would show that carries, percent-encoded in its query, a never uri
// holding "://" whose spellings did not all fit in the search: it is not
// shown, as a text writing it is withheld from there (before, the stub,
// the push view and the script showed it, secret and all). A shown uri
// that carries none stays shown.
func TestShownURICarryingLeftOutNever(t *testing.T) {
	const never = "https://vault.example/a b?sig=NEVER-SIG"
	const carrier = "https://viewer.example/?src=https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG"
	for _, others := range []int{0, 70, 130} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20, ShowURI: showAll})
		ct := c.Ingest(t.Context(), raws(append(fillSpellings(others),
			`{"type":"resource","uri":"`+never+`","disposition":"never"}`,
			`{"type":"resource_link","uri":"`+carrier+`","name":"n"}`,
			`{"type":"resource_link","uri":"https://docs.example/guide","name":"g"}`)...), convert.Source{Server: "s", Tool: "t"})
		if showsSecret(t, ct) {
			t.Errorf("S2: after %d others, a shown uri carries the never uri:\n%s", others, ct.History())
		}
		if !strings.Contains(ct.History(), "at https://docs.example/guide") {
			t.Errorf("after %d others, a shown uri carrying nothing was withheld:\n%s", others, ct.History())
		}
	}
}

// TestEncodedNeverAcrossScanEnd pins S2 where the checked 4 MiB of a
// text end inside the body of a percent-encoded never uri whose separator
// they hold: the reading saw only its start, so the rest is withheld from
// its scheme, as for a plain uri cut there.
func TestEncodedNeverAcrossScanEnd(t *testing.T) {
	pad := strings.Repeat("a ", 2<<20)
	for _, tc := range []struct{ never, written string }{
		{"https://vault.example/tok?sig=NEVER-SIG", "https%3A%2F%2Fvault.example%2Ftok%3Fsig%3DNEVER-SIG"},
		{"https://vault.example/a b?sig=NEVER-SIG", "https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG"},
		{"https://vault.example/tok?sig=NEVER-SIG", "https://vault.example/tok?sig=NEVER-SIG"},
	} {
		for _, into := range []int{2, 10} { // bytes of "NEVER-SIG"'s run read
			text := pad[:4<<20-strings.Index(tc.written, "NEVER")+into] + tc.written + " now"
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
			ct := c.Ingest(t.Context(), raws(`{"type":"resource","uri":"`+tc.never+`","disposition":"never"}`, textBlock(t, text)), convert.Source{Server: "s"})
			if showsSecret(t, ct) {
				t.Errorf("S2: %q cut by the end of the checked part shows", tc.written)
			}
		}
	}
}

// TestShownCarrierWithoutOwnSeparator pins S2 for a ShowURI uri that
// carries a left-out never uri but has no "://" of its own (a mailto:,
// urn: or web+ uri), or has one only after the encoded one: it is not
// shown either.
func TestShownCarrierWithoutOwnSeparator(t *testing.T) {
	const never = "https://vault.example/a b?sig=NEVER-SIG"
	for _, carrier := range []string{
		"mailto:ops@viewer.example?body=https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG",
		"urn:viewer.example:https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG",
		"mailto:ops@viewer.example?body=https://vault.example/a%20b?sig=NEVER-SIG",
		"web+app:open?u=https%3A%2F%2Fvault.example%2Fa%20b%3Fsig%3DNEVER-SIG&back=https://viewer.example/",
	} {
		for _, others := range []int{70, 130} {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20, ShowURI: showAll})
			ct := c.Ingest(t.Context(), raws(append(fillSpellings(others),
				`{"type":"resource","uri":"`+never+`","disposition":"never"}`,
				`{"type":"resource_link","uri":"`+carrier+`","name":"n"}`)...), convert.Source{Server: "s", Tool: "t"})
			if showsSecret(t, ct) {
				t.Errorf("S2: after %d others, %q is shown", others, carrier)
			}
		}
	}
}

// TestOrdinaryLongLinkKeepsTexts pins the room of the encoded forms: one
// ordinary 4,000-byte link holding a space, in a content with no never
// uri, leaves a text with an encoded redirect link whole (its forms,
// each counted once, fit).
func TestOrdinaryLongLinkKeepsTexts(t *testing.T) {
	const text = "Sign in at https://login.example/?next=https%3A%2F%2Fapp.example%2Fhome then open the report."
	u := "https://files.example/" + strings.Repeat("quarterly report ", 4000/17)
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20})
	ct := c.Ingest(t.Context(), raws(`{"type":"resource_link","uri":"`+u+`","name":"r"}`, textBlock(t, text)), convert.Source{Server: "s", Tool: "t"})
	if h := ct.History(); !strings.Contains(h, text) {
		t.Errorf("the text is cut:\n%s", h[strings.Index(h, "Sign in"):])
	}
}

// TestManySchemesLongProseKeepsTail pins the part past the checked 4 MiB
// when the never uris use more schemes than are listed one by one: a tail
// that writes no colon, raw or encoded, is kept; one that writes a never
// uri is withheld (S2).
func TestManySchemesLongProseKeepsTail(t *testing.T) {
	var blocks []string
	for i := range 40 {
		blocks = append(blocks, `{"type":"resource","uri":"s`+strconv.Itoa(i%17)+`:other.example:`+strconv.Itoa(i)+`","disposition":"never"}`)
	}
	blocks = append(blocks, `{"type":"resource","uri":"s3:vault.example:NEVER-SIG","disposition":"never"}`)
	pad := strings.Repeat("a ", 2<<20)
	for _, tc := range []struct {
		tail string
		kept bool
	}{{"tail of the prose", true}, {"tail s3:vault.example:NEVER-SIG", false}, {"tail s3%3Avault.example%3ANEVER-SIG", false}} {
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		ct := c.Ingest(t.Context(), raws(append(blocks, textBlock(t, pad+tc.tail))...), convert.Source{Server: "s", Tool: "t"})
		if h := ct.History(); strings.Contains(h, tc.tail) != tc.kept || showsSecret(t, ct) {
			t.Errorf("tail %q: kept %v, want %v", tc.tail, strings.Contains(h, tc.tail), tc.kept)
		}
	}
}

// TestPercentFloodsPastTheBound keeps an outside attack on the fallback
// for encoded never schemes: a 4 MiB text of "%25", "%2", "s3%25" or
// "%3a" over and over (each "%" a place the fallback reads), then a never
// uri left out of the search, encoded three times over. The uri is
// withheld, and the floods that write no encoded colon do not cut the
// text before it (S2; about 0.1 s each here).
func TestPercentFloodsPastTheBound(t *testing.T) {
	blocks := append(fillSpellings(130), `{"type":"resource","uri":"s3:vault.example:NEVER-SIG","disposition":"never"}`)
	for _, flood := range []string{"%25", "%2", "s3%25", "%3a"} {
		text := strings.Repeat(flood, (4<<20)/len(flood)-1) + " s3%25253Avault.example%25253ANEVER-SIG"
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		ct := c.Ingest(t.Context(), raws(append(blocks, textBlock(t, text))...), convert.Source{Server: "s"})
		if showsSecret(t, ct) {
			t.Errorf("S2: after a flood of %q, the never uri shows", flood)
		}
		if h := ct.History(); flood != "%3a" && !strings.Contains(h, strings.Repeat(flood, 1000)) {
			t.Errorf("a flood of %q, which writes no encoded colon, was cut at its start", flood)
		}
	}
}

// TestReferenceNestedNever pins N1 for a reference that states its never
// where revision 1 of the RFC put it, in "annotations", or in "_meta":
// RFC-005 moved the disposition to the top level, but a server still
// writing the old place means never, and the host fails closed. A never
// there outweighs a top-level "ref".
func TestReferenceNestedNever(t *testing.T) {
	for _, blk := range []string{
		`{"type":"resource","uri":"` + neverURI + `","name":"a.wav","annotations":{"disposition":"never"}}`,
		`{"type":"resource","uri":"` + neverURI + `","name":"a.wav","_meta":{"disposition":"never"}}`,
		`{"type":"resource","uri":"` + neverURI + `","disposition":"ref","annotations":{"disposition":"never"}}`,
		`{"type":"image","uri":"` + neverURI + `","mimeType":"image/png","_meta":{"disposition":"never"}}`,
		`{"type":"audio","uri":"` + neverURI + `","mimeType":"audio/wav","annotations":{"priority":1,"disposition":"never"}}`,
	} {
		if b := convert.Classify(json.RawMessage(blk)); b.Testimony.Disposition != convert.DispositionNever {
			t.Errorf("%s: read with disposition %q, want never", blk, b.Testimony.Disposition)
		}
		c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
		ct := c.Ingest(t.Context(), raws(blk, `{"type":"text","text":"the take is at `+neverURI+`"}`),
			convert.Source{Server: "s", Lane: convert.LaneToolResult, Tool: "render"})
		assertHidden(t, ct, blk)
	}
	// A nested "ref" changes nothing: the reference keeps the host default.
	b := convert.Classify(json.RawMessage(`{"type":"resource","uri":"https://files.example/a","annotations":{"disposition":"ref"}}`))
	if b.Testimony.Present&convert.FieldDisposition != 0 {
		t.Errorf("a nested ref was read as the block's disposition %q", b.Testimony.Disposition)
	}
}

// ingestTextJSON ingests, under a policy that would show every uri, a
// content of one text holding text as a JSON string and, with ref, a
// plain reference to neverURI after it.
func ingestTextJSON(t *testing.T, text string, ref bool) *convert.Content {
	t.Helper()
	txt, _ := json.Marshal(text)
	blocks := []string{`{"type":"text","text":` + string(txt) + `}`}
	if ref {
		blocks = append(blocks, `{"type":"resource","uri":"`+neverURI+`","name":"x"}`)
	}
	c := mustConverter(t, newRegistry(t), convert.Policy{ShowURI: showAll})
	return c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s", Lane: convert.LaneToolResult, Tool: "render"})
}

// TestTextJSONNestedNever pins N1 and N6 for a reference a server wrote as
// JSON into a text with its never in "annotations" or "_meta": the text
// testifies as the block would, so neither the text nor another block
// naming the uri shows it. A never inside a deeper object, or in an
// annotations object of a sibling, calls no uri of this object never.
func TestTextJSONNestedNever(t *testing.T) {
	for _, obj := range []string{
		`{"type":"resource","uri":"` + neverURI + `","annotations":{"disposition":"never"}}`,
		`{"type":"resource","_meta":{"disposition":"never"},"uri":"` + neverURI + `"}`,
		`[{"type":"resource","uri":"` + neverURI + `","\u0061nnotations":{"priority":1,"disposition":"n\u0065ver"}}]`,
		`{"content":[{"type":"resource","uri":"` + neverURI + `","disposition":"ref","_meta":{"disposition":"never"}}]}`,
	} {
		assertHidden(t, ingestTextJSON(t, obj, true), obj)
	}
	const other = "https://files.example/open.wav"
	for _, obj := range []string{
		`{"uri":"` + other + `","annotations":{"x":{"disposition":"never"}}}`,
		`{"uri":"` + other + `","meta":{"disposition":"never"}}`,
		`[{"uri":"` + other + `"},{"annotations":{"disposition":"never"}}]`,
	} {
		if h := ingestTextJSON(t, obj, false).History(); !strings.Contains(h, other) {
			t.Errorf("%s: the uri no never names is withheld:\n%s", obj, h)
		}
	}
}

// TestTextJSONNestedNeverAtDepthBound pins N1 at the depth the text reader
// stops at: a reference object at the deepest level read whose
// annotations or _meta, one level deeper and so skipped, may say never
// is read as never, since what it says is not known (fails closed).
func TestTextJSONNestedNeverAtDepthBound(t *testing.T) {
	const d = 63 // arrays around the object put it at the deepest level read
	for _, obj := range []string{
		`{"type":"resource","uri":"` + neverURI + `","disposition":"never"}`,
		`{"type":"resource","uri":"` + neverURI + `","annotations":{"disposition":"never"}}`,
		`{"type":"resource","_meta":{"disposition":"never"},"uri":"` + neverURI + `"}`,
		`{"type":"resource","uri":"` + neverURI + `","annotations":{"disposition":"n\u0065ver"}}`,
		`{"type":"resource","uri":"` + neverURI + `","annotations":{"disposition":"never"`, // cut short
	} {
		assertHidden(t, ingestTextJSON(t, strings.Repeat("[", d)+obj+strings.Repeat("]", d), true), obj)
	}
	// Annotations that cannot say never keep the uri shown.
	const other = "https://files.example/open.wav"
	text := strings.Repeat("[", d) + `{"uri":"` + other + `","annotations":{"priority":1}}` + strings.Repeat("]", d)
	if h := ingestTextJSON(t, text, false).History(); !strings.Contains(h, other) {
		t.Errorf("annotations without a never at the depth bound withhold the uri:\n%s", h)
	}
}

// TestTextJSONNestedNeverFloodAtDepthBound is an attack on the depth
// bound's reading of skipped annotations: thousands of references at the
// deepest level read, each with annotations that cannot say never, and
// last one whose annotations say it escaped. Only the last is withheld.
func TestTextJSONNestedNeverFloodAtDepthBound(t *testing.T) {
	const d, n = 63, 5000
	var b strings.Builder
	b.WriteString(strings.Repeat("[", d))
	for k := range n {
		fmt.Fprintf(&b, `{"uri":"https://files.example/open-%d.wav","annotations":{"priority":%d,"audience":["user"]}},`, k, k)
	}
	b.WriteString(`{"uri":"` + neverURI + `","_meta":{"x":[1,2],"disposition":"\u006Eever"}}`)
	b.WriteString(strings.Repeat("]", d))
	// A view bound the whole text fits in, so that no never is withheld
	// for want of room.
	txt, _ := json.Marshal(b.String())
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 1 << 20, ShowURI: showAll})
	ct := c.Ingest(t.Context(), raws(`{"type":"text","text":`+string(txt)+`}`, `{"type":"resource","uri":"`+neverURI+`","name":"x"}`),
		convert.Source{Server: "s", Lane: convert.LaneToolResult, Tool: "render"})
	assertHidden(t, ct, "flood")
	last := fmt.Sprintf("https://files.example/open-%d.wav", n-1)
	if h := ct.History(); !strings.Contains(h, "https://files.example/open-0.wav") || !strings.Contains(h, last) {
		t.Errorf("the references whose annotations cannot say never are withheld (%d bytes of history)", len(h))
	}
}
