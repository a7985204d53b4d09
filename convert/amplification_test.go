package convert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// allocated returns the bytes of heap f allocates, as the runtime counts
// them across the whole process.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSourceCleanedOncePerContent pins L1 and L5 against amplification: a
// tool name of a mebibyte laced with zero-width spaces is cleaned once for
// a content, not once for every stub. With 1,000 references, cleaning it
// per stub allocates a gibibyte; once per content allocates one mebibyte
// plus what the views themselves hold.
func TestSourceCleanedOncePerContent(t *testing.T) {
	const n = 1000
	blocks := referenceBlocks(n)
	c := mustConverter(t, mustRegistry(t, refs.Config{Capacity: 2 * n}), convert.Policy{ViewMax: 1 << 20})
	src := convert.Source{Server: zeroWidthName(1 << 20), Lane: convert.LanePush, Tool: zeroWidthName(1 << 20), Event: zeroWidthName(1 << 20)}
	ct := c.Ingest(t.Context(), blocks, src)
	var views []string
	got := allocated(func() {
		script, _ := json.Marshal(ct.Script())
		views = []string{ct.History(), ct.Wake(), convert.PushJSON(ct.Push()), string(script)}
	})
	var shown uint64
	for _, v := range views {
		shown += uint64(len(v))
	}
	// Three names of 1 MiB each, cleaned once, and a few copies of what
	// the views hold; far below one mebibyte per stub.
	t.Logf("%d stubs under three 1 MiB source names: %d KiB allocated, %d KiB of views", n, got>>10, shown>>10)
	if limit := 3<<20 + 8*shown + 16<<20; got > limit {
		t.Errorf("L5: rendering %d stubs under mebibyte source names allocated %d MiB, over %d MiB: the names are cleaned per stub", n, got>>20, limit>>20)
	}
	if !strings.Contains(views[0], "attachment on push event aaaa") {
		t.Errorf("L1: the cleaned event name is missing from the stub: %.200s", views[0])
	}
}

// countingRegistrar counts the lookups a view makes through it.
type countingRegistrar struct {
	convert.Registrar
	entries int
}

func (r *countingRegistrar) Entry(id string) (convert.Entry, bool) {
	r.entries++
	return r.Registrar.Entry(id)
}

// TestViewsStopAtBound pins S4 against amplification: a view stops
// rendering at its bound. Of 10,000 references, a view under the default
// bound shows a few dozen stubs, so it looks up a few dozen records, not
// all of them (each lookup also counts as showing the record).
func TestViewsStopAtBound(t *testing.T) {
	const n = 10000
	reg := &countingRegistrar{Registrar: mustRegistry(t, refs.Config{Capacity: 2 * n})}
	c := mustConverter(t, reg, convert.Policy{})
	ct := c.Ingest(context.Background(), referenceBlocks(n), convert.Source{Server: "vst", Tool: "vst_render"})
	limit := convert.DefaultViewMax / 40 // no stub is shorter than 40 code units
	for name, view := range map[string]func(){
		"history": func() { _ = ct.History() },
		"wake":    func() { _ = ct.Wake() },
		"push":    func() { _ = ct.Push() },
		"script":  func() { _ = ct.Script() },
	} {
		reg.entries = 0
		view()
		if reg.entries > limit {
			t.Errorf("S4: the %s view looked up %d of %d records under a bound of %d code units; it renders past its bound", name, reg.entries, n, convert.DefaultViewMax)
		}
	}
}

