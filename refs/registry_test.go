package refs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/internal/logtest"
	"github.com/mcplrefs/refcore/refs"
)

// idShape is the only form an id may take (R1): lowercase, so it can never
// spell a device name or a server's label.
var idShape = regexp.MustCompile(`^ref_[a-z2-7]+$`)

// plain is a testimony that carries nothing but its uri.
func plain(uri string) convert.Testimony {
	return convert.Testimony{URI: uri, Present: convert.FieldURI}
}

// named is a testimony carrying a uri and a name.
func named(uri, name string) convert.Testimony {
	return convert.Testimony{URI: uri, Name: name, Present: convert.FieldURI | convert.FieldName}
}

// from is a registration of t by server ("" for serverless content).
func from(server string, t convert.Testimony) convert.Registration {
	return convert.Registration{Testimony: t, Server: server}
}

// uriN is the n-th uri of a family of distinct uris.
func uriN(n int) string { return fmt.Sprintf("https://files.example/r/%d", n) }

// newReg returns a registry built from cfg, failing the test when New
// refuses it.
func newReg(t testing.TB, cfg refs.Config) *refs.Registry {
	t.Helper()
	g, err := refs.New(cfg)
	if err != nil {
		t.Fatalf("setup: refs.New(%+v) = %v", cfg, err)
	}
	if g == nil {
		t.Fatalf("setup: refs.New(%+v) returned no registry and no error", cfg)
	}
	return g
}

func mustLookup(t *testing.T, g *refs.Registry, id, rule string) refs.Record {
	t.Helper()
	rec, ok := g.Lookup(id)
	if !ok {
		t.Fatalf("%s: Lookup(%q) = false, want the record", rule, id)
	}
	return rec
}

func TestIDsWellFormedAndNeverReused(t *testing.T) {
	ctx := t.Context()
	const n, capacity = 10_000, 100
	g := newReg(t, refs.Config{Capacity: capacity})
	issued := make(map[string]string, n) // every id ever issued -> its uri
	for i := range n {
		u := uriN(i)
		e := g.Register(ctx, from("srv", plain(u)))
		if !idShape.MatchString(e.ID) {
			t.Fatalf("R1: id %q for %q is not \"ref_\" plus lowercase [a-z2-7]", e.ID, u)
		}
		if prev, dup := issued[e.ID]; dup {
			t.Fatalf("R1: id %q issued for %q was issued again for %q", e.ID, prev, u)
		}
		issued[e.ID] = u
	}
	if got := g.Len(); got != capacity {
		t.Errorf("R3: Len after %d registrations = %d, want the bound %d", n, got, capacity)
	}
	// The uris registered first were evicted; registering them again
	// must still mint ids that no earlier record ever had.
	for i := range 2 * capacity {
		u := uriN(i)
		e := g.Register(ctx, from("srv", plain(u)))
		if prev, dup := issued[e.ID]; dup {
			t.Fatalf("R1: re-registering evicted %q reused id %q first issued for %q", u, e.ID, prev)
		}
		issued[e.ID] = u
	}
}

// replayRand replays the first draw once more on its third read, the way
// an unlucky draw would, and gives distinct bytes otherwise.
type replayRand struct {
	reads int
}

func (r *replayRand) Read(p []byte) (int, error) {
	r.reads++
	fill := byte(r.reads)
	if r.reads == 3 {
		fill = 1 // the first draw again
	}
	for i := range p {
		p[i] = fill
	}
	return len(p), nil
}

func TestIDNotReusedOnRepeatedRandomness(t *testing.T) {
	ctx := t.Context()
	g := newReg(t, refs.Config{Capacity: 1, Rand: &replayRand{}})
	first := g.Register(ctx, from("srv", plain(uriN(1))))
	second := g.Register(ctx, from("srv", plain(uriN(2))))
	if _, ok := g.Lookup(first.ID); ok {
		t.Fatalf("setup: %q should have been evicted at capacity 1", first.ID)
	}
	// The randomness repeats itself. Ids must stay distinct all the same:
	// they never depend on fresh random bytes per record.
	third := g.Register(ctx, from("srv", plain(uriN(3))))
	for _, e := range []convert.Entry{first, second, third} {
		if !idShape.MatchString(e.ID) {
			t.Errorf("R1: id %q is not well formed", e.ID)
		}
	}
	if first.ID == second.ID || first.ID == third.ID || second.ID == third.ID {
		t.Errorf("R1: an id was reused after eviction: %q, %q, %q", first.ID, second.ID, third.ID)
	}
}

func TestIDRandomnessFailureIsAnError(t *testing.T) {
	g, err := refs.New(refs.Config{Rand: bytes.NewReader(nil)})
	if err == nil || g != nil {
		t.Errorf("R1: New with failing randomness = %p, %v; want no registry and an error", g, err)
	}
}

