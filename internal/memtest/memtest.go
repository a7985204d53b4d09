package memtest

import "runtime"

// Held returns the bytes of heap that stay alive after run: the live heap
// after it less the live heap before it, each read once the collector has
// run twice. Two collections also empty the sync.Pool caches (such as
// encoding/json's buffers), which keep what they hold through one.
func Held(run func()) int64 {
	before := live()
	run()
	return int64(live()) - int64(before)
}

func live() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
