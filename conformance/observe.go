package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcplrefs/refcore/conformance/vectors"
	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// The conformance profile's constants.
const (
	// Implementation names this library in identity output.
	Implementation = "refcore"
	// Version is the library version the observer reports.
	Version = "0.1.0-dev"
	// MaxViewChars is the profile's bound on one view, in UTF-16 code
	// units: the converter's view bound.
	MaxViewChars = convert.DefaultViewMax
	// ServerName is the one server every case's blocks come from.
	ServerName = "fixture"
	// DefaultTimeout is a fetch's deadline when a case gives none.
	DefaultTimeout = 3000 * time.Millisecond
	// UnknownID is the id the registry operation looks up as never issued.
	UnknownID = "ref_unknown_fixture"
	// RegistryBound is the profile's registry capacity.
	RegistryBound = 2000
)

// Input is what `refconform observe` reads: one expanded case, the fixture
// origin the server was dialed at, and its connection credential.
type Input struct {
	Case   vectors.Case `json:"case"`
	Origin string       `json:"origin"`
	Token  string       `json:"token"`
}

// Identity is what `refconform identity` prints.
type Identity struct {
	Implementation string `json:"implementation"`
	Version        string `json:"version"`
	MaxViewChars   int    `json:"maxViewChars"`
}

// CurrentIdentity returns the library's identity in the profile.
func CurrentIdentity() Identity {
	return Identity{Implementation: Implementation, Version: Version, MaxViewChars: MaxViewChars}
}

// Parsed is the observation of one block's reading.
type Parsed struct {
	Kind           string       `json:"kind"`
	Testimony      TestimonyObs `json:"testimony"`
	RejectedFields []string     `json:"rejectedFields"`
	SchemaValid    bool         `json:"schemaValid"`
	SchemaError    string       `json:"schemaError,omitempty"`
	Invalid        string       `json:"invalid,omitempty"`
}

// TestimonyObs holds the present testimony keys only; a rejected field is
// absent.
type TestimonyObs struct {
	URI         *string `json:"uri,omitempty"`
	Name        *string `json:"name,omitempty"`
	MimeType    *string `json:"mimeType,omitempty"`
	SizeBytes   *int64  `json:"sizeBytes,omitempty"`
	Digest      *string `json:"digest,omitempty"`
	ExpiresAt   *string `json:"expiresAt,omitempty"`
	Disposition *string `json:"disposition,omitempty"`
}

func testimonyObs(t convert.Testimony) TestimonyObs {
	var o TestimonyObs
	s := func(f convert.Field, v string) *string {
		if !t.Has(f) {
			return nil
		}
		return &v
	}
	o.URI = s(convert.FieldURI, t.URI)
	o.Name = s(convert.FieldName, t.Name)
	o.MimeType = s(convert.FieldMimeType, t.MimeType)
	o.Digest = s(convert.FieldDigest, t.Digest)
	o.ExpiresAt = s(convert.FieldExpiresAt, t.ExpiresAt)
	o.Disposition = s(convert.FieldDisposition, string(t.Disposition))
	if t.Has(convert.FieldSizeBytes) {
		n := t.SizeBytes
		o.SizeBytes = &n
	}
	return o
}

// Views are the three model-facing views of one content.
type Views struct {
	Push    json.RawMessage `json:"push"`
	Wake    string          `json:"wake"`
	History string          `json:"history"`
}

// RecordObs is one host-private record as the checker reads it.
type RecordObs struct {
	RefID            string       `json:"refId"`
	Testimony        TestimonyObs `json:"testimony"`
	FetchedPath      *string      `json:"fetchedPath,omitempty"`
	VerifiedBytes    *int64       `json:"verifiedBytes,omitempty"`
	VerifiedMimeType *string      `json:"verifiedMimeType,omitempty"`
	DigestVerified   *bool        `json:"digestVerified,omitempty"`
	NeverMarked      bool         `json:"neverMarked"`
}

