package sdk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// glueMark ends each line of a README snippet that a host adds or changes
// to wire refcore in; the README shows the line without it.
var glueMark = regexp.MustCompile(`[ \t]*// glue$`)

// snippet joins the lines between each "// readme:<name>:begin" and
// "// readme:<name>:end" marker in src, one tab of indentation removed
// and glue marks dropped, the parts separated by a line "// …". It also
// returns how many lines carried a glue mark.
func snippet(src, name string) (string, int) {
	var parts []string
	var b strings.Builder
	glue := 0
	in := false
	for _, line := range strings.Split(src, "\n") {
		switch strings.TrimSpace(line) {
		case "// readme:" + name + ":begin":
			in = true
			b.Reset()
			continue
		case "// readme:" + name + ":end":
			in = false
			parts = append(parts, b.String())
			continue
		}
		if in {
			if glueMark.MatchString(line) {
				glue++
				line = glueMark.ReplaceAllString(line, "")
			}
			b.WriteString(strings.TrimPrefix(line, "\t"))
			b.WriteString("\n")
		}
	}
	return strings.Join(parts, "// …\n"), glue
}

// TestReadmeSDKSections keeps each SDK section of the README equal to the
// code the end-to-end tests run, so the README cannot rot, and checks the
// glue count each section states.
func TestReadmeSDKSections(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ file, name string }{
		{"gosdk_test.go", "go-sdk-http"},
		{"gosdk_test.go", "go-sdk-stdio"},
		{"mcpgo_test.go", "mcp-go-http"},
		{"mcpgo_test.go", "mcp-go-stdio"},
	} {
		src, err := os.ReadFile(s.file)
		if err != nil {
			t.Fatal(err)
		}
		code, glue := snippet(string(src), s.name)
		if code == "" || glue == 0 {
			t.Errorf("%s has no %s snippet with glue marks", s.file, s.name)
			continue
		}
		block := "```go\n" + code + "```\n"
		at := strings.Index(string(readme), block)
		if at < 0 {
			t.Errorf("README.md lacks the %s snippet of %s, or it differs; it should read:\n%s", s.name, s.file, block)
			continue
		}
		// The paragraph just before the snippet states its glue count.
		before := string(readme[:at])
		if i := strings.LastIndex(before, "\n\n"); i >= 0 {
			before = before[:i]
		}
		para := before[strings.LastIndex(before, "\n\n")+1:]
		if want := fmt.Sprintf("%d lines of glue", glue); !strings.Contains(strings.Join(strings.Fields(para), " "), want) {
			t.Errorf("the paragraph before README.md's %s snippet should say %q:\n%s", s.name, want, para)
		}
	}
}
