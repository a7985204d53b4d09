package refs_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcplrefs/refcore/internal/logtest"

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

func (f *fakeRemover) Remove(path string) error {
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
			steps:       func(g *refs.Registry) convert.Entry { return g.Register(never("vst", plain(secretURI))) },
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:        "serverless-never",
			reason:      "a never in serverless content marks nothing (N4)",
			steps:       func(g *refs.Registry) convert.Entry { return g.Register(never("", plain(secretURI))) },
			wantNever:   false,
			wantServers: nil,
		},
		{
			name:   "serverless-never-on-server-record",
			reason: "a serverless never does not mark a record a server bound either (N4)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(from("vst", plain(secretURI)))
				return g.Register(never("", plain(secretURI)))
			},
			wantNever:   false,
			wantServers: []string{"vst"},
		},
		{
			name:   "plain-after-never-same-server",
			reason: "a later plain delivery from the marking server does not lift the mark (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(never("vst", plain(secretURI)))
				return g.Register(from("vst", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "plain-after-never-other-server",
			reason: "another server cannot expand what a server vetoed (N1, §3.1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(never("vst", plain(secretURI)))
				return g.Register(from("mail", convert.Testimony{URI: secretURI, Disposition: convert.DispositionRef, Present: convert.FieldURI | convert.FieldDisposition}))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst", "mail"},
		},
		{
			name:   "plain-after-never-serverless",
			reason: "serverless content cannot lift a mark (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(never("vst", plain(secretURI)))
				return g.Register(from("", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "vst",
			wantServers: []string{"vst"},
		},
		{
			name:   "never-after-plain",
			reason: "the first never for a uri marks the record a plain delivery made (N1)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(from("vst", plain(secretURI)))
				return g.Register(never("mail", plain(secretURI)))
			},
			wantNever:   true,
			wantBy:      "mail",
			wantServers: []string{"vst", "mail"},
		},
		{
			name:   "second-never-keeps-first-marker",
			reason: "the record names the server whose never made the first mark (N1, N5)",
			steps: func(g *refs.Registry) convert.Entry {
				g.Register(never("vst", plain(secretURI)))
				return g.Register(never("mail", plain(secretURI)))
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
				e, _ := g.MarkNever(secretURI, "vst")
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
				g.Register(from("", plain(secretURI)))
				e, _ := g.MarkNever(secretURI, "vst")
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
				g.Register(from("vst", plain(secretURI)))
				e, _ := g.MarkNever("HTTPS://FILES.EXAMPLE:443/take.wav?token=secret", "vst")
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
			g := refs.New(refs.Config{Logger: logs.Logger()})
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
				if got := g.Marked(spelling); got != tt.wantNever {
					t.Errorf("N1/N8: Marked(%+q) = %t, want %t (%s)", spelling, got, tt.wantNever, tt.reason)
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
	g := refs.New(refs.Config{})
	if e, ok := g.MarkNever(secretURI, ""); ok || e != (convert.Entry{}) {
		t.Errorf("N4: MarkNever with no server = %+v, %t; want nothing marked", e, ok)
	}
	if g.Len() != 0 || g.Marked(secretURI) {
		t.Errorf("N4: serverless MarkNever created or marked a record (Len %d)", g.Len())
	}
}

func TestFirstMarkWithdrawsSavedCopy(t *testing.T) {
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
			mark:        func(g *refs.Registry) { g.Register(never("vst", plain(secretURI))) },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:        "mark-never-removes",
			reason:      "MarkNever is a first mark like any other (N1, N3)",
			remover:     &fakeRemover{},
			mark:        func(g *refs.Registry) { g.MarkNever(secretURI, "vst") },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:        "no-remover-logs-path",
			reason:      "without a Remover the copy is forgotten and the log says where it stays (N3)",
			mark:        func(g *refs.Registry) { g.MarkNever(secretURI, "vst") },
			wantPathLog: true,
		},
		{
			name:        "remover-fails",
			reason:      "a failed removal is logged with the path, and the copy is still forgotten (N3)",
			remover:     &fakeRemover{err: errors.New("disk says no")},
			mark:        func(g *refs.Registry) { g.MarkNever(secretURI, "vst") },
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:    "repeated-marks-act-once",
			reason:  "only the first mark withdraws and logs (N3, N5)",
			remover: &fakeRemover{},
			mark: func(g *refs.Registry) {
				g.Register(never("vst", plain(secretURI)))
				g.MarkNever(secretURI, "vst")
				g.Register(never("mail", plain(secretURI)))
				g.MarkNever(secretURI, "mail")
			},
			wantRemoved: []string{path},
			wantPathLog: true,
		},
		{
			name:    "serverless-never-keeps-copy",
			reason:  "a serverless never marks nothing, so the copy stays named (N4)",
			remover: &fakeRemover{},
			mark:    func(g *refs.Registry) { g.Register(never("", plain(secretURI))) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			cfg := refs.Config{Logger: logs.Logger()}
			if tt.remover != nil {
				cfg.Remover = tt.remover
			}
			g := refs.New(cfg)
			id := g.Register(from("vst", plain(secretURI))).ID
			if err := g.Save(id, refs.Saved{Path: path, Bytes: 9, MimeType: "audio/wav"}); err != nil {
				t.Fatalf("setup: Save = %v", err)
			}
			tt.mark(g)

			marked := tt.wantRemoved != nil || tt.wantPathLog
			rec := mustLookup(t, g, id, "N3")
			if marked && rec.Saved != nil {
				t.Errorf("N3: the marked record still names its copy %+v (%s)", rec.Saved, tt.reason)
			}
			if !marked && rec.Saved == nil {
				t.Errorf("N3: the copy was forgotten without a mark (%s)", tt.reason)
			}
			e, _ := g.Entry(id)
			if marked && (e.Saved || e.SavedPath != "" || e.VerifiedBytes != 0 || e.VerifiedType != "") {
				t.Errorf("N3: the entry still carries verified facts %+v (%s)", e, tt.reason)
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
				if err := g.Save(id, refs.Saved{Path: "store/again.wav"}); !errors.Is(err, refs.ErrMarked) {
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
	var logs logtest.Buffer
	g := refs.New(refs.Config{Logger: logs.Logger()})
	g.Register(from("", plain(secretURI)))
	g.Register(from("mail", plain(secretURI)))
	e := g.Register(never("vst", plain(secretURI)))
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
	tests := []struct {
		name, reason string
		mark         func(g *refs.Registry)
		again        convert.Registration
	}{
		{
			name:   "register-never-then-plain",
			reason: "a plain delivery after eviction meets the remembered mark (N7)",
			mark:   func(g *refs.Registry) { g.Register(never("vst", plain(secretURI))) },
			again:  from("vst", plain(secretURI)),
		},
		{
			name:   "mark-never-then-serverless",
			reason: "serverless content after eviction meets the remembered mark (N4, N7)",
			mark:   func(g *refs.Registry) { g.MarkNever(secretURI, "vst") },
			again:  from("", plain(secretURI)),
		},
		{
			name:   "respelled",
			reason: "another spelling after eviction meets the remembered mark (N7, N8)",
			mark:   func(g *refs.Registry) { g.MarkNever(secretURI, "vst") },
			again:  from("mail", plain("HTTPS://files.example:443/take.wav?token=secret")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logtest.Buffer
			g := refs.New(refs.Config{Capacity: 2, Logger: logs.Logger()})
			tt.mark(g)
			old, _ := g.ByURI(secretURI)
			g.Register(from("vst", plain(uriN(1))))
			g.Register(from("vst", plain(uriN(2))))
			if _, ok := g.Lookup(old.ID); ok {
				t.Fatalf("setup: the marked record was not evicted")
			}
			if !g.Marked(secretURI) {
				t.Errorf("N7: Marked(uri) = false once its record was evicted (%s)", tt.reason)
			}
			e := g.Register(tt.again)
			if e.ID == old.ID {
				t.Errorf("R1: the new record reused the evicted id %q", e.ID)
			}
			if !e.Never {
				t.Errorf("N7: the uri's new record is not marked (%s)", tt.reason)
			}
			if rec := mustLookup(t, g, e.ID, "N7"); !rec.Never {
				t.Errorf("N7: the uri's new record reads unmarked (%s)", tt.reason)
			}
			if err := g.Save(e.ID, refs.Saved{Path: "store/x.wav"}); !errors.Is(err, refs.ErrMarked) {
				t.Errorf("N7/F18: Save on the new record = %v, want ErrMarked (%s)", err, tt.reason)
			}
			if strings.Contains(logs.String(), "secret") {
				t.Errorf("O1: a log line carries the uri's query:\n%s", logs.String())
			}
		})
	}
}

func TestMarkOutlivesRestartWithSharedStore(t *testing.T) {
	store := refs.NewMemoryMarks(0)
	before := refs.New(refs.Config{Marks: store})
	before.MarkNever(secretURI, "vst")

	// A registry built later over the same store stands for a host restarted
	// with a durable mark store.
	after := refs.New(refs.Config{Marks: store})
	if !after.Marked(secretURI) {
		t.Errorf("N7: a fresh registry over the same store does not see the mark")
	}
	if e := after.Register(from("vst", plain(secretURI))); !e.Never {
		t.Errorf("N7: a record registered after the restart is not marked")
	}
	if e := after.Register(from("vst", plain(uriN(1)))); e.Never {
		t.Errorf("N7: an unrelated uri came out marked")
	}
}

func TestMemoryMarksBound(t *testing.T) {
	tests := []struct {
		name, reason string
		bound        int
		marks        []string
		want         map[string]bool
	}{
		{
			name:   "drops-oldest",
			reason: "past its bound the store drops the oldest mark first (N7)",
			bound:  2,
			marks:  []string{"a", "b", "c"},
			want:   map[string]bool{"a": false, "b": true, "c": true},
		},
		{
			name:   "re-mark-keeps-age",
			reason: "marking a marked key again neither duplicates it nor makes it younger",
			bound:  2,
			marks:  []string{"a", "b", "a", "c"},
			want:   map[string]bool{"a": false, "b": true, "c": true},
		},
		{
			name:   "within-bound",
			reason: "within the bound every mark is kept",
			bound:  3,
			marks:  []string{"a", "b", "c"},
			want:   map[string]bool{"a": true, "b": true, "c": true, "d": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := refs.NewMemoryMarks(tt.bound)
			for _, k := range tt.marks {
				m.Mark(k, "srv")
			}
			for k, want := range tt.want {
				if got := m.Marked(k); got != want {
					t.Errorf("N7: Marked(%q) = %t, want %t (%s)", k, got, want, tt.reason)
				}
			}
		})
	}
}

func TestMemoryMarksDefaultBound(t *testing.T) {
	for _, bound := range []int{0, -5} {
		m := refs.NewMemoryMarks(bound)
		for i := range refs.DefaultMarkBound + 1 {
			m.Mark(strconv.Itoa(i), "srv")
		}
		if m.Marked("0") {
			t.Errorf("N7: NewMemoryMarks(%d) kept more than DefaultMarkBound marks", bound)
		}
		if !m.Marked("1") || !m.Marked(strconv.Itoa(refs.DefaultMarkBound)) {
			t.Errorf("N7: NewMemoryMarks(%d) dropped marks within DefaultMarkBound", bound)
		}
	}
}

func TestRegistryMarkBound(t *testing.T) {
	g := refs.New(refs.Config{Capacity: 1, Marks: refs.NewMemoryMarks(1)})
	g.MarkNever(uriN(1), "vst")
	g.MarkNever(uriN(2), "vst") // evicts uri 1's record and its stored mark
	if g.Marked(uriN(1)) {
		t.Errorf("N7: the store's bound did not drop the oldest mark")
	}
	if !g.Marked(uriN(2)) {
		t.Errorf("N1: the live marked record reads unmarked")
	}
}