// TestScriptViewBound pins S4 on the script's view: 100,000 references
// give a script view whose JSON stays within the view bound and ends with
// a notice that counts exactly the blocks left out.
func TestScriptViewBound(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	c := mustConverter(t, mustRegistry(t, refs.Config{Capacity: n}), convert.Policy{})
	ct := c.Ingest(t.Context(), referenceBlocks(n), convert.Source{Server: "vst", Tool: "vst_render"})
	items := ct.Script()
	raw, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	if got := utf16Len(string(raw)); got > convert.DefaultViewMax {
		t.Fatalf("S4: the script view of %d references is %d code units, over the bound %d", n, got, convert.DefaultViewMax)
	}
	last := items[len(items)-1]
	left, ok := leftOutCount(last.Text)
	if last.Kind != "notice" || !ok {
		t.Fatalf("S6: a cut script view must end with a notice of what it left out, got %+v", last)
	}
	if shown := len(items) - 1; left != n-shown {
		t.Errorf("S6: the script view shows %d of %d blocks but its notice says %d were left out", shown, n, left)
	}
}

// TestBareReadingsBounded pins L5 against amplification through text: a
// 4 MiB text of uris, each ending in the punctuation that makes the
// reading of bare uris try a dozen and more cuts of it (and twice that for
// a scheme glued to letters), must not make ingesting or a view allocate
// over eight times the text. The uris are short, or as long as a never can
// name with a character at each cut that the canonical form escapes, so
// that each cut costs the most to read. What lies past the readings the
// bound allows is withheld, since it names uris (S2).
func TestBareReadingsBounded(t *testing.T) {
	const marks = ".a,a;a:a!a?a'a*a_a|a(a)a[a]a{a}a&a#a\\a"
	for name, one := range map[string]string{
		"short": "xhttps://h.example/" + strings.Repeat("%41", 60) + strings.Repeat(".a", 16) + " ",
		"long":  "https://h.example/" + strings.Repeat("a", 8000) + marks + strings.Repeat(".a", 17) + " ",
		"upper": "https://H.EXAMPLE/" + strings.Repeat("A", 8000) + marks + " ",
		// Another scheme: its canonical form is the reading itself, made
		// without parsing it.
		"other-scheme":  "sftp://h.example/" + strings.Repeat("a", 14000) + marks + strings.Repeat(".a", 17) + " ",
		"other-unicode": "sftp://h.example/a" + strings.Repeat("\u00e9", 7000) + marks + " ",
		// Slashes escaped three deep: each uri is decoded three times. Its
		// readings, once decoded, are in canonical form and cost little:
		// the whole text is read, and nothing is withheld; so for the
		// other schemes.
		"escaped": "https://h.example/" + strings.Repeat(`a\\\\\\\/`, 1800) + " ",
		// A long percent-encoded uri, once and twice over; references
		// an HTML writer puts for "&", each level's reading decoded.
		"encoded-long":  "https%3A%2F%2Fh.example%2F" + strings.Repeat("%41", 5000) + " ",
		"encoded-twice": "https%253A%252F%252Fh.example%252F" + strings.Repeat("a%2526", 2000) + " ",
		"html-refs":     "https://h.example/" + strings.Repeat("a&amp;", 1500) + marks + " ",
		// Slashes escaped three deep with a reference after each, and
		// encoded uris glued one after another, each with every mark.
		"escaped-refs":        "https://h.example/" + strings.Repeat(`a\\\\\\\/&amp;`, 1200) + " ",
		"encoded-thrice-long": "x%25253A%2F%2F" + strings.Repeat("a", 32765) + " ",
		// Separators encoded once, twice and three times before one run,
		// so three spans overlap on it, with a raw ":" (no stop at "&")
		// or an encoded one; and one raw-colon span over escapes and
		// references.
		"rawcolon-escaped-refs":        "x:%2F%2F" + strings.Repeat(`a\\\\\\\/&amp;`, 1200) + " ",
		"nested-rawcolon-escaped-refs": "x:%2F%2F" + "y:%252F%252F" + "z:%25252F%25252F" + strings.Repeat(`a\\\\\\\/&amp;`, 1200) + " ",
		"nested-rawcolon-refs":         "x:%2F%2F" + "y:%252F%252F" + "z:%25252F%25252F" + strings.Repeat("a&amp;", 2700) + " ",
		"nested-escaped":               "x%3A%2F%2F" + "y%253A%252F%252F" + "z%25253A%25252F%25252F" + strings.Repeat(`a\\\\\\\/`, 1800) + " ",
		"nested-slashes":               "x%3A%2F%2F" + "y%253A%252F%252F" + "z%25253A%25252F%25252F" + strings.Repeat(`a\/`, 5400) + " ",
		"glued-encoded-long":           "x%3A%2F%2F" + strings.Repeat("p", 900) + ".a,b;c:d!e?f*g_h|i(j)k[l]m{n}o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e",
	} {
		cheap := name == "escaped" || strings.HasPrefix(name, "other-")
		t.Run(name, func(t *testing.T) {
			per := (4 << 20) / len(one)
			bareReadingsBounded(t, one, !cheap, 1, 45, per)
		})
	}
	// Very short uris, each with a reading that must be parsed (a host
	// without a path; a host in brackets), in one text and in 45: the
	// bare uris a content keeps are bounded between its texts, and each
	// parse counts for more than its bytes. (In texts of one uri each,
	// the blocks themselves cost more than eight times their text.)
	for name, one := range map[string]string{
		"tiny-host": "https://h.ex/a ",
		"tiny-ipv6": "https://[::1]/a ",
		// Percent-encoded: short, and glued, each running on to the
		// next separator.
		"tiny-encoded":  "x%3A%2F%2Fh.ex%2Fa ",
		"glued-encoded": "a%3A%2F%2Fb",
		// Short uris with a cut at every other byte, ended by a quote, a
		// line's end or a space after several kinds of mark: each is
		// read with some twenty readings that need no parsing, so only
		// the count of readings bounds them.
		"quote-ended": `https://a.b/c.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a"`,
		"line-ended":  "https://a.b/c/d/e/f.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a\n",
		"mixed-marks": "https://a.b/c/d.e_f-g~h.a.a.a.a.a.a.a.a.a.a.a.a.a.a ",
	} {
		t.Run(name, func(t *testing.T) { bareReadingsBounded(t, one, true, 1, 45) })
	}
}

