package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
)

// TestEagerPlan pins G1–G3.
func TestEagerPlan(t *testing.T) {
	e := newEnv(t, body(wavBody, ""))
	// One reference of the result was fetched before: it has a copy.
	fetched := e.ref(serverName, blkURI("$ORIGIN/fetched", `,"sizeBytes":19`))
	if _, err := e.fetch(context.Background(), fetched, Request{}); err != nil {
		t.Fatal(err)
	}
	blocks := []string{
		blkURI("$ORIGIN/small", `,"sizeBytes":10`),                                    // 0 picked
		blkURI("$ORIGIN/small", `,"sizeBytes":10`),                                    // repeat: no second slot
		blkURI("$ORIGIN/nosize", ``),                                                  // no claimed size: never eager
		blkURI("$ORIGIN/big", `,"sizeBytes":2000000`),                                 // over the eager ceiling
		blkURI("http://cdn.example/x", `,"sizeBytes":10`),                             // another origin
		blkURI("$ORIGIN/expired", `,"sizeBytes":10,"expiresAt":"2000-01-01"`),         // expired
		blkURI("$ORIGIN/never", `,"sizeBytes":10,"disposition":"never"`),              // never-marked
		blkURI("$ORIGIN/later-expired", `,"sizeBytes":10`),                            // expired by a later block
		blkURI("$ORIGIN/later-expired", `,"sizeBytes":10,"expiresAt":"not-a-date"`),   // ...this one
		blkURI("$ORIGIN/earlier-expired", `,"sizeBytes":10,"expiresAt":"2000-01-01"`), // an earlier block calls it expired...
		blkURI("$ORIGIN/earlier-expired", `,"sizeBytes":10`),                          // ...though the record's latest word does not
		blkURI("ws://$HOST/x", `,"sizeBytes":10`),                                     // scheme
		blkURI("$ORIGIN/fetched", `,"sizeBytes":19`),                                  // has a saved copy
	}
	for i := range 10 {
		blocks = append(blocks, blkURI(fmt.Sprintf("$ORIGIN/fill-%d", i), `,"sizeBytes":10`))
	}
	raw := make([]json.RawMessage, len(blocks))
	for i, b := range blocks {
		raw[i] = json.RawMessage(strings.ReplaceAll(strings.ReplaceAll(b, "$ORIGIN", e.srv.URL), "$HOST", e.host()))
	}
	conv, err := convert.New(e.reg, convert.Policy{Refusal: e.f.Refusal})
	if err != nil {
		t.Fatal(err)
	}
	ct := conv.Ingest(context.Background(), raw, convert.Source{Server: serverName, Lane: convert.LaneToolResult, Tool: "render"})
	requests := e.requests.Load()
	logs := e.logs.String()

	plan := e.f.EagerPlan(ct)
	var got []string
	for _, id := range plan {
		rec, ok := e.reg.Lookup(id)
		if !ok {
			t.Fatalf("the plan names %s, which the registry does not hold", id)
		}
		got = append(got, strings.TrimPrefix(rec.URI, e.srv.URL))
	}
	want := []string{"/small", "/fill-0", "/fill-1", "/fill-2", "/fill-3", "/fill-4", "/fill-5", "/fill-6"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("eager plan (-want +got):\n%s", diff)
	}
	if n := e.requests.Load() - requests; n != 0 {
		t.Errorf("planning made %d requests", n)
	}
	if l := e.logs.String(); l != logs {
		t.Errorf("passed-over references were logged (G3):\n%s", strings.TrimPrefix(l, logs))
	}

	capped, err := New(e.reg, ServersFunc(e.server), e.store, Config{EagerCap: 2, EagerCeiling: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plan[:2], capped.EagerPlan(ct)); diff != "" {
		t.Errorf("a plan capped at 2 (-want +got):\n%s", diff)
	}
	below, err := New(e.reg, ServersFunc(e.server), e.store, Config{EagerCeiling: 9})
	if err != nil {
		t.Fatal(err)
	}
	if p := below.EagerPlan(ct); len(p) != 0 {
		t.Errorf("an eager ceiling below every claim planned %d", len(p))
	}
}