func TestIDStableAcrossRegistrations(t *testing.T) {
	ctx := t.Context()
	const u = "https://files.example/report.pdf?token=secret"
	tests := []struct {
		name, reason string
		again        convert.Registration
	}{
		{"same-server", "the same server naming the uri again keeps the record (R2)", from("a", plain(u))},
		{"other-server", "another server naming the uri binds to the same record (R2)", from("b", named(u, "other"))},
		{"serverless", "serverless content naming the uri reuses the record (R2)", from("", named(u, "relay"))},
		{"respelled", "another spelling of the uri is the same record (R2, N8)", from("a", plain("HTTPS://FILES.example:443/report.pdf?token=secret"))},
		{"never", "a never registration marks the record but keeps its id (R1, N1)", convert.Registration{Testimony: plain(u), Server: "a", Never: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{})
			first := g.Register(ctx, from("a", plain(u)))
			for i := range 3 {
				got := g.Register(ctx, tt.again)
				if got.ID != first.ID {
					t.Fatalf("R1/R2: registration %d gave id %q, want the first id %q (%s)", i+1, got.ID, first.ID, tt.reason)
				}
			}
			if n := g.Len(); n != 1 {
				t.Errorf("R2: Len = %d, want 1 (%s)", n, tt.reason)
			}
		})
	}
}

func TestUnknownReference(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		// id returns the id to look up, given a registry that holds one
		// live record with id live.
		id func(g *refs.Registry, live string) string
	}{
		{
			name:   "evicted",
			reason: "an id whose record was evicted for capacity is unknown, vector 20 (R4)",
			id: func(g *refs.Registry, _ string) string {
				old := g.Register(ctx, from("srv", plain(uriN(100)))).ID
				g.Register(ctx, from("srv", plain(uriN(101))))
				g.Register(ctx, from("srv", plain(uriN(102))))
				return old
			},
		},
		{
			name:   "evicted-uri-registered-again",
			reason: "after eviction the uri's new record has a new id; the old id stays unknown (R1, R4)",
			id: func(g *refs.Registry, _ string) string {
				old := g.Register(ctx, from("srv", plain(uriN(100)))).ID
				g.Register(ctx, from("srv", plain(uriN(101))))
				g.Register(ctx, from("srv", plain(uriN(102))))
				g.Register(ctx, from("srv", plain(uriN(100))))
				return old
			},
		},
		{
			name:   "removed",
			reason: "an id the host removed is unknown (R4)",
			id: func(g *refs.Registry, _ string) string {
				old := g.Register(ctx, from("srv", plain(uriN(100)))).ID
				g.Remove(old)
				return old
			},
		},
		{
			name:   "never-issued",
			reason: "an id the registry never issued is unknown (R4)",
			id:     func(*refs.Registry, string) string { return "ref_unknown_fixture" },
		},
		{
			name:   "empty",
			reason: "the empty id is unknown (R4)",
			id:     func(*refs.Registry, string) string { return "" },
		},
		{
			name:   "upper-cased-live",
			reason: "ids are exact: an upper-cased live id is not that record (R1, R4)",
			id:     func(_ *refs.Registry, live string) string { return strings.ToUpper(live) },
		},
		{
			name:   "live-with-suffix",
			reason: "a live id with text appended is not that record (R4)",
			id:     func(_ *refs.Registry, live string) string { return live + "a" },
		},
		{
			name:   "long-with-newline",
			reason: "caller text in an id cannot reshape the message (R4)",
			id: func(*refs.Registry, string) string {
				return "ref_x\nforged: line " + strings.Repeat("z", 500)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{Capacity: 2})
			live := g.Register(ctx, from("srv", plain(uriN(1)))).ID
			id := tt.id(g, live)
			liveNow := map[string]bool{}
			for _, u := range []string{uriN(1), uriN(100), uriN(101), uriN(102)} {
				if rec, ok := g.ByURI(u); ok {
					liveNow[rec.ID] = true
				}
			}
			if liveNow[id] {
				t.Fatalf("setup: %q is still held", id)
			}

			if rec, ok := g.Lookup(id); ok {
				t.Errorf("R4: Lookup(%+q) = %q (%s), want false (%s)", id, rec.ID, rec.URI, tt.reason)
			}
			if e, ok := g.Entry(id); ok {
				t.Errorf("R4: Entry(%+q) = %q, want false (%s)", id, e.ID, tt.reason)
			}
			rec, err := g.Resolve(id)
			if !errors.Is(err, refs.ErrUnknownReference) {
				t.Fatalf("R4: Resolve(%+q) error = %v, want errors.Is ErrUnknownReference (%s)", id, err, tt.reason)
			}
			if diff := cmp.Diff(refs.Record{}, rec); diff != "" {
				t.Errorf("R4: Resolve(%+q) returned a record alongside its error (-want +got):\n%s", id, diff)
			}
			var ue *refs.UnknownError
			if !errors.As(err, &ue) {
				t.Fatalf("R4: Resolve(%+q) error %T is not a *refs.UnknownError", id, err)
			}
			if ue.ID != id {
				t.Errorf("R4: UnknownError.ID = %+q, want %+q", ue.ID, id)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "unknown reference") {
				t.Errorf("R4: error text %+q does not start with \"unknown reference\"", msg)
			}
			if strings.ContainsAny(msg, "\n\r") || len(msg) > 200 {
				t.Errorf("R4: error text %+q is not one bounded line", msg)
			}
			if err := g.Save(id, convert.Copy{Path: "x"}, plain(uriN(1))); !errors.Is(err, refs.ErrGone) {
				t.Errorf("R4/F20: Save(%+q) = %v, want ErrGone", id, err)
			}
			// The live record still resolves to itself.
			for lid := range liveNow {
				if _, err := g.Resolve(lid); err != nil {
					t.Errorf("R4: live id %q no longer resolves: %v", lid, err)
				}
			}
		})
	}
}