// eightTimes is the most the amplification tests let ingesting or one
// view allocate for size bytes of text: eight times as much, or no bound
// under the race detector, whose own allocations the runtime counts too
// (.ci/run runs these tests once more without it).
func eightTimes(size int) uint64 {
	if raceEnabled {
		return math.MaxUint64
	}
	return uint64(8 * size)
}

// ingestSpread ingests about 4 MiB of the text one, repeated, spread
// evenly over texts text blocks, each opening with prefix, and then the
// blocks extra; it checks that ingesting allocated no more than eight
// times the texts, and returns the content and the texts' size.
func ingestSpread(t *testing.T, prefix, one string, texts int, extra ...string) (*convert.Content, int) {
	t.Helper()
	per := (4 << 20) / len(one)
	var blocks []string
	size := 0
	for i := range texts {
		// The uris are spread evenly, so the texts hold all of them.
		text := prefix + strings.Repeat(one, per/texts+min(1, max(0, per%texts-i)))
		blocks = append(blocks, textBlock(t, text))
		size += len(text)
	}
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 8 << 20})
	blk := raws(append(blocks, extra...)...)
	var ct *convert.Content
	got := allocated(func() { ct = c.Ingest(t.Context(), blk, convert.Source{Server: "s", Tool: "t"}) })
	t.Logf("ingesting %d KiB in %d texts allocated %d KiB", size>>10, texts, got>>10)
	// Decoding the texts alone allocates them once; texts of plain short
	// uris take about three times their size in all.
	if limit := eightTimes(size); got > limit {
		t.Errorf("L5: ingesting %d KiB of text in %d texts allocated %d KiB, over eight times the text", size>>10, texts, got>>10)
	}
	return ct, size
}

