package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickstart keeps the README's quickstart equal to the marked
// parts of the example that go test runs, so the README cannot rot.
func TestReadmeQuickstart(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "fetch", "example_host_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := quickstart(string(example))
	if want == "" {
		t.Fatal("the example has no quickstart:begin/end markers")
	}
	if !strings.Contains(string(readme), "```go\n"+want+"```\n") {
		t.Errorf("README.md's quickstart differs from fetch/example_host_test.go; it should read:\n```go\n%s```", want)
	}
}

// quickstart joins the lines between each "// quickstart:begin" and
// "// quickstart:end" marker, one tab of indentation removed, the parts
// separated by a line "// …".
func quickstart(src string) string {
	var parts []string
	var b strings.Builder
	in := false
	for _, line := range strings.Split(src, "\n") {
		switch strings.TrimSpace(line) {
		case "// quickstart:begin":
			in = true
			b.Reset()
			continue
		case "// quickstart:end":
			in = false
			parts = append(parts, b.String())
			continue
		}
		if in {
			b.WriteString(strings.TrimPrefix(line, "\t"))
			b.WriteString("\n")
		}
	}
	return strings.Join(parts, "// …\n")
}