func TestLRUOrder(t *testing.T) {
	ctx := t.Context()
	a, b, c, d := uriN(1), uriN(2), uriN(3), uriN(4)
	tests := []struct {
		name, reason string
		// touch acts on a registry holding a, b and c (registered in that
		// order, capacity 3) before d is registered.
		touch func(g *refs.Registry, ids map[string]string)
		// evicted is the uri d must push out.
		evicted string
	}{
		{
			name:    "untouched",
			reason:  "with nothing touched, the first registered is the least recent (R3)",
			touch:   func(*refs.Registry, map[string]string) {},
			evicted: a,
		},
		{
			name:    "re-registered",
			reason:  "a re-registered record survives one registered after it (R2, R3)",
			touch:   func(g *refs.Registry, _ map[string]string) { g.Register(ctx, from("srv", plain(a))) },
			evicted: b,
		},
		{
			name:    "re-registered-serverless",
			reason:  "a serverless naming still counts as registering (R3)",
			touch:   func(g *refs.Registry, _ map[string]string) { g.Register(ctx, from("", plain(a))) },
			evicted: b,
		},
		{
			name:   "re-registered-respelled",
			reason: "registering another spelling refreshes the same record (R3, N8)",
			touch: func(g *refs.Registry, _ map[string]string) {
				g.Register(ctx, from("srv", plain("HTTPS://files.EXAMPLE/r/1")))
			},
			evicted: b,
		},
		{
			name:    "entry-shows",
			reason:  "Entry(id) counts as showing the record (R3)",
			touch:   func(g *refs.Registry, ids map[string]string) { g.Entry(ids[a]) },
			evicted: b,
		},
		{
			name:    "lookup-shows",
			reason:  "Lookup(id) makes the record most recent, as documented (R3)",
			touch:   func(g *refs.Registry, ids map[string]string) { g.Lookup(ids[a]) },
			evicted: b,
		},
		{
			name:    "resolve-shows",
			reason:  "Resolve is Lookup with an explanation (R3)",
			touch:   func(g *refs.Registry, ids map[string]string) { _, _ = g.Resolve(ids[a]) },
			evicted: b,
		},
		{
			name: "by-uri-does-not-reorder",
			reason: "ByURI and EntryForURI read without showing; the first registered " +
				"is still evicted (R3)",
			touch: func(g *refs.Registry, _ map[string]string) {
				g.ByURI(a)
				g.EntryForURI(a)
				g.Marked(ctx, a)
				g.MarkedHere(a)
			},
			evicted: a,
		},
		{
			name:   "save-does-not-reorder",
			reason: "recording a fetched copy is not showing the record (R3)",
			touch: func(g *refs.Registry, ids map[string]string) {
				_ = g.Save(ids[a], convert.Copy{Path: "p"}, plain(a))
			},
			evicted: a,
		},
		{
			name:   "order-of-showing",
			reason: "eviction follows the order of the latest registering or showing (R3)",
			touch: func(g *refs.Registry, ids map[string]string) {
				g.Entry(ids[b])
				g.Register(ctx, from("srv", plain(a)))
				g.Lookup(ids[c])
			},
			evicted: b,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{Capacity: 3})
			ids := map[string]string{}
			for _, u := range []string{a, b, c} {
				ids[u] = g.Register(ctx, from("srv", plain(u))).ID
			}
			tt.touch(g, ids)
			ids[d] = g.Register(ctx, from("srv", plain(d))).ID
			if n := g.Len(); n != 3 {
				t.Errorf("R3: Len = %d, want 3", n)
			}
			for _, u := range []string{a, b, c, d} {
				_, held := g.Lookup(ids[u])
				if want := u != tt.evicted; held != want {
					t.Errorf("R3: %s held = %t, want %t (%s)", u, held, want, tt.reason)
				}
			}
		})
	}
}

func TestCapacityBound(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		capacity     int
		wantCap      int
	}{
		{"one", "the smallest bound still holds the record just registered", 1, 1},
		{"seven", "a small bound", 7, 7},
		{"zero-means-default", "a zero Config gets DefaultCapacity (R3)", 0, refs.DefaultCapacity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{Capacity: tt.capacity})
			if got := g.Cap(); got != tt.wantCap {
				t.Fatalf("R3: Cap = %d, want %d (%s)", got, tt.wantCap, tt.reason)
			}
			if got := g.Len(); got != 0 {
				t.Errorf("R3: Len of an empty registry = %d", got)
			}
			n := tt.wantCap + 25
			for i := range n {
				e := g.Register(ctx, from("srv", plain(uriN(i))))
				if _, ok := g.Lookup(e.ID); !ok {
					t.Fatalf("R3: the record just registered (%d) was evicted (%s)", i, tt.reason)
				}
				if got, want := g.Len(), min(i+1, tt.wantCap); got != want {
					t.Fatalf("R3: Len after %d registrations = %d, want %d (%s)", i+1, got, want, tt.reason)
				}
			}
		})
	}
}

func TestNewRejectsNegativeBounds(t *testing.T) {
	tests := []struct {
		name, reason string
		cfg          refs.Config
	}{
		{"capacity", "no registry may be unbounded (R3, anti-pattern 10)", refs.Config{Capacity: -1}},
		{"mark-bound", "the marks kept in memory may not be unbounded either (N7, anti-pattern 10)", refs.Config{MarkBound: -1}},
		{"both", "either negative bound refuses the config", refs.Config{Capacity: -5, MarkBound: -5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := refs.New(tt.cfg)
			if !errors.Is(err, refs.ErrBadConfig) {
				t.Errorf("R3: New(%+v) error = %v, want errors.Is ErrBadConfig (%s)", tt.cfg, err, tt.reason)
			}
			if g != nil {
				t.Errorf("R3: New(%+v) returned a registry alongside its error (%s)", tt.cfg, tt.reason)
			}
		})
	}
}

