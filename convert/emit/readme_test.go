package emit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeSnippet keeps the README's "For server authors" snippet equal
// to the marked part of Example, which go test runs, so it cannot rot.
func TestReadmeSnippet(t *testing.T) {
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	in, found := false, false
	for _, line := range strings.Split(string(example), "\n") {
		switch strings.TrimSpace(line) {
		case "// readme:begin":
			in, found = true, true
			continue
		case "// readme:end":
			in = false
			continue
		}
		if in {
			b.WriteString(strings.TrimPrefix(line, "\t"))
			b.WriteString("\n")
		}
	}
	if !found {
		t.Fatal("Example has no readme:begin/end markers")
	}
	if want := "```go\n" + b.String() + "```\n"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md's server author snippet differs from Example; it should read:\n%s", want)
	}
}
