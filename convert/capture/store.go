package capture

import "container/list"

// A bounded keeps values by key in arrival order and lets the oldest go
// when it holds more than maxCount values or, with size set, more than
// maxBytes bytes (it always keeps the newest value).
type bounded[V any] struct {
	items    map[string]*list.Element
	order    list.List
	maxCount int
	maxBytes int64
	bytes    int64
	size     func(V) int64
	evicted  int64
}

type boundedItem[V any] struct {
	key string
	val V
}

func newBounded[V any](maxCount int, maxBytes int64, size func(V) int64) *bounded[V] {
	return &bounded[V]{items: map[string]*list.Element{}, maxCount: maxCount, maxBytes: maxBytes, size: size}
}

func (b *bounded[V]) sizeOf(v V) int64 {
	if b.size == nil {
		return 0
	}
	return b.size(v)
}

// put keeps v under key. A value already under key is let go, and so are
// the oldest values past the bounds; each counts as evicted.
func (b *bounded[V]) put(key string, v V) {
	if _, ok := b.take(key); ok {
		b.evicted++
	}
	b.items[key] = b.order.PushBack(&boundedItem[V]{key, v})
	b.bytes += b.sizeOf(v)
	for b.order.Len() > 1 && (b.order.Len() > b.maxCount || (b.size != nil && b.bytes > b.maxBytes)) {
		front := b.order.Front()
		b.remove(front)
		b.evicted++
	}
}

// peek returns the value under key, leaving it in place.
func (b *bounded[V]) peek(key string) (V, bool) {
	e, ok := b.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	return e.Value.(*boundedItem[V]).val, true
}

// take removes and returns the value under key.
func (b *bounded[V]) take(key string) (V, bool) {
	e, ok := b.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	it := e.Value.(*boundedItem[V])
	b.remove(e)
	return it.val, true
}

func (b *bounded[V]) remove(e *list.Element) {
	it := b.order.Remove(e).(*boundedItem[V])
	delete(b.items, it.key)
	b.bytes -= b.sizeOf(it.val)
}

func (b *bounded[V]) len() int { return b.order.Len() }
