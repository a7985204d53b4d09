package refs

import (
	"sync"
	"testing"
	"time"
)

// TestLockExcludes pins that Registry.lock, which tries a held lock for a
// while before it queues, still lets one caller in at a time: more
// goroutines than processors add to a counter that only the lock guards,
// and none of the additions may be lost (R7; under -race the detector
// watches the counter too). The holders sometimes keep the lock past the
// callers' tries, so waiting in the queue is exercised as well.
func TestLockExcludes(t *testing.T) {
	g, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 16, 2000
	count := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				g.lock()
				count++
				if (w+i)%500 == 0 {
					time.Sleep(50 * time.Microsecond) // longer than the tries
				}
				g.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if count != workers*rounds {
		t.Fatalf("R7: %d additions under the registry lock, want %d", count, workers*rounds)
	}
}
