package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// SplitContent reads what a server author or host author hands the
// validate and render commands: one block, an array of blocks, or a whole
// tool result ({"content": [...]}).
func SplitContent(data []byte) ([]json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(data))
	if trimmed == "" {
		return nil, errors.New("no input")
	}
	switch trimmed[0] {
	case '[':
		var blocks []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &blocks); err != nil {
			return nil, err
		}
		return blocks, nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &obj); err != nil {
			return nil, err
		}
		if content, ok := obj["content"]; ok {
			if _, typed := obj["type"]; !typed {
				var blocks []json.RawMessage
				if err := json.Unmarshal(content, &blocks); err != nil {
					return nil, fmt.Errorf("content: %w", err)
				}
				return blocks, nil
			}
		}
		return []json.RawMessage{json.RawMessage(trimmed)}, nil
	}
	return nil, errors.New("input is not a block, an array of blocks or a tool result")
}

// ValidateContent reports, per block, the strict schema verdict and
// the host's reading (kind, rejected fields). ok is false when any block is
// schema-invalid.
func ValidateContent(data []byte) (report string, ok bool, err error) {
	blocks, err := SplitContent(data)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	ok = true
	for i, raw := range blocks {
		verdict := "valid"
		if errs := convert.ValidateAll(raw); len(errs) > 0 {
			ok = false
			parts := make([]string, len(errs))
			for j, e := range errs {
				parts[j] = strings.TrimPrefix(e.Error(), "convert: ")
			}
			verdict = "INVALID: " + strings.Join(parts, "; ")
		}
		blk := convert.Classify(raw)
		reading := "kind " + string(blk.Kind)
		if names := blk.Testimony.RejectedNames(); len(names) > 0 {
			reading += ", rejected fields " + strings.Join(names, ", ")
		}
		if blk.Invalid != "" {
			reading += " (" + string(blk.Invalid) + ")"
		}
		if blk.Contradiction {
			reading += ", inline data withheld (data beside reference fields)"
		}
		fmt.Fprintf(&b, "block %d: schema %s\n  host reads: %s\n", i, verdict, reading)
	}
	return b.String(), ok, nil
}

// RenderContent shows what a model would see of content: the history text
// of a tool result, and the wake text and blocks of a push event. It
// registers in a throwaway registry and fetches nothing.
func RenderContent(data []byte) (string, error) {
	blocks, err := SplitContent(data)
	if err != nil {
		return "", err
	}
	reg, err := refs.New(refs.Config{Rand: &countingRand{}})
	if err != nil {
		return "", err
	}
	conv, err := convert.New(reg, convert.Policy{})
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	tool := conv.Ingest(ctx, blocks, convert.Source{Server: "example-server", Lane: convert.LaneToolResult, Tool: "example_tool"})
	push := conv.Ingest(ctx, blocks, convert.Source{Server: "example-server", Lane: convert.LanePush, Event: "example_event"})
	pushJSON, err := json.MarshalIndent(push.Push(), "", "  ")
	if err != nil {
		return "", err
	}
	return "== tool result history ==\n" + tool.History() + "\n\n== push wake ==\n" + push.Wake() +
		"\n\n== push blocks ==\n" + string(pushJSON) + "\n", nil
}

// countingRand gives render stable ids run to run: it is a display tool,
// not a host, and its registry lives for one command.
type countingRand struct{ n byte }

func (c *countingRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	c.n++
	p[len(p)-1] = c.n
	return len(p), nil
}
