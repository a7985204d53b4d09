package vectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Format is the only vectors format this package reads.
const Format = "mcpl-bulk-references-1"

// The operations a case may ask for.
const (
	OpRender   = "render"
	OpFetch    = "fetch"
	OpRegistry = "registry"
)

// File is one vectors file.
type File struct {
	Format   string   `json:"format"`
	Source   string   `json:"source"`
	Fixtures Fixtures `json:"fixtures"`
	Cases    []Case   `json:"cases"`
}

// Fixtures are the file's fixture settings.
type Fixtures struct {
	Token     string `json:"token"`
	Expansion string `json:"expansion"`
}

// Case is one vector.
type Case struct {
	ID          string            `json:"id"`
	Description string            `json:"description,omitempty"`
	RFC         int               `json:"rfc"`
	Operation   string            `json:"operation"`
	Blocks      []json.RawMessage `json:"blocks"`
	SchemaValid []bool            `json:"schemaValid"`
	Expect      Expect            `json:"expect"`
	Response    *Response         `json:"response,omitempty"`
	// MaxBytes and TimeoutMs are a fetch case's max bytes and deadline in
	// milliseconds; each, when given, is at least 1.
	MaxBytes  *int64 `json:"maxBytes,omitempty"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	// Registrations and TouchAfter drive the registry operation.
	Registrations int  `json:"registrations,omitempty"`
	TouchAfter    *int `json:"touchAfter,omitempty"`
	// Annotations the RFC's runner reports apart from host treatment.
	EmitterConformant       *bool  `json:"emitterConformant,omitempty"`
	KnownEmbeddedCredential string `json:"knownEmbeddedCredential,omitempty"`
	LegacySchemaValid       *bool  `json:"legacySchemaValid,omitempty"`
}

// Expect holds a case's host-side expectations. A nil pointer or empty
// list means the case does not assert that property.
type Expect struct {
	Stub               *bool    `json:"stub,omitempty"`
	Hidden             []string `json:"hidden,omitempty"`
	Includes           []string `json:"includes,omitempty"`
	Kind               string   `json:"kind,omitempty"`
	MissingFields      []string `json:"missingFields,omitempty"`
	Bounded            *bool    `json:"bounded,omitempty"`
	TruncationMarked   *bool    `json:"truncationMarked,omitempty"`
	CleanLabel         *bool    `json:"cleanLabel,omitempty"`
	OK                 *bool    `json:"ok,omitempty"`
	Requests           *int     `json:"requests,omitempty"`
	DecodedBase64      string   `json:"decodedBase64,omitempty"`
	DigestVerified     *bool    `json:"digestVerified,omitempty"`
	SavedMime          string   `json:"savedMime,omitempty"`
	StubOrInlineBase64 string   `json:"stubOrInlineBase64,omitempty"`
	Unchanged          *bool    `json:"unchanged,omitempty"`
	AbortStream        *bool    `json:"abortStream,omitempty"`
	RedirectSafe       *bool    `json:"redirectSafe,omitempty"`
	StorageFromID      *bool    `json:"storageFromId,omitempty"`
}

// Response is how the fixture origin answers a fetch case.
type Response struct {
	BodyBase64  string  `json:"bodyBase64,omitempty"`
	ContentType string  `json:"contentType,omitempty"`
	Gzip        bool    `json:"gzip,omitempty"`
	Stream      *Stream `json:"stream,omitempty"`
	Redirect    bool    `json:"redirect,omitempty"`
}

// Stream is a continuing response: Chunks chunks of ChunkBytes bytes,
// IntervalMs apart.
type Stream struct {
	Chunks     int `json:"chunks"`
	ChunkBytes int `json:"chunkBytes"`
	IntervalMs int `json:"intervalMs"`
}

// Parse reads a vectors file strictly.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("vectors: unknown format %q (this runner reads %q)", f.Format, Format)
	}
	if len(f.Cases) == 0 {
		return nil, errors.New("vectors: the file has no cases")
	}
	seen := make(map[string]bool, len(f.Cases))
	for i, c := range f.Cases {
		if c.ID == "" {
			return nil, fmt.Errorf("vectors: case %d has no id", i)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("vectors: duplicate case id %q", c.ID)
		}
		seen[c.ID] = true
		switch c.Operation {
		case OpRender, OpFetch, OpRegistry:
		default:
			return nil, fmt.Errorf("vectors: case %q: unknown operation %q", c.ID, c.Operation)
		}
		if len(c.Blocks) == 0 {
			return nil, fmt.Errorf("vectors: case %q has no blocks", c.ID)
		}
		if len(c.SchemaValid) != len(c.Blocks) {
			return nil, fmt.Errorf("vectors: case %q has %d blocks but %d schemaValid entries", c.ID, len(c.Blocks), len(c.SchemaValid))
		}
		if c.Operation == OpRegistry && (c.Registrations <= 0 || c.Registrations > MaxRegistrations) {
			return nil, fmt.Errorf("vectors: case %q: registry operation needs registrations from 1 to %d", c.ID, MaxRegistrations)
		}
		if c.Response != nil && c.Response.Stream != nil {
			s := c.Response.Stream
			if s.Chunks < 0 || s.ChunkBytes < 0 || s.IntervalMs < 0 || s.Chunks*s.ChunkBytes > 64<<20 {
				return nil, fmt.Errorf("vectors: case %q: stream out of range", c.ID)
			}
		}
	}
	return &f, nil
}

// MaxRegistrations bounds a registry case's registrations: far above any
// registry bound a case tests (RFC-005's vectors use 2,100 against a
// bound of 2,000), and low enough that a case runs in seconds.
const MaxRegistrations = 1 << 20

// MaxRepeat bounds one {"$repeat", "count"} expansion.
const MaxRepeat = 16 << 20

// Expand returns a copy of the case with every block expanded: each
// {"$repeat": s, "count": n} becomes s repeated n times and "$ORIGIN" in
// any string becomes origin. Numbers keep their exact literals.
func (c Case) Expand(origin string) (Case, error) {
	out := c
	out.Blocks = make([]json.RawMessage, len(c.Blocks))
	for i, raw := range c.Blocks {
		b, err := ExpandJSON(raw, origin)
		if err != nil {
			return Case{}, fmt.Errorf("vectors: case %q block %d: %w", c.ID, i, err)
		}
		out.Blocks[i] = b
	}
	out.Expect.Hidden = expandAll(c.Expect.Hidden, origin)
	out.Expect.Includes = expandAll(c.Expect.Includes, origin)
	return out, nil
}

func expandAll(ss []string, origin string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(s, "$ORIGIN", origin)
	}
	return out
}

// ExpandJSON applies the expansion to one JSON value.
func ExpandJSON(raw json.RawMessage, origin string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	x, err := expandValue(v, origin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func expandValue(v any, origin string) (any, error) {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "$ORIGIN", origin), nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := expandValue(e, origin)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case map[string]any:
		if s, ok := v["$repeat"].(string); ok {
			if len(v) != 2 {
				return nil, errors.New(`a {"$repeat"} object takes exactly "$repeat" and "count"`)
			}
			n, ok := v["count"].(json.Number)
			if !ok {
				return nil, errors.New(`"$repeat" without a numeric "count"`)
			}
			count, err := n.Int64()
			if err != nil || count < 0 || count*int64(len(s)) > MaxRepeat {
				return nil, fmt.Errorf("bad $repeat count %s", n)
			}
			return strings.Repeat(strings.ReplaceAll(s, "$ORIGIN", origin), int(count)), nil
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			x, err := expandValue(e, origin)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return v, nil
}
