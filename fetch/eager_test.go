package fetch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// TestEagerPlan pins G1–G3.
func TestEagerPlan(t *testing.T) {
	e := newEnv(t, body(wavBody, ""), withHook)
	blocks := []string{
		blkURI("$ORIGIN/small", `,"sizeBytes":10`),                                  // 0 picked
		blkURI("$ORIGIN/small", `,"sizeBytes":10`),                                  // repeat: no second slot
		blkURI("$ORIGIN/nosize", ``),                                                // no claimed size: never eager
		blkURI("$ORIGIN/big", `,"sizeBytes":2000000`),                               // over the eager ceiling
		blkURI("http://cdn.example/x", `,"sizeBytes":10`),                           // another origin
		blkURI("$ORIGIN/expired", `,"sizeBytes":10,"expiresAt":"2000-01-01"`),       // expired
		blkURI("$ORIGIN/never", `,"sizeBytes":10,"disposition":"never"`),            // never-marked
		blkURI("$ORIGIN/later-expired", `,"sizeBytes":10`),                          // expired by a later block
		blkURI("$ORIGIN/later-expired", `,"sizeBytes":10,"expiresAt":"not-a-date"`), // ...this one
		blkURI("ws://$HOST/x", `,"sizeBytes":10`),                                   // scheme
	}
	for i := range 10 {
		blocks = append(blocks, blkURI(fmt.Sprintf("$ORIGIN/fill-%d", i), `,"sizeBytes":10`))
	}
	var recs []refs.Record
	var parsed []convert.Block
	for _, b := range blocks {
		r := e.ref(serverName, b)
		recs = append(recs, r)
		parsed = append(parsed, convert.Classify([]byte(strings.ReplaceAll(strings.ReplaceAll(b, "$ORIGIN", e.srv.URL), "$HOST", e.host()))))
	}
	claims := convert.ReadClaims(parsed, convert.ClaimsAt(time.Now))
	plan := e.f.EagerPlan(recs, claims)
	var got []string
	for _, r := range plan {
		got = append(got, strings.TrimPrefix(r.URI, e.srv.URL))
	}
	want := []string{"/small", "/fill-0", "/fill-1", "/fill-2", "/fill-3", "/fill-4", "/fill-5", "/fill-6"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("eager plan (-want +got):\n%s", diff)
	}
	if n := e.requests.Load(); n != 0 {
		t.Errorf("planning made %d requests", n)
	}
	if logs := e.logs.String(); logs != "" {
		t.Errorf("passed-over references were logged (G3):\n%s", logs)
	}

	off := New(e.reg, ServersFunc(e.server), nil, Config{EagerCap: -1})
	if p := off.EagerPlan(recs, claims); len(p) != 0 {
		t.Errorf("a negative EagerCap planned %d", len(p))
	}
}
