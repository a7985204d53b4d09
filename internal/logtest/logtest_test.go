package logtest

import "testing"

func TestBuffer(t *testing.T) {
	var b Buffer
	b.Logger().Info("first", "k", "v")
	b.Logger().Debug("second")
	lines := b.Lines(t)
	if len(lines) != 2 || lines[0]["msg"] != "first" || lines[0]["k"] != "v" || lines[1]["msg"] != "second" {
		t.Errorf("lines = %v", lines)
	}
}
