package refs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcplrefs/refcore/internal/logtest"
	"github.com/mcplrefs/refcore/internal/uriform"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// secretURI carries a bearer credential in its query; it must never reach
// a log line (O1).
const secretURI = "https://files.example/take.wav?token=secret"

// withAttr returns the lines whose attribute key equals value.
func withAttr(lines []map[string]any, key, value string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if v, ok := l[key].(string); ok && v == value {
			out = append(out, l)
		}
	}
	return out
}

// fakeRemover records the paths it was asked to remove.
type fakeRemover struct {
	mu    sync.Mutex
	paths []string
	err   error
}

func (f *fakeRemover) Remove(_ context.Context, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths = append(f.paths, path)
	return f.err
}

func (f *fakeRemover) removed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func never(server string, t convert.Testimony) convert.Registration {
	return convert.Registration{Testimony: t, Server: server, Never: true}
}

func TestMarks(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		steps        func(g *refs.Registry) convert.Entry
		wantNever    bool
		wantBy       string
		wantServers  []string
	}{
		{
			name:        "server-never",
			reason:      "a server's never marks the record it registers (N1)",
			steps:       func(g *refs.Registry) convert.Entry { return g.Register(ctx, never("vst", plain(secretURI))) },
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:        "serverless-never",
			reason:      "a never in serverless content marks nothing (N4)",
			steps:       func(g *refs.Registry) convert.Entry { return g.Register(ctx, never("", plain(secretURI))) },
			wantNever:   false,
			wantServers: nil,
		},
		{
			name:   "serverless-never-on-server-record",
			reason: "a serverless never does not mark a record a server bound either (N4)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, from("vst", plain(secretURI)))
				return g.Register(ctx, never("", plain(secretURI)))
			},
			wantNever:   false,
			wantServers: []string{"vst"},
		},
		{
			name:   "plain-after-never-same-server",
			reason: "a later plain delivery from the marking server does not lift the mark (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, never("vst", plain(secretURI)))
				return g.Register(ctx, from("vst", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "plain-after-never-other-server",
			reason: "another server cannot expand what a server vetoed (N1, §3.1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, never("vst", plain(secretURI)))
				return g.Register(ctx, from("mail", convert.Testimony{URI: secretURI, Disposition: convert.DispositionRef, Present: convert.FieldURI | convert.FieldDisposition}))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst", "mail"},
		},
		{
			name:   "plain-after-never-serverless",
			reason: "serverless content cannot lift a mark (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, never("vst", plain(secretURI)))
				return g.Register(ctx, from("", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "never-after-plain",
			reason: "the first never for a uri marks the record a plain delivery made (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, from("vst", plain(secretURI)))
				return g.Register(ctx, never("mail", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "mail",
			wantServers: []string{"vst", "mail"},
		},
		{
			name:   "second-never-keeps-first-marker",
			reason: "the record names the server whose never made the first mark (N1, N5)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, never("vst", plain(secretURI)))
				return g.Register(ctx, never("mail", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst", "mail"},
		},
		{
			name: "mark-never-unknown-uri",
			reason: "a never on a block that makes no stub creates a marked record bound to " +
				"that server (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				e, _ := g.MarkNever(ctx, secretURI, "vst")
				return e
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "mark-never-existing-serverless-record",
			reason: "MarkNever binds the server to a record serverless content made (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, from("", plain(secretURI)))
				e, _ := g.MarkNever(ctx, secretURI, "vst")
				return e
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "mark-never-respelled",
			reason: "a never on another spelling marks the same record (N8)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(ctx, from("vst", plain(secretURI)))
				e, _ := g.MarkNever(ctx, "HTTPS://FILES.EXAMPLE:443/take.wav?token=secret", "vst")
				return e
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			g := newReg(t, refs.Config{Logger: logs.Logger()})
			e := tt.steps(g)
			if e.Never != tt.wantNever {
				t.Errorf("N1: entry Never = %t, want %t (%s)", e.Never, tt.wantNever, tt.reason)
			}
			rec := mustLookup(t, g, e.ID, "N1")
			if rec.Never != tt.wantNever || rec.NeverBy != tt.wantBy {
				t.Errorf("N1: record Never, NeverBy = %t, %q; want %t, %q (%s)", rec.Never, rec.NeverBy, tt.wantNever, tt.wantBy, tt.reason)
			}
			if diff := cmp.Diff(tt.wantServers, rec.Servers); diff != "" {
				t.Errorf("N1: servers (-want +got) (%s):\n%s", tt.reason, diff)
			}
			for _, spelling := range []string{secretURI, " HTTPS://files.example/take.wav?token=secret"} {
				if got := g.Marked(ctx, spelling); got != tt.wantNever {
					t.Errorf("N1/N8: Marked(%+q) = %t, want %t (%s)", spelling, got, tt.wantNever, tt.reason)
				}
				if got := g.MarkedHere(spelling); got != tt.wantNever {
					t.Errorf("N1/N8: MarkedHere(%+q) = %t, want %t (%s)", spelling, got, tt.wantNever, tt.reason)
				}
			}
			if g.Len() != 1 {
				t.Errorf("N1/R2: Len = %d, want one record", g.Len())
			}
			if strings.Contains(logs.String(), "secret") {
				t.Errorf("O1/N5: a log line carries the uri's query:\n%s", logs.String())
			}
		})
	}
}

func TestMarkNeverWithoutServer(t *testing.T) {
	ctx := t.Context()
	g := newReg(t, refs.Config{})
	if e, ok := g.MarkNever(ctx, secretURI, ""); ok || e != (convert.Entry{}) {
		t.Errorf("N4: MarkNever with no server = %+v, %t; want nothing marked", e, ok)
	}
	if g.Len() != 0 || g.Marked(ctx, secretURI) || g.MarkedHere(secretURI) {
		t.Errorf("N4: serverless MarkNever created or marked a record (Len %d)", g.Len())
	}
}

func TestFirstMarkWithdrawsSavedCopy(t *testing.T) {
	ctx := t.Context()
	const path = "store/ref_copy.wav"
	tests := []struct {
		name, reason string
		remover      *fakeRemover // nil: no Remover configured
		mark         func(g *refs.Registry)
		wantRemoved  []string
		wantPathLog  bool
	}{
		{
			name:        "register-never-removes",
			reason:      "the first mark forgets the copy and the Remover deletes it (N3)",
			remover:     &fakeRemover{},
			mark:        func(g *refs.Registry) { g.Register(ctx, never("vst", plain(secretURI))) },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:        "mark-never-removes",
			reason:      "MarkNever is a first mark like any other (N1, N3)",
			remover:     &fakeRemover{},
			mark:        func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:        "no-remover-logs-path",
			reason:      "without a Remover the copy is forgotten and the log says where it stays (N3)",
			mark:        func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
			wantPathLog: true,
		},
		{
			name:        "remover-fails",
			reason:      "a failed removal is logged with the path, and the copy is still forgotten (N3)",
			remover:     &fakeRemover{err: errors.New("disk says no")},
			mark:        func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:    "repeated-marks-act-once",
			reason:  "only the first mark withdraws and logs (N3, N5)",
			remover: &fakeRemover{},
			mark: func(g *refs.Registry) {
				g.Register(ctx, never("vst", plain(secretURI)))
				g.MarkNever(ctx, secretURI, "vst")
				g.Register(ctx, never("mail", plain(secretURI)))
				g.MarkNever(ctx, secretURI, "mail")
			},
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:    "serverless-never-keeps-copy",
			reason:  "a serverless never marks nothing, so the copy stays named (N4)",
			remover: &fakeRemover{},
			mark:    func(g *refs.Registry) { g.Register(ctx, never("", plain(secretURI))) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			cfg := refs.Config{Logger: logs.Logger()}
			if tt.remover != nil {
				cfg.Remover = tt.remover
			}
			g := newReg(t, cfg)
			id := g.Register(ctx, from("vst", plain(secretURI))).ID
			if err := g.Save(id, convert.Copy{Path: path, Bytes: 9, MimeType: "audio/wav"}, plain(secretURI)); err != nil {
				t.Fatalf("setup: Save = %v", err)
			}
			tt.mark(g)

			marked := tt.wantRemoved != nil || tt.wantPathLog
			rec := mustLookup(t, g, id, "N3")
			if marked && rec.Copy != nil {
				t.Errorf("N3: the marked record still names its copy %+v (%s)", rec.Copy, tt.reason)
			}
			if !marked && rec.Copy == nil {
				t.Errorf("N3: the copy was forgotten without a mark (%s)", tt.reason)
			}
			e, _ := g.Entry(id)
			if marked && e.Copy != nil {
				t.Errorf("N3: the entry still carries verified facts %+v (%s)", e.Copy, tt.reason)
			}
			if tt.remover != nil {
				if diff := cmp.Diff(tt.wantRemoved, tt.remover.removed()); diff != "" {
					t.Errorf("N3: Remover calls (-want +got) (%s):\n%s", tt.reason, diff)
				}
			}

			lines := logs.Lines(t)
			markLines := withAttr(lines, "ref", id)
			markLines = withAttrPresent(markLines, "server")
			wantMarkLines := 0
			if marked {
				wantMarkLines = 1
			}
			if len(markLines) != wantMarkLines {
				t.Errorf("N5: %d log lines name the marking server, want %d (%s):\n%s", len(markLines), wantMarkLines, tt.reason, logs.String())
			}
			for _, l := range markLines {
				if l["server"] != "vst" {
					t.Errorf("N5: mark line names server %v, want \"vst\":\n%v", l["server"], l)
				}
			}
			pathLines := withAttr(withAttr(lines, "ref", id), "path", path)
			if got := len(pathLines) > 0; got != tt.wantPathLog {
				t.Errorf("N3: a log line names the copy's path = %t, want %t (%s):\n%s", got, tt.wantPathLog, tt.reason, logs.String())
			}
			if strings.Contains(logs.String(), "secret") {
				t.Errorf("O1: a log line carries the uri's query:\n%s", logs.String())
			}
			if marked {
				if err := g.Save(id, convert.Copy{Path: "store/again.wav"}, plain(secretURI)); !errors.Is(err, refs.ErrMarked) {
					t.Errorf("N1/F18: Save after the mark = %v, want ErrMarked", err)
				}
			}
		})
	}
}

func withAttrPresent(lines []map[string]any, key string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if _, ok := l[key]; ok {
			out = append(out, l)
		}
	}
	return out
}

func TestMarkLogNamesBoundServers(t *testing.T) {
	ctx := t.Context()
	var logs logtest.Buffer
	g := newReg(t, refs.Config{Logger: logs.Logger()})
	g.Register(ctx, from("", plain(secretURI)))
	g.Register(ctx, from("mail", plain(secretURI)))
	e := g.Register(ctx, never("vst", plain(secretURI)))
	lines := withAttrPresent(withAttr(logs.Lines(t), "ref", e.ID), "server")
	if len(lines) != 1 {
		t.Fatalf("N5: %d mark lines, want 1:\n%s", len(lines), logs.String())
	}
	all, _ := json.Marshal(lines[0])
	for _, s := range []string{"vst", "mail"} {
		if !strings.Contains(string(all), s) {
			t.Errorf("N5: the mark line does not name bound server %q: %s", s, all)
		}
	}
	if strings.Contains(logs.String(), "secret") || strings.Contains(logs.String(), "take.wav") {
		t.Errorf("O1: a log line carries the uri:\n%s", logs.String())
	}
}

func TestMarkSurvivesEviction(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		mark         func(g *refs.Registry)
		again        convert.Registration
	}{
		{
			name:   "register-never-then-plain",
			reason: "a plain delivery after eviction meets the remembered mark (N7)",
			mark:   func(g *refs.Registry) { g.Register(ctx, never("vst", plain(secretURI))) },
			again:  from("vst", plain(secretURI)),
		},
		{
			name:   "mark-never-then-serverless",
			reason: "serverless content after eviction meets the remembered mark (N4, N7)",
			mark:   func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
			again:  from("", plain(secretURI)),
		},
		{
			name:   "respelled",
			reason: "another spelling after eviction meets the remembered mark (N7, N8)",
			mark:   func(g *refs.Registry) { g.MarkNever(ctx, secretURI, "vst") },
			again:  from("mail", plain("HTTPS://files.example:443/take.wav?token=secret")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			g := newReg(t, refs.Config{Capacity: 2, Logger: logs.Logger()})
			tt.mark(g)
			old, _ := g.ByURI(secretURI)
			g.Register(ctx, from("vst", plain(uriN(1))))
			g.Register(ctx, from("vst", plain(uriN(2))))
			if _, ok := g.Lookup(old.ID); ok {
				t.Fatalf("setup: the marked record was not evicted")
			}
			if !g.Marked(ctx, secretURI) {
				t.Errorf("N7: Marked(uri) = false once its record was evicted (%s)", tt.reason)
			}
			if !g.MarkedHere(secretURI) {
				t.Errorf("N7: MarkedHere(uri) = false once its record was evicted: the registry's memory lost the mark (%s)", tt.reason)
			}
			e := g.Register(ctx, tt.again)
			if e.ID == old.ID {
				t.Errorf("R1: the new record reused the evicted id %q", e.ID)
			}
			if !e.Never {
				t.Errorf("N7: the uri's new record is not marked (%s)", tt.reason)
			}
			if rec := mustLookup(t, g, e.ID, "N7"); !rec.Never {
				t.Errorf("N7: the uri's new record reads unmarked (%s)", tt.reason)
			}
			if err := g.Save(e.ID, convert.Copy{Path: "store/x.wav"}, plain(secretURI)); !errors.Is(err, refs.ErrMarked) {
				t.Errorf("N7/F18: Save on the new record = %v, want ErrMarked (%s)", err, tt.reason)
			}
			if strings.Contains(logs.String(), "secret") {
				t.Errorf("O1: a log line carries the uri's query:\n%s", logs.String())
			}
		})
	}
}

func TestMarkOutlivesRestartWithSharedStore(t *testing.T) {
	ctx := t.Context()
	store := refs.NewMemoryMarks(0)
	before := newReg(t, refs.Config{Marks: store})
	before.MarkNever(ctx, secretURI, "vst")

	// A registry built later over the same store stands for a host restarted
	// with a durable mark store.
	after := newReg(t, refs.Config{Marks: store})
	// MarkedHere asks only the registry's own memory, which a restart
	// starts empty.
	if after.MarkedHere(secretURI) {
		t.Errorf("N7: MarkedHere asked the mark store; it is documented to read memory only")
	}
	if !after.Marked(ctx, secretURI) {
		t.Errorf("N7: a fresh registry over the same store does not see the mark")
	}
	e := after.Register(ctx, from("vst", plain(secretURI)))
	if !e.Never {
		t.Errorf("N7: a record registered after the restart is not marked")
	}
	if rec := mustLookup(t, after, e.ID, "N7"); !rec.Never || rec.NeverBy != "" {
		t.Errorf("N7: record Never, NeverBy = %t, %q; want true, \"\" for a mark that came from the store", rec.Never, rec.NeverBy)
	}
	if !after.MarkedHere(secretURI) {
		t.Errorf("N7: the record the store marked reads unmarked to MarkedHere")
	}
	if e := after.Register(ctx, from("vst", plain(uriN(1)))); e.Never {
		t.Errorf("N7: an unrelated uri came out marked")
	}
}

// mark is one call of MemoryMarks.Mark.
type mark struct{ Key, Server string }

func TestMemoryMarksBound(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		bound        int
		marks        []mark
		want         map[string]bool
	}{
		{
			name:   "drops-oldest",
			reason: "past a server's bound the store drops that server's oldest mark first (N7)",
			bound:  2,
			marks:  []mark{{"a", "srv"}, {"b", "srv"}, {"c", "srv"}},
			want:   map[string]bool{"a": false, "b": true, "c": true},
		},
		{
			name:   "re-mark-keeps-age",
			reason: "marking a marked key again neither duplicates it nor makes it younger",
			bound:  2,
			marks:  []mark{{"a", "srv"}, {"b", "srv"}, {"a", "srv"}, {"c", "srv"}},
			want:   map[string]bool{"a": false, "b": true, "c": true},
		},
		{
			name:   "within-bound",
			reason: "within the bound every mark is kept",
			bound:  3,
			marks:  []mark{{"a", "srv"}, {"b", "srv"}, {"c", "srv"}},
			want:   map[string]bool{"a": true, "b": true, "c": true, "d": false},
		},
		{
			name:   "bound-is-per-server",
			reason: "one server's marks count against its own bound only; another's oldest stays (N7)",
			bound:  2,
			marks:  []mark{{"a", "s1"}, {"b", "s2"}, {"c", "s2"}, {"d", "s2"}},
			want:   map[string]bool{"a": true, "b": false, "c": true, "d": true},
		},
		{
			name:   "each-server-within-its-bound",
			reason: "two servers each within the bound keep all their marks, more than the bound in total",
			bound:  2,
			marks:  []mark{{"a", "s1"}, {"b", "s2"}, {"c", "s1"}, {"d", "s2"}},
			want:   map[string]bool{"a": true, "b": true, "c": true, "d": true},
		},
		{
			name:   "shared-key-held-by-another",
			reason: "a key stays marked while any server holds its mark",
			bound:  1,
			marks:  []mark{{"a", "s1"}, {"a", "s2"}, {"b", "s1"}},
			want:   map[string]bool{"a": true, "b": true},
		},
		{
			name:   "shared-key-dropped-by-all",
			reason: "a key is unmarked once every server that held it dropped it",
			bound:  1,
			marks:  []mark{{"a", "s1"}, {"a", "s2"}, {"b", "s1"}, {"c", "s2"}},
			want:   map[string]bool{"a": false, "b": true, "c": true},
		},
		{
			name:   "re-mark-by-other-server",
			reason: "another server marking a key its first marker dropped marks it again",
			bound:  1,
			marks:  []mark{{"a", "s1"}, {"b", "s1"}, {"a", "s2"}},
			want:   map[string]bool{"a": true, "b": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := refs.NewMemoryMarks(tt.bound)
			for _, mk := range tt.marks {
				if err := m.Mark(ctx, mk.Key, mk.Server); err != nil {
					t.Fatalf("MemoryMarks.Mark(%q, %q) = %v; it never fails", mk.Key, mk.Server, err)
				}
			}
			for k, want := range tt.want {
				got, err := m.Marked(ctx, k)
				if err != nil {
					t.Fatalf("MemoryMarks.Marked(%q) error = %v; it never fails", k, err)
				}
				if got != want {
					t.Errorf("N7: Marked(%q) = %t, want %t (%s)", k, got, want, tt.reason)
				}
			}
		})
	}
}

// memMarked reads MemoryMarks.Marked, failing the test on an error.
func memMarked(t *testing.T, m *refs.MemoryMarks, key string) bool {
	t.Helper()
	got, err := m.Marked(t.Context(), key)
	if err != nil {
		t.Fatalf("MemoryMarks.Marked(%q) error = %v; it never fails", key, err)
	}
	return got
}

func TestMemoryMarksDefaultBound(t *testing.T) {
	ctx := t.Context()
	for _, bound := range []int{0, -5} {
		m := refs.NewMemoryMarks(bound)
		for i := range refs.DefaultMarkBound + 1 {
			_ = m.Mark(ctx, strconv.Itoa(i), "srv")
		}
		if memMarked(t, m, "0") {
			t.Errorf("N7: NewMemoryMarks(%d) kept more than DefaultMarkBound marks for one server", bound)
		}
		if !memMarked(t, m, "1") || !memMarked(t, m, strconv.Itoa(refs.DefaultMarkBound)) {
			t.Errorf("N7: NewMemoryMarks(%d) dropped marks within DefaultMarkBound", bound)
		}
	}
}

func TestRegistryMarkBound(t *testing.T) {
	ctx := t.Context()
	g := newReg(t, refs.Config{Capacity: 1, MarkBound: 1})
	g.MarkNever(ctx, uriN(1), "vst")
	g.MarkNever(ctx, uriN(2), "vst") // evicts uri 1's record and, at vst's bound, its mark
	if g.Marked(ctx, uriN(1)) {
		t.Errorf("N7: the registry's MarkBound did not drop the server's oldest mark")
	}
	if !g.Marked(ctx, uriN(2)) {
		t.Errorf("N1: the live marked record reads unmarked")
	}
}

// TestMemoryMarksFloodFromOneServer: a server that marks DefaultMarkBound
// uris and more cannot push out the mark another server made (N7).
func TestMemoryMarksFloodFromOneServer(t *testing.T) {
	ctx := t.Context()
	m := refs.NewMemoryMarks(0)
	_ = m.Mark(ctx, "victim", "a")
	for i := range refs.DefaultMarkBound + 1 {
		_ = m.Mark(ctx, "flood/"+strconv.Itoa(i), "b")
	}
	if !memMarked(t, m, "victim") {
		t.Errorf("N7: %d marks from server b dropped server a's mark", refs.DefaultMarkBound+1)
	}
	if memMarked(t, m, "flood/0") {
		t.Errorf("N7: server b's marks are not bounded: its oldest survived %d newer ones", refs.DefaultMarkBound)
	}
}

// TestRegistryMarkFloodFromOneServer is the same through a registry: its
// own memory is bounded per server, so a server that marks MarkBound+1
// uris evicts its own oldest mark, never another server's, even once the
// other server's record is gone.
func TestRegistryMarkFloodFromOneServer(t *testing.T) {
	ctx := t.Context()
	const bound = 8
	g := newReg(t, refs.Config{Capacity: 2, MarkBound: bound})
	g.MarkNever(ctx, secretURI, "a")
	for i := range bound + 1 {
		g.MarkNever(ctx, uriN(i), "b")
	}
	if _, held := g.ByURI(secretURI); held {
		t.Fatalf("setup: server a's record is still held; only the registry's memory should hold its mark")
	}
	if !g.Marked(ctx, secretURI) || !g.MarkedHere(secretURI) {
		t.Errorf("N7: %d marks from server b dropped server a's mark", bound+1)
	}
	if e := g.Register(ctx, from("", plain(secretURI))); !e.Never {
		t.Errorf("N7: the uri server a marked came back unmarked after server b's flood")
	}
	if g.Marked(ctx, uriN(0)) {
		t.Errorf("N7: server b's oldest mark survived %d newer ones at MarkBound %d", bound, bound)
	}
}

// TestNeverReachesRespellings: a server's never on one spelling of a uri
// holds for every other spelling of the same resource (N8). Before, a
// fragment, an empty query, an empty port or a dot segment walked around it.
func TestNeverReachesRespellings(t *testing.T) {
	ctx := t.Context()
	const bare = "https://files.example/private/take.wav" // a uri with no query
	respellings := []struct{ marked, uri, reason string }{
		{secretURI, secretURI + "#x", "a fragment never reaches the server"},
		{secretURI, secretURI + "#", "an empty fragment"},
		{bare, bare + "?", "an empty query"},
		{bare, bare + "?#x", "an empty query and a fragment"},
		{secretURI, "https://files.example:/take.wav?token=secret", "an empty port"},
		{secretURI, "https://files.example:0443/take.wav?token=secret", "the default port, zero-padded"},
		{secretURI, "https://files.example/x/../take.wav?token=secret", "a dot-dot segment"},
		{secretURI, "https://files.example/./take.wav?token=secret", "a dot segment"},
		{bare, "https://files.example/private/x/%2E%2E/take.wav", "an escaped dot-dot segment"},
		{secretURI, "https://files.example//take.wav?token=secret", "an empty segment"},
		{secretURI, "https://files.example/take%2Ewav?token=%73ecret", "escaped unreserved characters"},
		{secretURI, "https://FILES.example./take.wav?token=secret", "upper case and a trailing dot in the host"},
		{secretURI, "\u200b" + secretURI + "\u2069 ", "surrounding invisible characters and space"},
	}
	for _, r := range respellings {
		t.Run(r.reason, func(t *testing.T) {
			var logs logtest.Buffer
			g := newReg(t, refs.Config{Logger: logs.Logger()})
			marked := g.Register(ctx, never("vst", plain(r.marked)))
			if !g.Marked(ctx, r.uri) {
				t.Errorf("N8: Marked(%+q) = false after a never on %q (%s)", r.uri, r.marked, r.reason)
			}
			e := g.Register(ctx, from("vst", plain(r.uri)))
			if e.ID != marked.ID || !e.Never {
				t.Errorf("N8: the respelling %+q got record %q (never %t), want the marked record %q (%s)", r.uri, e.ID, e.Never, marked.ID, r.reason)
			}

			// The other direction: a never on the respelling marks the
			// plain spelling.
			g2 := newReg(t, refs.Config{Logger: logs.Logger()})
			g2.MarkNever(ctx, r.uri, "vst")
			if !g2.Marked(ctx, r.marked) {
				t.Errorf("N8: Marked(%q) = false after a never on %+q (%s)", r.marked, r.uri, r.reason)
			}
			if strings.Contains(logs.String(), "secret") {
				t.Errorf("O1: a log line carries the uri's query:\n%s", logs.String())
			}
		})
	}

	g := newReg(t, refs.Config{})
	g.Register(ctx, never("vst", plain(secretURI)))
	for _, other := range []string{
		"https://files.example/take.wav?token=other",
		"https://files.example/take.wav",
		"https://files.example/take.wav/?token=secret",
		"http://files.example/take.wav?token=secret",
		"https://files.example:8443/take.wav?token=secret",
	} {
		if g.Marked(ctx, other) {
			t.Errorf("N8: Marked(%q) = true; a never on %q must not reach another resource", other, secretURI)
		}
	}
}

// TestMarkedByCanonicalForm pins N7 for the converter's questions about
// the uris of texts, which it asks by their canonical form: MarkedHere
// and Marked answer for a uri's canonical form what they answer for the
// uri, whether the record is held, evicted after its mark, or was never
// marked.
func TestMarkedByCanonicalForm(t *testing.T) {
	ctx := t.Context()
	g := newReg(t, refs.Config{Capacity: 2})
	const respelled = "HTTPS://files.example:443/take.wav?token=secret"
	const other = "https://files.example/other.wav"
	g.MarkNever(ctx, secretURI, "vst")
	g.Register(ctx, from("vst", plain(other)))
	check := func(when string) {
		t.Helper()
		for _, uri := range []string{secretURI, respelled, other} {
			key := uriform.Canonical(uri)
			if got, want := g.MarkedHere(key), g.MarkedHere(uri); got != want {
				t.Errorf("%s: MarkedHere(%q) = %t, MarkedHere(%q) = %t", when, key, got, uri, want)
			}
			if got, want := g.Marked(ctx, key), g.Marked(ctx, uri); got != want {
				t.Errorf("%s: Marked(%q) = %t, Marked(%q) = %t", when, key, got, uri, want)
			}
		}
		if !g.MarkedHere(uriform.Canonical(respelled)) {
			t.Errorf("%s: N7 the mark is not found by canonical form", when)
		}
	}
	check("held")
	g.Register(ctx, from("vst", plain(uriN(1))))
	g.Register(ctx, from("vst", plain(uriN(2))))
	check("evicted")
}

// TestZeroMemoryMarks pins that the zero MemoryMarks is a working store
// with the default bound, as its methods promise never to fail: before,
// its first Mark panicked on a nil map.
func TestZeroMemoryMarks(t *testing.T) {
	var m refs.MemoryMarks
	ctx := t.Context()
	if ok, err := m.Marked(ctx, "k"); ok || err != nil {
		t.Fatalf("zero store: Marked = %v, %v", ok, err)
	}
	if err := m.Mark(ctx, "k", "s"); err != nil {
		t.Fatalf("Mark = %v", err)
	}
	if ok, err := m.Marked(ctx, "k"); !ok || err != nil {
		t.Errorf("after Mark: Marked = %v, %v", ok, err)
	}
}
