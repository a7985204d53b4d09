package fetch

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/internal/copylock"
)

// TestMain checks, once every test of the package has run, that each
// fetch let go of the copy lock it took (F12: nothing of a fetch stays
// behind, whichever way it ended). Removals put off may still be running
// on their own goroutines, so it waits a while for them.
func TestMain(m *testing.M) {
	code := m.Run()
	for wait := time.Now().Add(10 * time.Second); copylock.Len() != 0 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := copylock.Len(); n != 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "F12: %d copy locks are still held or awaited after every test ended\n", n)
		code = 1
	}
	os.Exit(code)
}