// bareReadingsBounded ingests and views 4 MiB of the text one, repeated,
// as each number of texts in counts (one text; 45, each of which alone
// would stay under a bound per text; one uri each); bounded says the
// readings' bound is met, so that the rest of the text must be withheld.
func bareReadingsBounded(t *testing.T, one string, bounded bool, counts ...int) {
	for _, texts := range counts {
		ct, size := ingestSpread(t, "", one, texts)
		var h string
		got := allocated(func() { h = ct.History() })
		if limit := eightTimes(size); got > limit {
			t.Errorf("L5: one view of %d KiB of text in %d texts allocated %d KiB, over eight times the text", size>>10, texts, got>>10)
		}
		if withheld := strings.Contains(h, "[the rest of this text is withheld"); bounded && !withheld {
			t.Errorf("S2: the part past the bound of readings is shown (%d texts, view %d bytes)", texts, len(h))
		} else if !bounded && withheld {
			t.Errorf("a text within the bound of readings lost its rest (%d texts, view %d bytes)", texts, len(h))
		}
	}
}

// TestOrdinaryListingsShownWhole pins the other side of the readings bound
// (S2 only where needed): a tool's JSON listing of thousands of ordinary
// links, as Go's encoder writes it, and a short text after it, show whole
// when the host's view bound lets them; no uri in them is withheld.
func TestOrdinaryListingsShownWhole(t *testing.T) {
	const n = 4000
	listing := linkListing(t, n, func(i int) string {
		return "https://docs.example.com/guides/getting_started/page_" + strconv.Itoa(i) + ".html?utm_source=search&utm_medium=tool"
	})
	const later = "Full docs: https://docs.example.com/help"
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	ct := c.Ingest(t.Context(), raws(textBlock(t, listing), textBlock(t, later)), convert.Source{Server: "s"})
	if h := ct.History(); strings.Contains(h, "withheld") || !strings.Contains(h, later) {
		t.Errorf("a listing of %d ordinary links (%d KiB) lost part of itself or of the text after it", n, len(listing)>>10)
	}
}

// linkListing is a tool's JSON listing of n links, titled and with the
// uri url(i) each, as Go's encoder writes it (& as \u0026).
func linkListing(t *testing.T, n int, url func(i int) string) string {
	t.Helper()
	type item struct {
		Title string `json:"title"`
		URL   string `json:"url"`
	}
	items := make([]item, n)
	for i := range items {
		items[i] = item{"Result " + strconv.Itoa(i), url(i)}
	}
	listing, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return string(listing)
}

// TestPresignedListingShownWhole pins the same for long presigned links
// (about 750 bytes each, a session token in the query), as Go's encoder
// writes them, "&" as \u0026: each reading past the first escape used to
// be given a canonical form of its own, parsed at some fifteen times its
// length, and the bound then withheld the rest after 1,490 links, or 357
// while it counted bytes. A reading with an escape now counts as what it
// decodes to.
func TestPresignedListingShownWhole(t *testing.T) {
	type item struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	items := make([]item, 3000)
	for i := range items {
		items[i] = item{fmt.Sprintf("report-%04d.csv", i), fmt.Sprintf(
			"https://my-bucket.s3.us-east-1.amazonaws.com/exports/2026/12/report-%04d.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"+
				"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%%2F20261201%%2Fus-east-1%%2Fs3%%2Faws4_request&X-Amz-Date=20261201T000000Z"+
				"&X-Amz-Expires=3600&X-Amz-Security-Token=%s&X-Amz-SignedHeaders=host&X-Amz-Signature=%s",
			i, strings.Repeat("IQoJb3JpZ2luX2VjEJr", 20), strings.Repeat("0123456789abcdef", 4))}
	}
	listing, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	const later = "Full docs: https://docs.example.com/help"
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
	blk := raws(textBlock(t, string(listing)), textBlock(t, later))
	var ct *convert.Content
	got := allocated(func() { ct = c.Ingest(t.Context(), blk, convert.Source{Server: "s"}) })
	if h := ct.History(); strings.Contains(h, "withheld") || !strings.Contains(h, later) {
		t.Errorf("a listing of %d presigned links (%d KiB) lost part of itself or of the text after it", len(items), len(listing)>>10)
	}
	if limit := uint64(16 * len(listing)); got > limit {
		t.Errorf("L5: ingesting a listing of %d KiB allocated %d KiB, over sixteen times the listing", len(listing)>>10, got>>10)
	}
}

