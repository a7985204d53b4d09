package refs

// lru is the registry's recency order: a doubly linked list threaded
// through the records themselves, most recently used first, so a touch
// or an eviction moves two pointers and allocates nothing (against
// container/list, BenchmarkRegister/miss and BenchmarkGet measure the
// difference). Guarded by Registry.mu.
type lru struct {
	root record // sentinel: root.next is the most recent, root.prev the least
	n    int
}

func (l *lru) init() {
	l.root.next, l.root.prev = &l.root, &l.root
}

// pushFront links r in as the most recent.
func (l *lru) pushFront(r *record) {
	r.prev, r.next = &l.root, l.root.next
	l.root.next.prev = r
	l.root.next = r
	l.n++
}

// touch makes r the most recent.
func (l *lru) touch(r *record) {
	if l.root.next == r {
		return
	}
	r.prev.next, r.next.prev = r.next, r.prev
	r.prev, r.next = &l.root, l.root.next
	l.root.next.prev = r
	l.root.next = r
}

// remove unlinks r.
func (l *lru) remove(r *record) {
	r.prev.next, r.next.prev = r.next, r.prev
	r.prev, r.next = nil, nil
	l.n--
}

// oldest returns the least recently used record, or nil when empty.
func (l *lru) oldest() *record {
	if l.n == 0 {
		return nil
	}
	return l.root.prev
}
