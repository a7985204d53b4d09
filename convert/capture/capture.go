package capture

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Defaults a zero [Options] gets.
const (
	// DefaultMaxPending is how many results a Capture keeps untaken.
	DefaultMaxPending = 1024
	// DefaultMaxBytes is the largest JSON-RPC message a Capture reads
	// whole.
	DefaultMaxBytes = 64 << 20
	// DefaultMaxPendingBytes bounds the content bytes of all untaken
	// results together.
	DefaultMaxPendingBytes int64 = 256 << 20
	// DefaultNotifications is the length of the notification queue.
	DefaultNotifications = 256
)

// Options sets up a [Capture]. Its zero value is the default for every
// field; a zero or negative number means the default, never "unlimited".
type Options struct {
	// MaxPending is how many results are kept until taken; when one more
	// arrives, the oldest is let go and counted in [Stats.Dropped]. It
	// also bounds how many sent requests a connection remembers while
	// their answers are outstanding. Zero means DefaultMaxPending.
	MaxPending int
	// MaxBytes is the largest JSON-RPC message the capture reads whole,
	// in bytes: a larger tool result is kept only as a mark that it was
	// too large, and a larger notification is not kept. The SDK still
	// reads every byte. Zero means DefaultMaxBytes. A host that bounds
	// the SDK's own reading lower (go-sdk's MaxEventSize) sets MaxBytes
	// no higher: a result the SDK refuses as too large is otherwise
	// still captured.
	MaxBytes int
	// MaxPendingBytes bounds the content bytes of all untaken results
	// together; past it, the oldest results are let go. Zero means
	// DefaultMaxPendingBytes, and it is never less than MaxBytes.
	MaxPendingBytes int64
	// Notifications is the length of the queue [Capture.Notifications]
	// returns; when it is full, the oldest notification is let go. Zero
	// means DefaultNotifications.
	Notifications int
	// NoNotifications keeps no notifications at all.
	NoNotifications bool
}

// Errors of [Capture.Take] and [Capture.TakeID]. Test them with errors.Is.
var (
	// ErrNoCall means the context carries no call: make it with
	// [WithCall].
	ErrNoCall = errors.New("capture: the context marks no call; make it with capture.WithCall")
	// ErrNotCaptured means no result is held for the call: the server
	// did not answer with content, the SDK did not read the answer, the
	// result was taken already, or the bounds let it go.
	ErrNotCaptured = errors.New("capture: no result was captured for this call")
	// ErrTooLarge means the call's result was larger than
	// [Options.MaxBytes], so its content was not kept.
	ErrTooLarge = errors.New("capture: the result was larger than the capture's bound")
	// ErrAmbiguous means the server answered the call in a way the SDKs
	// read differently (the package documentation lists them): in an
	// event of a type other than "message", after a line the SDKs split
	// or read apart, in or after a message go-sdk cannot decode, over
	// stdio in a message spanning lines, or, for a call kept by its id,
	// twice with different results. Which answer the SDK took is not
	// known, so none is given.
	ErrAmbiguous = errors.New("capture: the server answered the call in more than one way")
)

// Result is one tool result as the server sent it.
type Result struct {
	// ID is the JSON-RPC id of the request it answers, as JSON text:
	// 7 or "a1".
	ID string
	// Method is the method of the request it answers ("tools/call"), or
	// "" when the capture did not see the request.
	Method string
	// Content is the result's content blocks, each exactly the bytes the
	// server wrote. Hand them to convert.Converter.Ingest.
	Content []json.RawMessage
	// IsError is the result's isError.
	IsError bool
}

// Notification is one JSON-RPC notification a server sent.
type Notification struct {
	// Method is the notification's method, such as
	// "notifications/message".
	Method string
	// Params is the notification's params, exactly as the server wrote
	// them, or nil when it had none.
	Params json.RawMessage
	// Content is params.content when it is an array: the raw blocks of a
	// push event, each exactly the bytes the server wrote.
	Content []json.RawMessage
}

// Stats counts what a Capture holds and what it let go.
type Stats struct {
	// Pending is how many results are held, not yet taken.
	Pending int
	// PendingBytes is the content bytes of the held results.
	PendingBytes int64
	// Dropped counts results let go untaken: pushed out by the bounds, or
	// replaced by a newer result of the same call.
	Dropped int64
	// TooLarge counts results and notifications larger than
	// [Options.MaxBytes].
	TooLarge int64
	// NotificationsDropped counts notifications let go because the queue
	// was full.
	NotificationsDropped int64
}

