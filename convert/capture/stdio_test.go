package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder keeps every byte written through it.
type recorder struct {
	mu sync.Mutex
	b  bytes.Buffer
	w  io.Writer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.b.Write(p)
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.b.Bytes())
}

// stdioServer answers each newline-delimited request read from in with a
// result naming its id, preceded by a notification, writing each message
// one byte at a time and its newline separately.
func stdioServer(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req rpcRequest
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working on ` + string(req.ID) + `"}}`
		answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"for ` + string(req.ID) + `"},` + refBlock + `]}}`
		for _, msg := range []string{note, answer} {
			for i := range len(msg) {
				out.Write([]byte{msg[i]})
			}
			out.Write([]byte("\n"))
		}
	}
}

// A stdio connection: the client reads and the server receives exactly
// the bytes sent, and each call, marked in its _meta, gets its own result
// even when many run at once.
func TestStdio(t *testing.T) {
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	serverIn := &recorder{w: io.Discard}
	serverOut := &recorder{w: toClientW}
	go func() {
		stdioServer(io.TeeReader(toServerR, serverIn), serverOut)
		toClientW.Close()
	}()

	tap := New(Options{})
	r, w := tap.Stdio(toClientR, toServerW)

	// The client's reader, like an SDK's: one goroutine hands each line to
	// the call waiting for its id.
	var mu sync.Mutex
	waiting := map[string]chan []byte{}
	clientIn := &recorder{w: io.Discard}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		br := bufio.NewReaderSize(io.TeeReader(r, clientIn), 16)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var m rpcRequest
			json.Unmarshal(line, &m)
			mu.Lock()
			ch := waiting[string(m.ID)]
			mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()

	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			id := strconv.Itoa(i + 1)
			ch := make(chan []byte, 1)
			mu.Lock()
			waiting[id] = ch
			mu.Unlock()
			ctx := WithCall(context.Background())
			if _, err := w.Write([]byte(toolCall(id, Meta(ctx)) + "\n")); err != nil {
				t.Error(err)
				return
			}
			<-ch
			res, err := tap.Take(ctx)
			if err != nil || len(res.Content) != 2 || string(res.Content[0]) != `{"type":"text","text":"for `+id+`"}` || string(res.Content[1]) != refBlock {
				t.Errorf("call %s: %+v, %v", id, res, err)
			}
		})
	}
	wg.Wait()
	w.Close()
	<-readDone
	if got, sent := clientIn.bytes(), serverOut.bytes(); !bytes.Equal(got, sent) {
		t.Errorf("the client read %d bytes that differ from the %d the server sent", len(got), len(sent))
	}
	notes := 0
	for len(tap.Notifications()) > 0 {
		n := <-tap.Notifications()
		if n.Method != "notifications/message" {
			t.Errorf("notification %+v", n)
		}
		notes++
	}
	if notes != 32 {
		t.Errorf("%d notifications, want 32", notes)
	}
	if st := tap.Stats(); st.Pending != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Without a token in its _meta, a stdio call's result is kept by id; a
// cancelled request is forgotten, so its late answer names no method.
func TestStdioByID(t *testing.T) {
	tap := New(Options{})
	answers := `{"jsonrpc":"2.0","id":5,"result":{"content":[` + refBlock + `]}}` + "\n" +
		`{"jsonrpc":"2.0","id":6,"result":{"content":[` + textBlock + `]}}` + "\n"
	var sent bytes.Buffer
	r, w := tap.Stdio(bytes.NewReader([]byte(answers)), &sent)
	out := toolCall("5", nil) + "\n" + toolCall("6", nil) + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}` + "\n"
	if n, err := w.Write([]byte(out)); n != len(out) || err != nil || sent.String() != out {
		t.Fatalf("wrote %d, %v: %q", n, err, sent.String())
	}
	if b, _ := io.ReadAll(r); string(b) != answers {
		t.Fatalf("read %q", b)
	}
	res, err := tap.TakeID(5)
	if err != nil || res.Method != "" || len(res.Content) != 1 || string(res.Content[0]) != refBlock {
		t.Errorf("the cancelled call's answer: %+v, %v", res, err)
	}
	res, err = tap.TakeID(6)
	if err != nil || res.Method != "tools/call" || len(res.Content) != 1 {
		t.Errorf("the other call's answer: %+v, %v", res, err)
	}
}

