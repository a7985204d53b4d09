package capture

import (
	"errors"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Stdio wraps the two byte streams of a stdio connection: r, what the
// client reads from the server, and w, what the client writes to it. Hand
// the returned pair to the SDK in their place. Each Read returns exactly
// what r returned, and each Write passes p to w whole; the capture reads
// the bytes on the way. Close closes r or w when it is an io.Closer.
//
// Over stdio the capture cannot see a call's context, so a call whose
// result [Capture.Take] should find carries [Meta] in its params' _meta.
func (c *Capture) Stdio(r io.Reader, w io.Writer) (io.ReadCloser, io.WriteCloser) {
	p := &pipe{c: c, pending: newBounded[callInfo](c.maxPending, 0, nil)}
	in := newLineStream(c.maxBytes, func(s *jsonScan) { c.incoming(s, p) }, func(s *jsonScan) { c.incomingSpanning(s, p) },
		p.trailingAnswer)
	out := newJSONStream(c.maxBytes, func(s *jsonScan) { c.outgoing(s, "", p) })
	return &stdioReader{r: r, f: in}, &stdioWriter{w: w, f: out}
}

// CommandGrace is how long the writer's Close from [Capture.Command] waits
// for the server to exit after closing its input, and again after asking
// it to terminate, before it kills the process.
const CommandGrace = 5 * time.Second

// Command returns the streams of cmd, a stdio server, through the capture,
// to hand the SDK (as [Capture.Stdio] does). cmd's Stdin and Stdout must
// be unset. The process starts when the SDK first reads or writes, which
// it does as it connects; if it cannot start, that read or write fails
// with the reason, and so does the SDK's connect.
//
// Closing the reader does nothing, so that the server may finish writing.
// Closing the writer ends the server: it closes the server's input, waits
// up to [CommandGrace] for it to exit, asks it to terminate, waits again,
// then kills it; that Close returns the process's exit error, if any.
func (c *Capture) Command(cmd *exec.Cmd) (io.ReadCloser, io.WriteCloser) {
	ch := &child{cmd: cmd}
	ch.stdout, ch.pipeErr = cmd.StdoutPipe()
	if ch.pipeErr == nil {
		ch.stdin, ch.pipeErr = cmd.StdinPipe()
	}
	return c.Stdio(childOutput{ch}, ch)
}

// errClosed is a stream's error after the writer from Command was closed
// before the process started.
var errClosed = errors.New("capture: the command's streams are closed")

// child is a stdio server's process, started on first use.
type child struct {
	cmd     *exec.Cmd
	stdout  io.ReadCloser
	stdin   io.WriteCloser
	pipeErr error

	startOnce sync.Once
	startErr  error
	closeOnce sync.Once
	closeErr  error
}

// start starts the process the first time it is called, and returns why
// it could not.
func (ch *child) start() error {
	ch.startOnce.Do(func() {
		if ch.pipeErr != nil {
			ch.startErr = ch.pipeErr
			return
		}
		ch.startErr = ch.cmd.Start()
	})
	return ch.startErr
}

// Write implements io.Writer: it writes to the server's input.
func (ch *child) Write(p []byte) (int, error) {
	if err := ch.start(); err != nil {
		return 0, err
	}
	return ch.stdin.Write(p)
}

// Close implements io.Closer: it ends the server.
func (ch *child) Close() error {
	ch.closeOnce.Do(func() {
		ch.startOnce.Do(func() { ch.startErr = errClosed })
		if ch.startErr != nil {
			// Never started: let the pipes go (a failed Start closed them
			// already).
			for _, c := range []io.Closer{ch.stdin, ch.stdout} {
				if c != nil && ch.startErr == errClosed {
					c.Close()
				}
			}
			return
		}
		closeErr := ch.stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- ch.cmd.Wait() }()
		wait := func() (bool, error) {
			select {
			case err := <-exited:
				return true, err
			case <-time.After(CommandGrace):
				return false, nil
			}
		}
		if ok, err := wait(); ok {
			ch.closeErr = errors.Join(closeErr, err)
			return
		}
		if ch.cmd.Process.Signal(syscall.SIGTERM) == nil {
			if ok, err := wait(); ok {
				ch.closeErr = errors.Join(closeErr, err)
				return
			}
		}
		killErr := ch.cmd.Process.Kill()
		ch.closeErr = errors.Join(closeErr, killErr, <-exited)
	})
	return ch.closeErr
}

// childOutput is the server's output; closing it does nothing.
type childOutput struct{ ch *child }

// Read implements io.Reader: it reads the server's output.
func (o childOutput) Read(p []byte) (int, error) {
	if err := o.ch.start(); err != nil {
		return 0, err
	}
	return o.ch.stdout.Read(p)
}

// pipe is one stdio connection's memory of its client's requests.
type pipe struct {
	c       *Capture
	pending *bounded[callInfo] // under c.mu
	// routed is the request the last response routed answered, and
	// routedID its id, so that a byte the server writes after that
	// response on its line can still mark its call (see trailingAnswer).
	// Under c.mu.
	routed   callInfo
	routedID string
}

func (p *pipe) record(id string, info callInfo) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.pending.put(id, info)
}

func (p *pipe) route(id string) (callInfo, bool) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	info, ok := p.pending.take(id)
	if ok {
		p.routed, p.routedID = info, id
	}
	return info, ok
}

// trailingAnswer marks ambiguous the call a response with this id and
// method answers, once the server wrote another byte than a line break
// after it on its line: go-sdk fails the connection there, and mcp-go
// cannot parse the line.
func (p *pipe) trailingAnswer(id, method []byte) {
	canon, m := canonID(id), unquote(method)
	if m != "" || canon == "" {
		return // a notification or a request
	}
	p.c.mu.Lock()
	info, routed := p.routed, p.routedID == canon
	p.c.mu.Unlock()
	if !routed {
		p.c.otherAnswer(canon, "", p) // not routed yet: route it now
		return
	}
	if answersTool(info.method) {
		p.c.keep(info.token, held{res: Result{ID: canon, Method: info.method}, ambiguous: true})
	}
}

// pendingIDs returns the ids of the requests whose answers are
// outstanding.
func (p *pipe) pendingIDs() []string {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	ids := make([]string, 0, len(p.pending.items))
	for id := range p.pending.items {
		ids = append(ids, id)
	}
	return ids
}

// others returns nothing: over stdio both SDKs match a response to its
// request by id.
func (p *pipe) others(string) []string { return nil }

func (p *pipe) forget(id string) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.pending.take(id)
}

type stdioReader struct {
	r  io.Reader
	f  *jsonStream
	mu sync.Mutex
}

// Read implements io.Reader.
func (s *stdioReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.r.Read(p)
	if n > 0 {
		s.f.write(p[:n])
	}
	return n, err
}

// Close implements io.Closer.
func (s *stdioReader) Close() error {
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type stdioWriter struct {
	w  io.Writer
	f  *jsonStream
	mu sync.Mutex
}

// Write implements io.Writer. It reads p before passing it on, so that a
// request is known before its answer can arrive.
func (s *stdioWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.write(p)
	return s.w.Write(p)
}

// Close implements io.Closer.
func (s *stdioWriter) Close() error {
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