// TestOtherSchemeListingsShownWhole pins the same for uris of other
// schemes than http and https (object-store paths), one to a line and as
// Go's encoder writes them: their canonical form is made without parsing
// them, and costs the bound nothing.
func TestOtherSchemeListingsShownWhole(t *testing.T) {
	var lines strings.Builder
	type item struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	items := make([]item, 8000)
	for i := range items {
		fmt.Fprintf(&lines, "gs://analytics-prod-exports/events/dt=2026-12-01/hour=07/part-%05d-c000.snappy.parquet\n", i)
		items[i] = item{fmt.Sprintf("report_%04d", i), fmt.Sprintf("s3://my-bucket/exports/2026/12/report_%04d.final.csv", i)}
	}
	listing, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"lines": lines.String(), "json": string(listing)} {
		const later = "Full docs: https://docs.example.com/help"
		c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 16 << 20})
		ct := c.Ingest(t.Context(), raws(textBlock(t, text), textBlock(t, later)), convert.Source{Server: "s"})
		if h := ct.History(); strings.Contains(h, "withheld") || !strings.Contains(h, later) {
			t.Errorf("%s: a listing of %d KiB of other schemes' uris lost part of itself or of the text after it", name, len(text)>>10)
		}
	}
}

// TestManyTextsOfLinksShownWhole pins the ordinary side of the bound the
// texts of a content share: ten texts of 1,500 links each, with hosts a
// cut at the first dot shortens to a host alone ("https://github"), show
// whole.
func TestManyTextsOfLinksShownWhole(t *testing.T) {
	var blocks []string
	for i := range 10 {
		blocks = append(blocks, textBlock(t, linkListing(t, 1500, func(j int) string {
			return fmt.Sprintf("https://github.com/example-org/repo-%d/blob/main/pkg_%d/file.go#L%d", i, j, j+1)
		})))
	}
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 32 << 20})
	if h := c.Ingest(t.Context(), raws(blocks...), convert.Source{Server: "s"}).History(); strings.Contains(h, "withheld") {
		t.Errorf("ten texts of 1,500 ordinary links each lost part of themselves")
	}
}

// resourceListing is a tool's JSON listing of n ordinary resources as "uri"
// members, as Go's encoder writes it (& as \u0026).
func resourceListing(t testing.TB, n int) string {
	type item struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MimeType string `json:"mimeType"`
	}
	items := make([]item, n)
	for i := range items {
		items[i] = item{
			URI:      "https://files.example.com/projects/q1_2024/reports/report_" + strconv.Itoa(i) + ".final.v2.pdf?version=3&format=a4",
			Name:     "report_" + strconv.Itoa(i) + ".final.v2.pdf",
			MimeType: "application/pdf",
		}
	}
	b, err := json.Marshal(map[string]any{"resources": items})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResourceListingShownWhole pins L5 and the other side of S2 for
