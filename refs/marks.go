package refs

import "sync"

// MarkStore remembers never marks by canonical uri so a mark outlives the
// record it was made on (behaviors N7). A host that wants marks to survive
// a restart supplies a durable implementation. Implementations must be
// safe for concurrent use; they are called with the registry's lock held,
// so they must not call back into the registry.
type MarkStore interface {
	// Mark records that server's content marked key never.
	Mark(key, server string)
	// Marked reports whether key carries a mark.
	Marked(key string) bool
}

// DefaultMarkBound is the number of marks a [MemoryMarks] made with a zero
// bound keeps.
const DefaultMarkBound = 100_000

// MemoryMarks is the default in-memory [MarkStore]. It keeps at most its
// bound of marks, dropping the oldest first, so a hostile server cannot
// grow it without limit. It is safe for concurrent use.
type MemoryMarks struct {
	mu    sync.Mutex
	bound int
	set   map[string]struct{}
	order []string
}

// NewMemoryMarks returns an empty store keeping at most bound marks; zero
// or less means DefaultMarkBound.
func NewMemoryMarks(bound int) *MemoryMarks {
	if bound <= 0 {
		bound = DefaultMarkBound
	}
	return &MemoryMarks{bound: bound, set: make(map[string]struct{})}
}

// Mark records a mark on key.
func (m *MemoryMarks) Mark(key, _ string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.set[key]; ok {
		return
	}
	if len(m.order) >= m.bound {
		delete(m.set, m.order[0])
		m.order = m.order[1:]
	}
	m.set[key] = struct{}{}
	m.order = append(m.order, key)
}

// Marked reports whether key carries a mark.
func (m *MemoryMarks) Marked(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.set[key]
	return ok
}
