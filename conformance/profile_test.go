package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcplrefs/refcore/fetch"
)

// TestProfileDocumentedFailures runs the two wirings Profile's doc warns
// about and checks that they fail exactly the cases it names: a fetcher
// that does not fetch never references (as a host serving a model must
// not), and one that keeps those copies in a HostStore, which the judge
// does not see.
func TestProfileDocumentedFailures(t *testing.T) {
	hostStore, err := fetch.NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hostStore.Close() })
	saving := []string{"03-verified-never", "13-observed-mime", "14-path-label", "18-label-controls", "18-label-device", "19-gzip-identity"}
	for _, tt := range []struct {
		name string
		p    Profile
		want []string
	}{
		{"fetch-never-off", Profile{}, append([]string{"05-digest-mismatch", "10-stream-ceiling", "12-cross-origin-redirect", "19-gzip-decoded-ceiling"}, saving...)},
		{"host-store", Profile{Fetch: fetch.Config{FetchNever: true, HostStore: hostStore}}, saving},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			if _, _, err := Run(t.Context(), RunOptions{Host: tt.p}, &out); err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, line := range strings.Split(out.String(), "\n") {
				if id, ok := strings.CutPrefix(line, "FAIL "); ok {
					failed = append(failed, id[:strings.IndexByte(id, ':')])
				}
			}
			slices.Sort(failed)
			slices.Sort(tt.want)
			if diff := cmp.Diff(tt.want, failed); diff != "" {
				t.Errorf("failed cases (-documented +got):\n%s", diff)
			}
		})
	}
}
