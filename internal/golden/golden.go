package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update is the -update flag every test binary that imports this package
// gets: run `go test ./pkg -update` to rewrite its golden files.
var Update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Check compares got with the golden file at path. With -update it writes
// got there instead (creating directories as needed).
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from its golden file (-want +got); if the change is intended, rerun with -update and review:\n%s", path, diff)
	}
}