func TestCanonicalURIOneRecord(t *testing.T) {
	ctx := t.Context()
	const first = "HTTPS://A.example:443/x"
	tests := []struct {
		name, reason, uri string
		same              bool
	}{
		{"exact", "the same text", first, true},
		{"canonical", "scheme and host lower-cased, default port dropped (N8)", "https://a.example/x", true},
		{"surrounding-invisibles", "surrounding whitespace and invisible characters removed (N8)", " \u200bhttps://a.example/x\ufeff\n", true},
		{"unreserved-escape", "percent-encoded unreserved characters decoded (N8)", "https://a.example/%78", true},
		{"path-case", "path case is significant: another record", "https://a.example/X", false},
		{"other-port", "a non-default port is another origin: another record", "https://a.example:8443/x", false},
		{"other-scheme", "http and https are different locations: another record", "http://a.example/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{})
			e1 := g.Register(ctx, from("srv", plain(first)))
			e2 := g.Register(ctx, from("srv", plain(tt.uri)))
			if got := e1.ID == e2.ID; got != tt.same {
				t.Errorf("N8: %+q and %+q share a record = %t, want %t (%s)", first, tt.uri, got, tt.same, tt.reason)
			}
			wantLen := 2
			if tt.same {
				wantLen = 1
			}
			if n := g.Len(); n != wantLen {
				t.Errorf("N8/R2: Len = %d, want %d (%s)", n, wantLen, tt.reason)
			}
			rec, ok := g.ByURI(tt.uri)
			if !ok || rec.ID != e2.ID {
				t.Errorf("N8: ByURI(%+q) = %q, %t; want %q", tt.uri, rec.ID, ok, e2.ID)
			}
			if tt.same && rec.URI != first {
				t.Errorf("R5: Record.URI = %+q, want the raw uri first registered %+q", rec.URI, first)
			}
			if e, ok := g.EntryForURI(tt.uri); !ok || e.ID != e2.ID {
				t.Errorf("N8: EntryForURI(%+q) = %q, %t; want %q", tt.uri, e.ID, ok, e2.ID)
			}
		})
	}
}

func TestWhoseWordCounts(t *testing.T) {
	ctx := t.Context()
	const u = "https://files.example/a.wav"
	expiring := func(at string) convert.Testimony {
		return convert.Testimony{URI: u, ExpiresAt: at, Present: convert.FieldURI | convert.FieldExpiresAt}
	}
	tests := []struct {
		name, reason string
		steps        []convert.Registration
		want         convert.Testimony
		wantServers  []string
	}{
		{
			name:        "serverless-keeps-server",
			reason:      "a serverless registration does not replace a server's testimony (R6)",
			steps:       []convert.Registration{from("s1", named(u, "server-said")), from("", named(u, "relay-said"))},
			want:        named(u, "server-said"),
			wantServers: []string{"s1"},
		},
		{
			name:        "serverless-expiry-does-not-supersede",
			reason:      "a serverless fresh expiry does not replace a server's (R6 over E3)",
			steps:       []convert.Registration{from("s1", expiring("2020-01-01T00:00:00Z")), from("", expiring("2099-01-01T00:00:00Z"))},
			want:        expiring("2020-01-01T00:00:00Z"),
			wantServers: []string{"s1"},
		},
		{
			name:        "serverless-replaces-serverless",
			reason:      "while no server has bound the record, a later serverless word replaces an earlier one (R6)",
			steps:       []convert.Registration{from("", named(u, "first")), from("", named(u, "second"))},
			want:        named(u, "second"),
			wantServers: nil,
		},
		{
			name:        "server-first-word-replaces-serverless",
			reason:      "R6: once a server speaks for a record that only serverless content had named, that server's testimony takes over",
			steps:       []convert.Registration{from("", named(u, "relay-said")), from("s1", named(u, "server-said"))},
			want:        named(u, "server-said"),
			wantServers: []string{"s1"},
		},
		{
			name:        "server-later-word-replaces",
			reason:      "a server's later result with a fresh expiry supersedes the earlier expiry (E3)",
			steps:       []convert.Registration{from("s1", expiring("2020-01-01T00:00:00Z")), from("s1", expiring("2099-01-01T00:00:00Z"))},
			want:        expiring("2099-01-01T00:00:00Z"),
			wantServers: []string{"s1"},
		},
		{
			name:        "server-word-then-serverless-then-server",
			reason:      "a serverless word between two server words changes nothing (R6, E3)",
			steps:       []convert.Registration{from("s1", named(u, "one")), from("", named(u, "relay")), from("s1", named(u, "two"))},
			want:        named(u, "two"),
			wantServers: []string{"s1"},
		},
		{
			name:        "second-server-binds",
			reason:      "another server's word is a server's later word; both servers stay bound in order (R5, R6)",
			steps:       []convert.Registration{from("s1", named(u, "one")), from("s2", named(u, "two")), from("s1", named(u, "three"))},
			want:        named(u, "three"),
			wantServers: []string{"s1", "s2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{})
			var e convert.Entry
			for _, r := range tt.steps {
				e = g.Register(ctx, r)
			}
			if diff := cmp.Diff(tt.want, e.Testimony); diff != "" {
				t.Errorf("R6: Register entry testimony (-want +got) (%s):\n%s", tt.reason, diff)
			}
			rec := mustLookup(t, g, e.ID, "R6")
			if diff := cmp.Diff(tt.want, rec.Testimony); diff != "" {
				t.Errorf("R6: record testimony (-want +got) (%s):\n%s", tt.reason, diff)
			}
			if diff := cmp.Diff(tt.wantServers, rec.Servers); diff != "" {
				t.Errorf("R5/R6: servers (-want +got) (%s):\n%s", tt.reason, diff)
			}
			wantServer := ""
			if len(tt.wantServers) > 0 {
				wantServer = tt.wantServers[0]
			}
			if got := rec.Server(); got != wantServer {
				t.Errorf("R5: Record.Server() = %q, want the first bound %q", got, wantServer)
			}
		})
	}
}