// "uri" members: a listing of 10,000 ordinary resources shows whole and
// unchanged under a large view bound, and ingesting 5,000 of them costs a
// few allocations per uri, not dozens.
func TestResourceListingShownWhole(t *testing.T) {
	text := resourceListing(t, 10000)
	c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 64 << 20})
	if h := c.Ingest(t.Context(), raws(textBlock(t, text)), convert.Source{Server: "s", Tool: "t"}).History(); !strings.Contains(h, text) {
		t.Errorf("a listing of 10,000 ordinary uri members (%d KiB) is not shown whole and unchanged", len(text)>>10)
	}
	block := raws(textBlock(t, resourceListing(t, 5000)))
	allocs := testing.AllocsPerRun(3, func() { c.Ingest(t.Context(), block, convert.Source{Server: "s", Tool: "t"}) })
	if allocs > 10*5000 {
		t.Errorf("L5: ingesting 5,000 ordinary uri members made %.1f allocations per uri", allocs/5000)
	}
}

// TestLongBareURIWithoutCut pins that a bare uri longer than the part of
// it that is decoded, with no place to cut it within that part, is read
// without failing: such a text (a scheme, "://" and a long run of base64)
// once made Ingest panic.
func TestLongBareURIWithoutCut(t *testing.T) {
	for name, text := range map[string]string{
		"letters":  "a://" + strings.Repeat("b", 262141),
		"base64":   "http://localhost/" + strings.Repeat("QUJDRA+/", 40000),
		"escaped":  `https:\/\/h.example\/` + strings.Repeat("b", 300000),
		"gs-blob":  "gs://bucket/SECRET" + strings.Repeat("QUJD", 80000),
		"two-runs": "a://" + strings.Repeat("b", 262141) + " https://h.example/x",
	} {
		t.Run(name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 8 << 20})
			ct := c.Ingest(t.Context(), raws(textBlock(t, text)), convert.Source{Server: "s"})
			if h := ct.History(); len(h) < len(text) || strings.Contains(h, "withheld") {
				t.Errorf("the view of a %d-byte text naming no never uri is %d bytes, or withholds part of it", len(text), len(h))
			}
		})
	}
}