// A message closed without a newline is captured when its last byte is
// read: an SDK that decodes JSON values need not wait for the newline.
func TestStdioNoNewline(t *testing.T) {
	tap := New(Options{})
	ctx := WithCall(context.Background())
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[` + refBlock + `]}}`
	pr, pw := io.Pipe()
	r, w := tap.Stdio(pr, io.Discard)
	w.Write([]byte(toolCall("1", Meta(ctx))))
	go pw.Write([]byte(answer))
	buf := make([]byte, len(answer))
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	blocks, err := tap.Blocks(ctx)
	if err != nil || len(blocks) != 1 {
		t.Fatalf("%q, %v", blocks, err)
	}
	pw.Close()
}

// Command runs a real child process through the capture, and closing the
// writer ends it.
func TestCommand(t *testing.T) {
	if os.Getenv("CAPTURE_TEST_CHILD") == "1" {
		stdioServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestCommand$")
	cmd.Env = append(os.Environ(), "CAPTURE_TEST_CHILD=1")
	tap := New(Options{})
	r, w := tap.Command(cmd)
	if cmd.Process != nil {
		t.Fatal("the process started before the first read or write")
	}
	ctx := WithCall(context.Background())
	w.Write([]byte(toolCall("1", Meta(ctx)) + "\n"))
	br := bufio.NewReader(r)
	for range 2 {
		if _, err := br.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	blocks, err := tap.Blocks(ctx)
	if err != nil || len(blocks) != 2 || string(blocks[1]) != refBlock {
		t.Fatalf("%q, %v", blocks, err)
	}
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if time.Since(start) > CommandGrace {
		t.Errorf("the child did not exit when its input closed")
	}
	if err := r.Close(); err != nil {
		t.Errorf("reader close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Errorf("the child is still running")
	}
}

// A command that cannot start fails the first read and write with the
// reason; one closed before it started never starts.
func TestCommandFails(t *testing.T) {
	tap := New(Options{})
	r, w := tap.Command(exec.Command(filepath.Join(t.TempDir(), "no-such-server")))
	if _, err := w.Write([]byte("{}\n")); err == nil {
		t.Error("a write to a server that cannot start succeeded")
	}
	if _, err := r.Read(make([]byte, 8)); err == nil {
		t.Error("a read from a server that cannot start succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("close: %v", err)
	}

	cmd := exec.Command("true")
	r, w = tap.Command(cmd)
	if err := w.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, errClosed) || cmd.Process != nil {
		t.Errorf("read after close: %v, process %v", err, cmd.Process)
	}

	cmd = exec.Command("true")
	cmd.Stdout = io.Discard
	_, w = tap.Command(cmd)
	if _, err := w.Write([]byte("{}")); err == nil {
		t.Error("a command with its Stdout set started")
	}
}

// TestStdioSpanningMessage: over stdio go-sdk decodes JSON across lines
// and mcp-go reads each line alone, so a message spanning lines can give
// the two different answers (here go-sdk takes A and mcp-go B): the
// capture gives neither.
func TestStdioSpanningMessage(t *testing.T) {
	result := func(block string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[` + block + `]}`
	}
	for name, out := range map[string]string{
		"nested":        result(textBlock) + `,"pad":[` + "\n" + result(refBlock) + "}\n]}\n",
		"pretty":        "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\"content\": [" + refBlock + "]}\n}\n",
		"id-after-line": `{"jsonrpc":"2.0","result":{"content":[` + textBlock + `]},"pad":[` + "\n" + result(refBlock) + "}\n],\"id\":1}\n",
		// A wrapper with no id of its own, then a line mcp-go reads alone.
		"notification-wrapper": `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[` + "\n" +
			result(textBlock) + "}\n]}}\n" + result(refBlock) + "}\n",
		"idless-wrapper": `{"pad":[` + "\n" + result(textBlock) + "}\n]}\n" + result(refBlock) + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			wantAmbiguous(t, New(Options{}), out)
		})
	}
}

// TestStdioSpanningOversized: a text spanning lines that is too large to
// keep cannot be read line by line as mcp-go reads it, so every call
// still waiting for its answer is ambiguous.
func TestStdioSpanningOversized(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[` + refBlock + `]}}`
	out := `{"pad":"` + strings.Repeat("x", 300) + `","inner":[` + "\n" + answer + "\n]}\n" + answer + "\n"
	wantAmbiguous(t, New(Options{MaxBytes: 256}), out)
}

// TestStdioTrailingBytes: a response followed on its line by another byte
// than a line break is read apart (go-sdk fails the connection at that
// byte, mcp-go cannot parse the line), so its call is ambiguous, and so
// is any call answered after it; a line break, CRLF included, is fine.
func TestStdioTrailingBytes(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[` + refBlock + `]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`
	for name, out := range map[string]string{
		"space":           answer + " \n",
		"tab":             answer + "\t\n",
		"junk":            answer + "ok\n",
		"two-on-one-line": answer + note + "\n",
		"after-junk":      note + " x\n" + answer + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			wantAmbiguous(t, New(Options{}), out)
		})
	}
	for name, out := range map[string]string{"lf": answer + "\n", "crlf": answer + "\r\n", "last": answer} {
		if blocks, err := stdioBlocks(t, New(Options{}), out); err != nil || len(blocks) != 1 {
			t.Errorf("%s: %q, %v; want the answer", name, blocks, err)
		}
	}
}

// wantAmbiguous makes tool call 1 over stdio, through tap, to a server
// that writes out, and fails unless the call's result is ErrAmbiguous.
func wantAmbiguous(t *testing.T, tap *Capture, out string) {
	t.Helper()
	if blocks, err := stdioBlocks(t, tap, out); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Blocks = %q, %v; want ErrAmbiguous", blocks, err)
	}
}

// stdioBlocks makes tool call 1 over stdio, through tap, to a server that
// writes out, and returns what the capture gives for the call.
func stdioBlocks(t *testing.T, tap *Capture, out string) ([]json.RawMessage, error) {
	t.Helper()
	ctx := WithCall(context.Background())
	r, w := tap.Stdio(strings.NewReader(out), io.Discard)
	if _, err := io.WriteString(w, toolCall("1", Meta(ctx))+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	return tap.Blocks(ctx)
}