// Outcome is a fetch's result.
type Outcome struct {
	OK             bool    `json:"ok"`
	Path           *string `json:"path,omitempty"`
	Bytes          *int64  `json:"bytes,omitempty"`
	MimeType       *string `json:"mimeType,omitempty"`
	DigestVerified *bool   `json:"digestVerified,omitempty"`
	Error          string  `json:"error,omitempty"`
	Remedy         string  `json:"remedy,omitempty"`
	Code           string  `json:"code,omitempty"`
}

// SaveObs is one save the store received.
type SaveObs struct {
	Name     string `json:"name"`
	Base64   string `json:"base64"`
	MimeType string `json:"mimeType"`
}

// Observation is the observer's output for a render or fetch case. A
// render case has no Outcome, Saves or After; a fetch case has all three,
// and its Saves is a list (empty after a failure) even when nothing was
// saved.
type Observation struct {
	Parsed  []Parsed    `json:"parsed"`
	Before  Views       `json:"before"`
	Records []RecordObs `json:"records"`
	Outcome *Outcome    `json:"outcome,omitempty"`
	Saves   []SaveObs   `json:"saves"`
	After   *Views      `json:"after,omitempty"`
}

// MarshalJSON writes the observation as the observer contract reads it:
// saves is present, as a list, exactly when the case was a fetch.
func (o Observation) MarshalJSON() ([]byte, error) {
	type plain Observation
	if o.Outcome == nil {
		return json.Marshal(struct {
			plain
			Saves []SaveObs `json:"saves,omitempty"`
		}{plain: plain(o)})
	}
	if o.Saves == nil {
		o.Saves = []SaveObs{}
	}
	return json.Marshal(plain(o))
}

// ToolError is what a host's fetch-by-id tool answers for an id it cannot
// resolve.
type ToolError struct {
	Success bool   `json:"success"`
	IsError bool   `json:"isError"`
	Error   string `json:"error"`
}

// FreshObs is a registry record as the registry operation reports it.
type FreshObs struct {
	RefID     string       `json:"refId"`
	Testimony TestimonyObs `json:"testimony"`
}

// RegistryObservation is the observer's output for the registry operation.
type RegistryObservation struct {
	FirstID      string     `json:"firstId"`
	StableID     string     `json:"stableId"`
	IDs          []string   `json:"ids"`
	Fresh        FreshObs   `json:"fresh"`
	Evicted      *FreshObs  `json:"evicted"`
	Unknown      *FreshObs  `json:"unknown"`
	EvictedError *ToolError `json:"evictedError"`
	UnknownError *ToolError `json:"unknownError"`
}

// fixtureServers resolves the one fixture server.
type fixtureServers struct{ origin, token string }

func (s fixtureServers) Server(name string) (fetch.Server, error) {
	if name != ServerName {
		return fetch.Server{}, fetch.CodeUnknownServer
	}
	return fetch.Server{Origin: s.origin, Token: s.token}, nil
}

// Observe runs one case in the conformance profile ([ConformanceProfile])
// and returns its observation: an [*Observation] for render and fetch, a
// [*RegistryObservation] for registry.
func Observe(ctx context.Context, in Input) (any, error) {
	return ConformanceProfile().observe(ctx, in)
}

// observe runs one case through the profile's wiring.
func (p Profile) observe(ctx context.Context, in Input) (any, error) {
	c := in.Case
	if len(c.Blocks) == 0 {
		return nil, errors.New("conformance: the case has no blocks")
	}
	switch c.Operation {
	case vectors.OpRender, vectors.OpFetch:
		return p.observeContent(ctx, in)
	case vectors.OpRegistry:
		return p.observeRegistry(ctx, in)
	}
	return nil, errors.New("conformance: unknown operation " + c.Operation)
}