// TestTextSpansBoundedPerContent pins L5 for the spans a content's texts
// get besides their bare uris: the "uri" members of their JSON, and the
// places where they write out a uri that a block names in a spelling the
// bare reading splits. Each text used to have a bound of its own, so a
// content of many texts held that bound as many times: 256 texts of
// spaces beside a reference to " " made ingesting allocate over a
// thousand times the text, for seconds. Ingesting 4 MiB of such text in
// one text or in 64, and each view of it, must stay within eight times
// the text, and a never uri must show nowhere (N1).
func TestTextSpansBoundedPerContent(t *testing.T) {
	const never = "https://h.ex/a b"
	for _, tc := range []struct {
		name, prefix, one string
		extra             []string
	}{
		{"uri-members", "[", `{"uri":"https://h.ex/a"},`, nil},
		{"uri-members-parsed", "[", `{"uri":"HTTP://H.EX/A"},`, nil},
		{"uri-members-empty", "[", `{"uri":""},`, nil},
		{"literal-space", "", " ", []string{`{"type":"resource_link","uri":" ","name":"n"}`}},
		{"literal-never", "", never + " ", []string{jsonText(`[{"uri":"` + never + `","disposition":"never"}]`)}},
		// A uri without "://", in other letter case.
		{"literal-urn", "", "U:a ", []string{`{"type":"resource","uri":"u:a","disposition":"never"}`}},
		// Both: members to parse, and places of a plain uri without "://".
		{"literal-urn-members", "[", `{"uri":"HTTP://H.EX/A","i":"U:A"},`, []string{`{"type":"resource_link","uri":"u:a","name":"n"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, texts := range []int{1, 64} {
				ct, size := ingestSpread(t, tc.prefix, tc.one, texts, tc.extra...)
				var h string
				var push []convert.ModelBlock
				if got := allocated(func() { h = ct.History() }); got > eightTimes(size) {
					t.Errorf("L5: the history view of %d KiB of text in %d texts allocated %d KiB, over eight times the text", size>>10, texts, got>>10)
				}
				// The push view's blocks; writing them as JSON costs what
				// escaping the text costs, whatever the reading did.
				if got := allocated(func() { push = ct.Push() }); got > eightTimes(size) {
					t.Errorf("L5: the push view of %d KiB of text in %d texts allocated %d KiB, over eight times the text", size>>10, texts, got>>10)
				}
				if p := convert.PushJSON(push); strings.Contains(h, never) || strings.Contains(p, never) {
					t.Errorf("N1: a view of %d texts shows the never uri", texts)
				}
			}
		})
	}
}

// TestLiteralSpellingsBounded pins L5 for the spellings of the uris a
// content names that the bare reading does not take whole: a uri linked
// again, or in another letter case, is spelled once. 3,000 links to
// letter-case twins of a 4 KiB urn beside a short text took 74 times the
// content to ingest, and 3,000 links to the same urn 43 times.
func TestLiteralSpellingsBounded(t *testing.T) {
	long := "urn:vault.example:" + strings.Repeat("a/b\u00e9=", 660)
	link := func(u string) string { return `{"type":"resource_link","uri":"` + u + `","name":"n"}` }
	// A uri of characters each URL encoder writes its own way has a
	// dozen percent-encoded forms, up to seven times its length.
	apart := "urn:vault.example:" + strings.Repeat("~!*'() /\u00e9", 360)
	for name, uris := range map[string][]string{
		"twins":          caseTwins(long, 3000, len("urn:")),
		"repeated":       slices.Repeat([]string{long}, 3000),
		"encoders-apart": caseTwins(apart, 30, len("urn:")),
	} {
		t.Run(name, func(t *testing.T) {
			var blocks []string
			for _, u := range uris {
				blocks = append(blocks, link(u))
			}
			blk := raws(append(blocks, textBlock(t, "see the attached takes"))...)
			size := 0
			for _, b := range blk {
				size += len(b)
			}
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 8 << 20})
			got := allocated(func() { c.Ingest(t.Context(), blk, convert.Source{Server: "s", Tool: "t"}) })
			t.Logf("ingesting %d KiB of blocks allocated %d KiB", size>>10, got>>10)
			if got > eightTimes(size) {
				t.Errorf("L5: ingesting %d KiB of links allocated %d KiB, over eight times the content", size>>10, got>>10)
			}
		})
	}
}

// TestNeverNestBounded pins L5 for members that objects nested as one
// another's "resource" call never: each is decoded at most once, and only
// while the count of nevers lasts, and a uri called never many times is
// canonicalized once. 4 MiB of escaped members 64 levels deep made
// ingesting allocate over a thousand times the text, and 256 copies of a
// long uri 64 levels deep thousands of times.
func TestNeverNestBounded(t *testing.T) {
	long := "https://a.example/ " + strings.Repeat("\u00e9", 4000)
	escaped := strings.Repeat(`"uri":"\/",`, (4<<20)/12)
	for name, text := range map[string]string{
		"escaped-members": neverNest(64, escaped+`"x":1`),
		"long-copies":     neverNest(64, strings.TrimSuffix(strings.Repeat(`"uri":"`+long+`",`, 256), ",")),
		// The never after the members, so that they wait for it.
		"never-last": strings.Repeat(`{"resource":`, 63) + "{" + escaped + `"disposition":"never"}` +
			strings.Repeat(`,"disposition":"never"}`, 63),
	} {
		t.Run(name, func(t *testing.T) {
			c := mustConverter(t, newRegistry(t), convert.Policy{ViewMax: 8 << 20})
			blk := raws(textBlock(t, text))
			got := allocated(func() { c.Ingest(t.Context(), blk, convert.Source{Server: "s", Tool: "t"}) })
			t.Logf("ingesting %d KiB allocated %d KiB", len(text)>>10, got>>10)
			if got > eightTimes(len(text)) {
				t.Errorf("L5: ingesting %d KiB of nested never objects allocated %d KiB, over eight times the text", len(text)>>10, got>>10)
			}
		})
	}
}