// Two well-formed digests, and a testimony of digestedURI claiming one.
var (
	digestA = "sha256:" + strings.Repeat("A", 43)
	digestB = "sha256:" + strings.Repeat("B", 43)
)

const digestedURI = "https://files.example/a.wav"

func digested(d string) convert.Testimony {
	return convert.Testimony{URI: digestedURI, Digest: d, Present: convert.FieldURI | convert.FieldDigest}
}

func TestNewDigestForgetsSavedCopy(t *testing.T) {
	ctx := t.Context()
	const u = digestedURI
	d1, d2 := digestA, digestB
	tests := []struct {
		name, reason string
		again        convert.Registration
		keep         bool
	}{
		{"same-digest", "the same digest still describes the copy (R6)", from("s1", digested(d1)), true},
		{"no-digest", "testimony without a digest does not contradict the copy (R6)", from("s1", plain(u)), true},
		{"new-digest", "a server's new digest no longer matches the copy: forget it (R6, F19)", from("s1", digested(d2)), false},
		{"new-digest-other-server", "any server's new digest replaces the testimony and the copy (R6)", from("s2", digested(d2)), false},
		{"serverless-new-digest", "a serverless digest replaces nothing, so the copy stays (R6)", from("", digested(d2)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A forgotten copy is named by nothing any more, so the
			// Remover deletes it; a host without one finds its path in
			// the log alone (F20).
			rm := &fakeRemover{}
			g := newReg(t, refs.Config{Remover: rm})
			e := g.Register(ctx, from("s1", digested(d1)))
			saved := convert.Copy{Path: "store/" + e.ID + ".wav", Bytes: 19, MimeType: "audio/wav", DigestVerified: true}
			if err := g.Save(e.ID, saved, digested(d1)); err != nil {
				t.Fatalf("F19: Save = %v", err)
			}
			after := g.Register(ctx, tt.again)
			rec := mustLookup(t, g, e.ID, "R6")
			if got := rec.Copy != nil; got != tt.keep {
				t.Errorf("R6: saved copy kept = %t, want %t (%s)", got, tt.keep, tt.reason)
			}
			var wantRemoved []string
			if !tt.keep {
				wantRemoved = []string{saved.Path}
			}
			if diff := cmp.Diff(wantRemoved, rm.removed()); diff != "" {
				t.Errorf("F20: copies removed (-want +got):\n%s", diff)
			}
			if got := after.Copy != nil; got != tt.keep {
				t.Errorf("R6: Register entry has a Copy = %t, want %t (%s)", got, tt.keep, tt.reason)
			}
			if tt.keep {
				if diff := cmp.Diff(&saved, rec.Copy); diff != "" {
					t.Errorf("F19: saved facts changed (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(&saved, after.Copy); diff != "" {
					t.Errorf("F19: the entry's saved facts (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSave(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name, reason string
		// prepare returns the id to save under, given a registry of
		// capacity 2.
		prepare func(g *refs.Registry) string
		wantErr error
	}{
		{
			name:    "live",
			reason:  "a fetch of a held, unmarked record records its verified facts (F19)",
			prepare: func(g *refs.Registry) string { return g.Register(ctx, from("srv", plain(uriN(1)))).ID },
		},
		{
			name:   "evicted",
			reason: "a record evicted during the fetch must not take the copy (F20, R8)",
			prepare: func(g *refs.Registry) string {
				id := g.Register(ctx, from("srv", plain(uriN(1)))).ID
				g.Register(ctx, from("srv", plain(uriN(2))))
				g.Register(ctx, from("srv", plain(uriN(3))))
				return id
			},
			wantErr: refs.ErrGone,
		},
		{
			name:   "replaced-under-uri",
			reason: "after eviction the uri's new record is not the one the fetch began with (F20)",
			prepare: func(g *refs.Registry) string {
				id := g.Register(ctx, from("srv", plain(uriN(1)))).ID
				g.Register(ctx, from("srv", plain(uriN(2))))
				g.Register(ctx, from("srv", plain(uriN(3))))
				g.Register(ctx, from("srv", plain(uriN(1))))
				return id
			},
			wantErr: refs.ErrGone,
		},
		{
			name:   "removed",
			reason: "a removed record takes no copy (F20)",
			prepare: func(g *refs.Registry) string {
				id := g.Register(ctx, from("srv", plain(uriN(1)))).ID
				g.Remove(id)
				return id
			},
			wantErr: refs.ErrGone,
		},
		{
			name:   "marked",
			reason: "a never-marked record records no copy (N1, F18)",
			prepare: func(g *refs.Registry) string {
				e, _ := g.MarkNever(ctx, uriN(1), "srv")
				return e.ID
			},
			wantErr: refs.ErrMarked,
		},
		{
			name:   "marked-after-registration",
			reason: "a mark that lands during the fetch refuses the save (N1, F18)",
			prepare: func(g *refs.Registry) string {
				id := g.Register(ctx, from("srv", plain(uriN(1)))).ID
				g.Register(ctx, convert.Registration{Testimony: plain(uriN(1)), Server: "other", Never: true})
				return id
			},
			wantErr: refs.ErrMarked,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{Capacity: 2})
			id := tt.prepare(g)
			s := convert.Copy{Path: "store/x.wav", Bytes: 42, MimeType: "audio/wav", DigestVerified: true}
			err := g.Save(id, s, plain(uriN(1)))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("F19/F20: Save = %v, want %v (%s)", err, tt.wantErr, tt.reason)
			}
			rec, held := g.Lookup(id)
			if tt.wantErr != nil {
				if held && rec.Copy != nil {
					t.Errorf("F20: a refused Save left a copy on the record (%s)", tt.reason)
				}
				if cur, ok := g.ByURI(uriN(1)); ok && cur.Copy != nil {
					t.Errorf("F20: a refused Save left a copy on the uri's current record %q (%s)", cur.ID, tt.reason)
				}
				return
			}
			if diff := cmp.Diff(&s, rec.Copy); diff != "" {
				t.Errorf("F19: Lookup Copy (-want +got):\n%s", diff)
			}
			e, _ := g.Entry(id)
			want := convert.Entry{ID: id, Testimony: rec.Testimony, Copy: &s}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("F19/R5: Entry after Save (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSaveAgainstTestimony pins F20 for a record whose digest changes
// while the bytes are in flight: a copy is recorded only against the
// digest the record claims now, and the digest it was verified against
// decides whether a later digest still describes it.
func TestSaveAgainstTestimony(t *testing.T) {
	ctx := t.Context()
	const u = digestedURI
	d1, d2 := digestA, digestB
	tests := []struct {
		name, reason string
		record       convert.Testimony // what the record claims when the bytes arrive
		against      convert.Testimony // what the bytes were verified against
		wantErr      error
		// later is a server's later testimony; keep is whether the copy
		// still describes it.
		later convert.Testimony
		keep  bool
	}{
		{
			name: "same-digest", reason: "bytes verified against the digest the record claims are recorded (F19)",
			record: digested(d1), against: digested(d1), later: digested(d1), keep: true,
		},
		{
			name: "digest-changed-in-flight", reason: "bytes verified against an older digest are refused (F20)",
			record: digested(d2), against: digested(d1), wantErr: refs.ErrGone,
		},
		{
			name: "digest-arrived-in-flight", reason: "bytes fetched before the record claimed any digest are refused (F20)",
			record: digested(d1), against: plain(u), wantErr: refs.ErrGone,
		},
		{
			name: "no-digest-either-side", reason: "with no digest claimed the copy is recorded (F19)",
			record: plain(u), against: plain(u), later: plain(u), keep: true,
		},
		{
			name: "no-digest-then-digest", reason: "a copy verified against no digest does not describe a digest claimed later (R6, F19)",
			record: plain(u), against: plain(u), later: digested(d1), keep: false,
		},
		{
			name: "digest-then-other-digest", reason: "a copy verified against one digest does not describe another (R6, F19)",
			record: digested(d1), against: digested(d1), later: digested(d2), keep: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newReg(t, refs.Config{})
			id := g.Register(ctx, from("s1", tt.record)).ID
			c := convert.Copy{Path: "store/" + id + ".wav", Bytes: 5, MimeType: "audio/wav", DigestVerified: tt.against.Has(convert.FieldDigest)}
			err := g.Save(id, c, tt.against)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("F19/F20: Save = %v, want %v (%s)", err, tt.wantErr, tt.reason)
			}
			if tt.wantErr != nil {
				if rec := mustLookup(t, g, id, "F20"); rec.Copy != nil {
					t.Errorf("F20: a refused Save left a copy on the record (%s)", tt.reason)
				}
				return
			}
			g.Register(ctx, from("s1", tt.later))
			rec := mustLookup(t, g, id, "R6")
			if got := rec.Copy != nil; got != tt.keep {
				t.Errorf("R6: copy kept after later testimony = %t, want %t (%s)", got, tt.keep, tt.reason)
			}
		})
	}
}

func TestSnapshotIsolation(t *testing.T) {
	ctx := t.Context()
	const u = "https://files.example/a.wav"
	g := newReg(t, refs.Config{})
	e := g.Register(ctx, from("s1", named(u, "a")))
	g.Register(ctx, from("s2", named(u, "b")))
	if err := g.Save(e.ID, convert.Copy{Path: "store/a.wav", Bytes: 3}, named(u, "b")); err != nil {
		t.Fatalf("setup: Save = %v", err)
	}
	// The expected record is written out, not read back: a snapshot
	// taken earlier would share any slice or pointer the registry leaked,
	// and so change along with the record.
	want := refs.Record{
		ID:        e.ID,
		URI:       u,
		Testimony: named(u, "b"),
		Servers:   []string{"s1", "s2"},
		Copy:      &convert.Copy{Path: "store/a.wav", Bytes: 3},
	}
	mutate := func(r refs.Record) {
		r.Servers[0], r.Servers[1] = "intruder", "another"
		r.Copy.Path = "/etc/passwd"
		r.Copy.Bytes = 1 << 40
	}
	mutate(mustLookup(t, g, e.ID, "R5"))
	byURI, ok := g.ByURI(u)
	if !ok {
		t.Fatalf("setup: ByURI(%q) found nothing", u)
	}
	mutate(byURI)

	if diff := cmp.Diff(want, mustLookup(t, g, e.ID, "R5")); diff != "" {
		t.Errorf("R5/R7: mutating returned Records reached the registry (-want +got):\n%s", diff)
	}
	if again, _ := g.ByURI(u); !cmp.Equal(want, again) {
		t.Errorf("R5/R7: ByURI sees a mutated record: %+v", again)
	}

	// Entries carry the copy too, and hand out their own (R5): the
	// registry reads it under its lock and copies it after unlocking.
	entries := map[string]func() (convert.Entry, bool){
		"Entry":       func() (convert.Entry, bool) { return g.Entry(e.ID) },
		"EntryForURI": func() (convert.Entry, bool) { return g.EntryForURI(u) },
		"Register":    func() (convert.Entry, bool) { return g.Register(ctx, from("s2", named(u, "b"))), true },
	}
	for name, get := range entries {
		got, ok := get()
		if !ok || got.Copy == nil {
			t.Fatalf("setup: %s gave no copy (ok %t)", name, ok)
		}
		got.Copy.Path, got.Copy.Bytes = "/etc/shadow", 1<<41
		if diff := cmp.Diff(want, mustLookup(t, g, e.ID, "R5")); diff != "" {
			t.Errorf("R5: mutating the copy of an entry from %s reached the registry (-want +got):\n%s", name, diff)
		}
	}
}

func TestEvictReasonString(t *testing.T) {
	tests := []struct {
		name, reason string
		in           refs.EvictReason
		want         string
	}{
		{"capacity", "capacity evictions read as such in logs (R8)", refs.EvictCapacity, "capacity"},
		{"removed", "host removals read as such in logs (R8)", refs.EvictRemoved, "removed"},
		{"zero", "an unset reason is not mistaken for a real one", refs.EvictReason(0), "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("R8: EvictReason(%d).String() = %q, want %q (%s)", int(tt.in), got, tt.want, tt.reason)
			}
		})
	}
}

// TestSaveMarked pins F19 for a fetcher without a withhold hook: a copy of
// a never-marked record is recorded, while the views and Save still treat
// the mark as before.
func TestSaveMarked(t *testing.T) {
	ctx := t.Context()
	g := newReg(t, refs.Config{})
	e, _ := g.MarkNever(ctx, uriN(1), "srv")
	s := convert.Copy{Path: "store/x.wav", Bytes: 42, MimeType: "audio/wav", DigestVerified: true}
	if err := g.Save(e.ID, s, plain(uriN(1))); !errors.Is(err, refs.ErrMarked) {
		t.Fatalf("Save on a marked record = %v, want ErrMarked", err)
	}
	if err := g.SaveMarked(e.ID, s, plain(uriN(1))); err != nil {
		t.Fatalf("SaveMarked = %v", err)
	}
	rec, _ := g.Lookup(e.ID)
	if diff := cmp.Diff(&s, rec.Copy); diff != "" {
		t.Errorf("F19: the record's copy (-want +got):\n%s", diff)
	}
	if ent, _ := g.Entry(e.ID); !ent.Never {
		t.Error("N1: recording a copy lifted the mark")
	}
	if err := g.SaveMarked("ref_gone", s, plain(uriN(1))); !errors.Is(err, refs.ErrGone) {
		t.Errorf("F20: SaveMarked on an unknown id = %v, want ErrGone", err)
	}
}

// TestServerSpellingIsFetched pins R6 and F2 for the spelling a record is
// fetched from: serverless content that names a uri first, in a spelling
// of its own that shares the key (a trailing dot, an explicit port), must
// not choose the address a server's later reference is fetched from. A
// server's first word replaces serverless testimony, and its spelling
// becomes the record's uri; a later server's spelling does not replace
// it. Every spelling still finds the record, and none does once it is
// evicted, however many spellings it collected.
func TestServerSpellingIsFetched(t *testing.T) {
	ctx := t.Context()
	const own = "https://a.example/x"
	planted := []string{"https://a.example./x", "https://A.example:443/x", "HTTPS://a.example/%78",
		"https://a.EXAMPLE/x", "https://a.example:443/%78", "https://a.Example/x", "https://A.EXAMPLE/x",
		"https://a.example.:443/x", "https://a.eXample/x"}
	for _, n := range []int{1, len(planted)} { // one spelling before; more than the fast path indexes
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			g := newReg(t, refs.Config{Capacity: 1})
			for _, p := range planted[:n] {
				g.Register(ctx, from("", plain(p)))
			}
			e := g.Register(ctx, from("srv", plain(own)))
			if rec := mustLookup(t, g, e.ID, "R2"); rec.URI != own {
				t.Errorf("R6/F2: after serverless %+q, the server's reference is fetched from %+q, want its own spelling %+q", planted[0], rec.URI, own)
			}
			g.Register(ctx, from("other", plain("HTTPS://A.EXAMPLE/x")))
			g.Register(ctx, from("", plain("https://a.example./x")))
			if rec := mustLookup(t, g, e.ID, "R2"); rec.URI != own {
				t.Errorf("R6: a later server's or serverless spelling replaced the first server's: %+q", rec.URI)
			}
			for _, s := range append([]string{own}, planted[:n]...) {
				if rec, ok := g.ByURI(s); !ok || rec.ID != e.ID {
					t.Errorf("N8: ByURI(%+q) = %q, %t; want %q", s, rec.ID, ok, e.ID)
				}
			}
			g.Register(ctx, from("srv", plain(uriN(1)))) // evicts the record
			for _, s := range append([]string{own}, planted[:n]...) {
				if rec, ok := g.ByURI(s); ok && rec.ID == e.ID {
					t.Errorf("R3: ByURI(%+q) still finds the evicted record", s)
				}
			}
		})
	}
	t.Run("mark", func(t *testing.T) {
		g := newReg(t, refs.Config{})
		g.Register(ctx, from("", plain(planted[0])))
		e, ok := g.MarkNever(ctx, own, "srv")
		if !ok {
			t.Fatal("setup: MarkNever refused")
		}
		if rec := mustLookup(t, g, e.ID, "R2"); rec.URI != own {
			t.Errorf("R6/F2: after serverless %+q, a server's never leaves the record fetched from %+q, want %+q", planted[0], rec.URI, own)
		}
	})
}

// TestUnknownErrorCutsWholeCharacters pins R4's bounded message for an id
// longer than the cut: the cut never splits a UTF-8 sequence, which
// strconv.Quote would show as a stray byte escape.
func TestUnknownErrorCutsWholeCharacters(t *testing.T) {
	id := strings.Repeat("a", 63) + "€€"
	msg := (&refs.UnknownError{ID: id}).Error()
	if strings.Contains(msg, `\x`) {
		t.Errorf("R4: error text %s holds a cut byte", msg)
	}
	if want := "unknown reference: " + strconv.Quote(strings.Repeat("a", 63)); msg != want {
		t.Errorf("R4: error text = %s, want %s", msg, want)
	}
}

// TestPanickingRemoverIsLogged pins F20's clean-up for a Remover that
// panics: the removal may run on a fetch's goroutine, after the call that
// asked for it, so the panic is logged as the Remover's error, never
// raised, and the registry goes on.
func TestPanickingRemoverIsLogged(t *testing.T) {
	ctx := t.Context()
	var logs logtest.Buffer
	g := newReg(t, refs.Config{Remover: removerFunc(func(context.Context, string) error { panic("store offline") }), Logger: logs.Logger()})
	e := g.Register(ctx, from("s1", digested(digestA)))
	saved := convert.Copy{Path: "store/" + e.ID + ".wav", Bytes: 19, MimeType: "audio/wav", DigestVerified: true}
	if err := g.Save(e.ID, saved, digested(digestA)); err != nil {
		t.Fatal(err)
	}
	g.Register(ctx, from("s1", digested(digestB))) // makes the copy stale
	if rec := mustLookup(t, g, e.ID, "R6"); rec.Copy != nil {
		t.Errorf("R6: the stale copy is still named: %+v", rec.Copy)
	}
	var found bool
	for _, l := range logs.Lines(t) {
		if l["level"] == "ERROR" && strings.Contains(fmt.Sprint(l["err"]), "panicked: store offline") && l["path"] == saved.Path {
			found = true
		}
	}
	if !found {
		t.Errorf("F20: no error line names the Remover's panic and the copy's path:\n%s", logs.String())
	}
}

// stallRemover honours its context, as a delete from a stalled object
// store does: each Remove waits until its context ends or open is closed.
type stallRemover struct {
	calls   atomic.Int32
	entered [2]chan struct{}
	open    chan struct{}
}

func (r *stallRemover) Remove(ctx context.Context, _ string) error {
	if n := r.calls.Add(1); n <= 2 {
		close(r.entered[n-1])
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.open:
		return nil
	}
}

// TestRemovalRunsNoOtherCallersWork pins F20's clean-up against a slow
// Remover: a Register whose removal is under way when another call asks
// for a removal on the same record returns once its own removal ends (at
// its deadline here); it does not run the other call's removal too.
func TestRemovalRunsNoOtherCallersWork(t *testing.T) {
	digestC := "sha256:" + strings.Repeat("C", 43)
	rm := &stallRemover{entered: [2]chan struct{}{make(chan struct{}), make(chan struct{})}, open: make(chan struct{})}
	defer close(rm.open)
	g := newReg(t, refs.Config{Remover: rm})
	e := g.Register(t.Context(), from("s1", digested(digestA)))
	if err := g.Save(e.ID, convert.Copy{Path: "store/one.wav", MimeType: "audio/wav"}, digested(digestA)); err != nil {
		t.Fatal(err)
	}
	aDone := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		g.Register(ctx, from("s1", digested(digestB))) // one.wav is stale
		close(aDone)
	}()
	<-rm.entered[0]
	if err := g.Save(e.ID, convert.Copy{Path: "store/two.wav", MimeType: "audio/wav"}, digested(digestB)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	g.Register(ctx, from("s1", digested(digestC))) // two.wav is stale
	cancel()
	select {
	case <-aDone:
	case <-time.After(10 * time.Second):
		t.Fatal("a Register whose deadline was 100 ms has not returned: it is running another call's removal")
	}
}