// fetchLimits returns the max bytes and the deadline a fetch case asks
// for: its maxBytes (0, the fetcher's own default, when it gives none) and
// its timeoutMs ([DefaultTimeout] when it gives none). A value a
// [fetch.Request] cannot carry as written is an error, so that no case is
// observed under limits it did not ask for: a max bytes or deadline of
// zero, which a Request reads as its default, a negative one, or a
// deadline past the longest time.Duration. A max bytes above the
// profile's host ceiling is passed on: the fetcher holds every call to
// that ceiling, and the observation shows it doing so.
func fetchLimits(c vectors.Case) (maxBytes int64, timeout time.Duration, err error) {
	timeout = DefaultTimeout
	if c.MaxBytes != nil {
		if maxBytes = *c.MaxBytes; maxBytes < 1 {
			return 0, 0, fmt.Errorf("conformance: maxBytes %d: a fetch's max bytes must be at least 1", maxBytes)
		}
	}
	if c.TimeoutMs != nil {
		ms := *c.TimeoutMs
		if ms < 1 || ms > int64(math.MaxInt64/time.Millisecond) {
			return 0, 0, fmt.Errorf("conformance: timeoutMs %d: a fetch's deadline must be from 1 to %d milliseconds", ms, int64(math.MaxInt64/time.Millisecond))
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return maxBytes, timeout, nil
}

// wiring is one case's host: a registry, the store that records saves,
// and a fetcher that reaches the fixture server.
type wiring struct {
	reg     *refs.Registry
	store   *recordingStore
	fetcher *fetch.Fetcher
}

func (p Profile) wire(in Input) (wiring, error) {
	reg, err := p.newRegistry()
	if err != nil {
		return wiring{}, err
	}
	store, err := p.newStore()
	if err != nil {
		return wiring{}, err
	}
	f, err := fetch.New(reg, fixtureServers{in.Origin, in.Token}, store, p.Fetch)
	if err != nil {
		return wiring{}, err
	}
	return wiring{reg: reg, store: store, fetcher: f}, nil
}

func (p Profile) observeContent(ctx context.Context, in Input) (*Observation, error) {
	c := in.Case
	w, err := p.wire(in)
	if err != nil {
		return nil, err
	}
	reg, store, f := w.reg, w.store, w.fetcher
	conv, err := convert.New(reg, p.Policy)
	if err != nil {
		return nil, err
	}
	obs := &Observation{Parsed: make([]Parsed, len(c.Blocks)), Records: []RecordObs{}}
	for i, raw := range c.Blocks {
		b := convert.Classify(raw)
		p := Parsed{Kind: string(b.Kind), Testimony: testimonyObs(b.Testimony),
			RejectedFields: b.Testimony.RejectedNames(), Invalid: string(b.Invalid)}
		if p.RejectedFields == nil {
			p.RejectedFields = []string{}
		}
		if err := convert.Validate(raw); err == nil {
			p.SchemaValid = true
		} else {
			p.SchemaError = err.Error()
		}
		obs.Parsed[i] = p
	}
	push := conv.Ingest(ctx, c.Blocks, convert.Source{Server: ServerName, Lane: convert.LanePush})
	tool := conv.Ingest(ctx, c.Blocks, convert.Source{Server: ServerName, Lane: convert.LaneToolResult, Tool: "fixture_tool"})
	views := func() Views {
		return Views{Push: json.RawMessage(convert.PushJSON(push.Push())), Wake: push.Wake(), History: tool.History()}
	}
	obs.Before = views()
	if c.Operation == vectors.OpFetch {
		maxBytes, timeout, err := fetchLimits(c)
		if err != nil {
			return nil, err
		}
		out := &Outcome{}
		ids := tool.IDs()
		if len(ids) == 0 {
			out.Error = "the case names no reference to fetch"
		} else {
			res, err := f.Fetch(ctx, ids[0], fetch.Request{MaxBytes: maxBytes, Timeout: timeout})
			if err != nil {
				var fail *fetch.Failure
				if errors.As(err, &fail) {
					out.Error, out.Remedy, out.Code = fail.Clause, fail.Remedy.String(), string(fail.Code)
				} else {
					out.Error = err.Error()
				}
			} else {
				n, dv, path, mime := res.Bytes, res.DigestVerified, res.Path, res.MimeType
				out.OK, out.Path, out.Bytes, out.MimeType, out.DigestVerified = true, &path, &n, &mime, &dv
			}
		}
		obs.Outcome = out
		obs.Saves = store.observed()
		after := views()
		obs.After = &after
	}
	// One record per reference block, as the contract asks; two blocks
	// naming one uri report the same record twice. Every reference block
	// of a server's content is given an id, in block order; the id finds
	// the record of a blank uri, which ByURI does not look up.
	ids := push.IDs()
	for _, b := range push.Blocks() {
		if b.Kind != convert.KindReference || len(ids) == 0 {
			continue
		}
		id := ids[0]
		ids = ids[1:]
		rec, ok := reg.ByURI(b.Testimony.URI)
		if !ok {
			rec, ok = reg.Lookup(id)
		}
		if ok {
			obs.Records = append(obs.Records, recordObs(rec))
		}
	}
	return obs, nil
}

func recordObs(rec refs.Record) RecordObs {
	r := RecordObs{RefID: rec.ID, Testimony: testimonyObs(rec.Testimony), NeverMarked: rec.Never}
	if s := rec.Copy; s != nil {
		n, dv, path, mime := s.Bytes, s.DigestVerified, s.Path, s.MimeType
		r.FetchedPath, r.VerifiedBytes, r.VerifiedMimeType, r.DigestVerified = &path, &n, &mime, &dv
	}
	return r
}

func (p Profile) observeRegistry(ctx context.Context, in Input) (*RegistryObservation, error) {
	c := in.Case
	if c.Registrations > vectors.MaxRegistrations {
		return nil, fmt.Errorf("conformance: %d registrations is more than the %d a case may ask for", c.Registrations, vectors.MaxRegistrations)
	}
	w, err := p.wire(in)
	if err != nil {
		return nil, err
	}
	reg, tool := w.reg, w.fetcher.Tool()
	first := convert.Classify(c.Blocks[0])
	if first.Kind != convert.KindReference {
		return nil, errors.New("conformance: the registry operation needs a reference as its first block")
	}
	var ids []string
	seen := map[string]bool{}
	issue := func(e convert.Entry) string {
		if !seen[e.ID] {
			seen[e.ID] = true
			ids = append(ids, e.ID)
		}
		return e.ID
	}
	register := func(t convert.Testimony) string {
		return issue(reg.Register(ctx, convert.Registration{Testimony: t, Server: ServerName, Never: t.Never()}))
	}
	obs := &RegistryObservation{}
	obs.FirstID = register(first.Testimony)
	obs.StableID = register(first.Testimony)
	for i := 1; i <= c.Registrations; i++ {
		t := convert.Testimony{URI: in.Origin + "/eviction/" + strconv.Itoa(i), Present: convert.FieldURI}
		register(t)
		if c.TouchAfter != nil && *c.TouchAfter == i {
			register(first.Testimony)
		}
	}
	// Look up the first id before registering its uri again, so the lookup
	// sees what eviction left. An id the registry does not hold is put to
	// the library's own fetch tool, whose answer is what a model would read.
	lookup := func(id string) (*FreshObs, *ToolError) {
		rec, ok := reg.Lookup(id)
		if !ok {
			args, _ := json.Marshal(map[string]string{"id": id})
			text, isError := tool.Handle(ctx, args)
			return nil, &ToolError{Success: !isError, IsError: isError, Error: text}
		}
		return &FreshObs{RefID: rec.ID, Testimony: testimonyObs(rec.Testimony)}, nil
	}
	obs.Evicted, obs.EvictedError = lookup(obs.FirstID)
	obs.Unknown, obs.UnknownError = lookup(UnknownID)
	fresh := reg.Register(ctx, convert.Registration{Testimony: first.Testimony, Server: ServerName, Never: first.Testimony.Never()})
	issue(fresh)
	obs.Fresh = FreshObs{RefID: fresh.ID, Testimony: testimonyObs(fresh.Testimony)}
	obs.IDs = ids
	return obs, nil
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
