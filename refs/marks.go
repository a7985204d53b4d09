package refs

import (
	"context"
	"strings"
	"sync"
)

// MarkStore keeps never marks by canonical uri beyond the registry's own
// memory, so that a mark outlives its record, the process, or the host
// (marks in a shared database, for a fleet). The registry always keeps the
// marks it made in memory as well; the store is the durable layer.
//
// The registry never calls a MarkStore with a lock of its own held, so an
// implementation may block on the network and may call back into the
// registry. A fetcher asks it while it holds the lock of one record's
// copy (see fetch.Store), so it must not wait for a fetch of the same
// reference. Implementations must be safe for concurrent use.
//
// A store never sees a uri: its keys are "sha256:" and the base64url
// SHA-256 digest of the uri's canonical form, since a uri may carry a
// credential. The same uri always gives the same key.
//
// Failure is closed: when Mark fails, the mark still holds in the
// registry's memory for the process's life, and the next never for that
// uri tries the store again; when Marked fails, the uri is treated as
// marked, and a record a registration creates then stays withheld while
// the registry holds it. A record the registry held before keeps its
// state, and its saved copy: an outage is not a mark. An error is logged
// (with the uri cut out), never shown to a model.
type MarkStore interface {
	// Mark records that server's content marked key never. It returns
	// once the mark is durable as far as the store promises.
	Mark(ctx context.Context, key, server string) error
	// Marked reports whether any server marked key.
	Marked(ctx context.Context, key string) (bool, error)
}

// A BatchMarkStore is a [MarkStore] that can record many of one server's
// marks in one step, as [FileMarks] does with one write and one sync. The
// registry uses it when a content marks several uris never at once (see
// [Registry.StoreNeverMarks]).
type BatchMarkStore interface {
	MarkStore
	// MarkAll records that server's content marked each of keys never,
	// and returns once all of them are durable as far as the store
	// promises. On an error some may be recorded; the registry marks
	// each key again afterwards, one at a time.
	MarkAll(ctx context.Context, keys []string, server string) error
}

// DefaultMarkBound is how many marks a [MemoryMarks] keeps for each
// server when made with a zero bound.
const DefaultMarkBound = 100_000

// MemoryMarks is an in-memory [MarkStore], the one each registry keeps of
// its own. It bounds the marks it keeps per server and, at a server's
// bound, forgets that server's oldest mark first: a flood of marks from
// one server evicts only that server's marks, never another's. A key
// marked by several servers stays marked while any of them holds it. Its
// methods never fail. It is safe for concurrent use. The zero MemoryMarks
// is an empty store with the default bound; [NewMemoryMarks] sets another.
type MemoryMarks struct {
	mu       sync.Mutex
	bound    int
	byServer map[string]*serverMarks
	holders  map[string]int // key -> how many servers hold a mark on it
}

type serverMarks struct {
	set   map[string]struct{}
	order []string // oldest first; a ring would save copies, a slice is plain
}

// NewMemoryMarks returns an empty store keeping at most bound marks per
// server; zero or less means [DefaultMarkBound].
func NewMemoryMarks(bound int) *MemoryMarks {
	if bound <= 0 {
		bound = DefaultMarkBound
	}
	return &MemoryMarks{bound: bound, byServer: make(map[string]*serverMarks), holders: make(map[string]int)}
}

// Mark records server's mark on key. It never fails.
func (m *MemoryMarks) Mark(_ context.Context, key, server string) error {
	m.mark(key, server)
	return nil
}

func (m *MemoryMarks) mark(key, server string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byServer == nil { // the zero MemoryMarks
		m.byServer, m.holders = make(map[string]*serverMarks), make(map[string]int)
	}
	if m.bound <= 0 {
		m.bound = DefaultMarkBound
	}
	sm := m.byServer[server]
	if sm == nil {
		sm = &serverMarks{set: make(map[string]struct{})}
		m.byServer[server] = sm
	}
	if _, ok := sm.set[key]; ok {
		return
	}
	if len(sm.order) >= m.bound {
		old := sm.order[0]
		sm.order = sm.order[1:]
		delete(sm.set, old)
		if m.holders[old]--; m.holders[old] <= 0 {
			delete(m.holders, old)
		}
	}
	// The key may be part of a much longer string, such as a uri with a
	// long fragment or a text that names the uri; the mark outlives it,
	// and must not keep it alive (TestMarksKeepNoURIs).
	key = strings.Clone(key)
	sm.set[key] = struct{}{}
	sm.order = append(sm.order, key)
	m.holders[key]++
}

// Marked reports whether any server holds a mark on key. It never fails.
func (m *MemoryMarks) Marked(_ context.Context, key string) (bool, error) {
	return m.marked(key), nil
}

func (m *MemoryMarks) marked(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holders[key] > 0
}
