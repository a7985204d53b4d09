package capture

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// feed hands the capture, on one stdio connection, the client's requests
// and then the server's answers, and returns what the client read.
func feed(t *testing.T, tap *Capture, requests, answers string) string {
	t.Helper()
	r, w := tap.Stdio(strings.NewReader(answers), io.Discard)
	if _, err := w.Write([]byte(requests)); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func answer(id, content string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[` + content + `]}}` + "\n"
}

// Past MaxPending, the oldest untaken results are let go and counted.
func TestBoundPending(t *testing.T) {
	tap := New(Options{MaxPending: 3})
	var answers string
	for i := 1; i <= 5; i++ {
		answers += answer(strconv.Itoa(i), textBlock)
	}
	feed(t, tap, "", answers)
	if st := tap.Stats(); st.Pending != 3 || st.Dropped != 2 {
		t.Fatalf("stats %+v, want 3 held and 2 dropped", st)
	}
	for _, id := range []int{1, 2} {
		if _, err := tap.TakeID(id); !errors.Is(err, ErrNotCaptured) {
			t.Errorf("result %d: %v, want it dropped", id, err)
		}
	}
	for _, id := range []int{3, 4, 5} {
		if _, err := tap.TakeID(id); err != nil {
			t.Errorf("result %d: %v", id, err)
		}
	}
}

// Past MaxPendingBytes, the oldest untaken results are let go.
func TestBoundPendingBytes(t *testing.T) {
	big := `{"type":"text","text":"` + strings.Repeat("a", 400) + `"}`
	tap := New(Options{MaxBytes: 1000, MaxPendingBytes: 1000})
	feed(t, tap, "", answer("1", big)+answer("2", big)+answer("3", big))
	if st := tap.Stats(); st.Pending != 2 || st.Dropped != 1 || st.PendingBytes != int64(2*len(big)) {
		t.Fatalf("stats %+v", st)
	}
	if _, err := tap.TakeID(1); !errors.Is(err, ErrNotCaptured) {
		t.Errorf("the oldest: %v, want it dropped", err)
	}
}

// A result larger than MaxBytes leaves a mark for its call, found by the
// id the server wrote after the content, and the client still reads every
// byte.
func TestBoundTooLarge(t *testing.T) {
	tap := New(Options{MaxBytes: 256})
	ctx := WithCall(context.Background())
	blob := strings.Repeat("QUJD", 1000)
	// The id comes last, as some SDKs write it; a nested "id" and a string
	// holding "id" come first and must not be taken for it.
	msg := `{"result":{"id":99,"content":[{"type":"text","text":"\"id\":98 ` + blob + `"}]},"jsonrpc":"2.0","id":7}` + "\n"
	got := feed(t, tap, toolCall("7", Meta(ctx))+"\n", msg)
	if got != msg {
		t.Fatal("the client did not read what the server sent")
	}
	res, err := tap.Take(ctx)
	if !errors.Is(err, ErrTooLarge) || res.ID != "7" || res.Method != "tools/call" || res.Content != nil {
		t.Fatalf("%+v, %v; want the too-large mark for id 7", res, err)
	}
	if st := tap.Stats(); st.TooLarge != 1 || st.Pending != 0 {
		t.Errorf("stats %+v", st)
	}

	// A too-large notification is only counted.
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + blob + `"}}` + "\n"
	feed(t, tap, "", note)
	if st := tap.Stats(); st.TooLarge != 2 || len(tap.Notifications()) != 0 {
		t.Errorf("stats %+v, %d notifications", st, len(tap.Notifications()))
	}
}

// A too-large answer to a request that cannot carry a tool result leaves
// no mark.
func TestBoundTooLargeOtherMethod(t *testing.T) {
	tap := New(Options{MaxBytes: 64})
	req := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}` + "\n"
	feed(t, tap, req, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"`+strings.Repeat("x", 100)+`"}]}}`+"\n")
	if st := tap.Stats(); st.TooLarge != 1 || st.Pending != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A newer result for the same call replaces the older, which counts as
// dropped.
func TestBoundSameCall(t *testing.T) {
	tap := New(Options{})
	ctx := WithCall(context.Background())
	feed(t, tap, toolCall("1", Meta(ctx))+toolCall("2", Meta(ctx)), answer("1", textBlock)+answer("2", refBlock))
	blocks, err := tap.Blocks(ctx)
	if err != nil || len(blocks) != 1 || string(blocks[0]) != refBlock {
		t.Fatalf("%q, %v", blocks, err)
	}
	if st := tap.Stats(); st.Dropped != 1 {
		t.Errorf("stats %+v", st)
	}
}

// The notification queue keeps the newest when it is full, and never
// holds the reader up.
func TestBoundNotifications(t *testing.T) {
	tap := New(Options{Notifications: 2})
	var in bytes.Buffer
	for i := range 5 {
		in.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + strconv.Itoa(i) + `}}` + "\n")
	}
	feed(t, tap, "", in.String())
	if st := tap.Stats(); st.NotificationsDropped != 3 {
		t.Errorf("stats %+v", st)
	}
	for _, want := range []string{`{"data":3}`, `{"data":4}`} {
		if n := <-tap.Notifications(); string(n.Params) != want {
			t.Errorf("params %s, want %s", n.Params, want)
		}
	}

	off := New(Options{NoNotifications: true})
	feed(t, off, "", in.String())
	if off.Notifications() != nil || off.Stats().NotificationsDropped != 0 {
		t.Error("a capture with NoNotifications kept some")
	}
}

// Requests the server never answers are remembered only up to the bound.
func TestBoundRequests(t *testing.T) {
	tap := New(Options{MaxPending: 2})
	ctx := WithCall(context.Background())
	var reqs string
	reqs += toolCall("1", Meta(ctx))
	for i := 2; i <= 4; i++ {
		reqs += toolCall(strconv.Itoa(i), nil)
	}
	r, w := tap.Stdio(strings.NewReader(answer("1", textBlock)), io.Discard)
	w.Write([]byte(reqs))
	io.ReadAll(r)
	// Request 1 was forgotten, so its answer is kept by id.
	if _, err := tap.Take(ctx); !errors.Is(err, ErrNotCaptured) {
		t.Errorf("Take: %v", err)
	}
	if _, err := tap.TakeID(1); err != nil {
		t.Errorf("TakeID: %v", err)
	}
}

// Zero and negative options mean the defaults.
func TestOptionsDefaults(t *testing.T) {
	for _, o := range []Options{{}, {MaxPending: -1, MaxBytes: -1, MaxPendingBytes: -1, Notifications: -1}} {
		c := New(o)
		if c.maxPending != DefaultMaxPending || c.maxBytes != DefaultMaxBytes || c.results.maxBytes != DefaultMaxPendingBytes || cap(c.notes) != DefaultNotifications {
			t.Errorf("%+v gave %d %d %d %d", o, c.maxPending, c.maxBytes, c.results.maxBytes, cap(c.notes))
		}
	}
	if c := New(Options{MaxBytes: 10 << 20, MaxPendingBytes: 1}); c.results.maxBytes != 10<<20 {
		t.Errorf("pending bytes %d, want at least MaxBytes", c.results.maxBytes)
	}
	if Meta(context.Background()) != nil {
		t.Error("Meta of a context with no call")
	}
	if a, b := tokenOf(WithCall(context.Background())), tokenOf(WithCall(context.Background())); a == "" || a == b {
		t.Errorf("tokens %q and %q", a, b)
	}
}