// A Capture reads the JSON-RPC traffic between an MCP client SDK and its
// servers as it passes, beneath the SDK, and keeps each tool result's raw
// content blocks for the host to take. Wire it in with [Capture.Transport]
// (streamable HTTP) or [Capture.Stdio] and [Capture.Command] (stdio). It
// never changes, holds back or buffers the bytes the SDK reads or writes.
//
// A Capture is safe for concurrent use. One Capture may serve many
// connections; results taken by context never mix, while ids repeat
// across connections, so take by id only with one connection per Capture.
// The zero Capture is not usable; make one with [New].
type Capture struct {
	maxBytes   int
	maxPending int

	mu           sync.Mutex
	results      *bounded[held]
	pending      *bounded[callInfo] // HTTP requests whose answers are outstanding, by scope and id
	tooLarge     int64
	notes        chan Notification
	notesDropped int64
}

// held is one kept result, or the mark of one too large to keep or
// answered in more than one way.
type held struct {
	res       Result
	size      int64
	tooLarge  bool
	ambiguous bool
}

// New returns a Capture with the bounds opts sets.
func New(opts Options) *Capture {
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxPendingBytes <= 0 {
		opts.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if opts.MaxPendingBytes < int64(opts.MaxBytes) {
		opts.MaxPendingBytes = int64(opts.MaxBytes)
	}
	if opts.Notifications <= 0 {
		opts.Notifications = DefaultNotifications
	}
	c := &Capture{
		maxBytes:   opts.MaxBytes,
		maxPending: opts.MaxPending,
		results:    newBounded(opts.MaxPending, opts.MaxPendingBytes, func(h held) int64 { return h.size }),
		pending:    newBounded[callInfo](opts.MaxPending, 0, nil),
	}
	if !opts.NoNotifications {
		c.notes = make(chan Notification, opts.Notifications)
	}
	return c
}

// Take removes and returns the result of the call ctx marks (see
// [WithCall]). Call it after the SDK's call returns: by then the capture
// has read the result, even when the SDK failed to decode it. With
// [ErrTooLarge], the Result names the call (ID and Method) and has no
// content.
func (c *Capture) Take(ctx context.Context) (Result, error) {
	t := tokenOf(ctx)
	if t == "" {
		return Result{}, ErrNoCall
	}
	return c.take("t" + t)
}

// Blocks is [Capture.Take] for the content alone: the raw blocks of the
// call ctx marks, for convert.Converter.Ingest.
func (c *Capture) Blocks(ctx context.Context) ([]json.RawMessage, error) {
	r, err := c.Take(ctx)
	return r.Content, err
}

// TakeID removes and returns the result that answered the request with
// JSON-RPC id id (a number, a string, or a json.RawMessage of either),
// when that request carried no call token. Ids repeat across connections,
// so use one Capture per connection when taking by id.
func (c *Capture) TakeID(id any) (Result, error) {
	raw, err := json.Marshal(id)
	if err != nil {
		return Result{}, ErrNotCaptured
	}
	k := canonID(raw)
	if k == "" {
		return Result{}, ErrNotCaptured
	}
	return c.take("i" + k)
}

func (c *Capture) take(key string) (Result, error) {
	c.mu.Lock()
	h, ok := c.results.take(key)
	c.mu.Unlock()
	switch {
	case !ok:
		return Result{}, ErrNotCaptured
	case h.ambiguous:
		return h.res, ErrAmbiguous
	case h.tooLarge:
		return h.res, ErrTooLarge
	}
	return h.res, nil
}

// Notifications returns the queue of notifications the servers sent, in
// the order they were read. Nothing waits for the queue: when it is full,
// the oldest is let go. It is nil when [Options.NoNotifications] is set.
func (c *Capture) Notifications() <-chan Notification {
	return c.notes
}

// Stats returns the current counts.
func (c *Capture) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Pending:              c.results.len(),
		PendingBytes:         c.results.bytes,
		Dropped:              c.results.evicted,
		TooLarge:             c.tooLarge,
		NotificationsDropped: c.notesDropped,
	}
}
