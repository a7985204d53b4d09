package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/fetch"
	"github.com/mcplrefs/refcore/refs"
)

// Profile is a host's own wiring of the library, for judging it against
// the vectors rather than the library's defaults: the converter policy,
// the fetcher's settings, the registry bound and the store the host uses.
// A Profile is a [Host]: pass it to [Run] in [RunOptions].
//
// The vectors expect a never reference to be fetched when asked (RFC-005
// vector 03, and every fetch vector whose reference is marked never),
// which a host serving a model must not do; so a Profile whose Fetch
// leaves FetchNever off fails those cases, as it should: 10 of the
// bundled 43, the failure cases among them, since a refused fetch dials
// nothing. Set it for the run, as [ConformanceProfile] does. The judge
// reads the copies committed through Store, and no others: a Profile
// whose Fetch sets a HostStore fails the 6 cases whose fetch of a never
// reference saves a copy, which goes there. Leave HostStore out of the run.
type Profile struct {
	// Policy is the converter's policy. Its view bound is also the bound
	// the judge holds every view to.
	Policy convert.Policy
	// Fetch configures the fetcher.
	Fetch fetch.Config
	// Capacity bounds the registry; zero means [RegistryBound].
	Capacity int
	// Store returns a new store for one case; nil means an in-memory
	// store. The observer records each copy committed through it, which
	// is what the judge reads as the case's saves.
	Store func() (fetch.Store, error)
}

// MaxViewChars returns the view bound the profile's converter applies,
// which the judge must hold its views to.
func (p Profile) MaxViewChars() int {
	if p.Policy.ViewMax > 0 {
		return p.Policy.ViewMax
	}
	return convert.DefaultViewMax
}

// Observe runs one case through the profile's wiring and returns the
// observation's JSON. With MaxViewChars it makes a Profile a [Host].
func (p Profile) Observe(ctx context.Context, in Input) (json.RawMessage, error) {
	obs, err := p.observe(ctx, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obs)
}

// ConformanceProfile returns the profile [Observe] and refconform run: the
// library's defaults, except that the fetcher fetches never references as
// the vectors expect.
func ConformanceProfile() Profile {
	return Profile{Fetch: fetch.Config{FetchNever: true}}
}

func (p Profile) newRegistry() (*refs.Registry, error) {
	capacity := p.Capacity
	if capacity == 0 {
		capacity = RegistryBound
	}
	return refs.New(refs.Config{Capacity: capacity})
}

func (p Profile) newStore() (*recordingStore, error) {
	var inner fetch.Store = fetch.NewMemoryStore()
	if p.Store != nil {
		s, err := p.Store()
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, errors.New("conformance: the profile's Store returned no store")
		}
		inner = s
	}
	return &recordingStore{inner: inner}, nil
}

// recordingStore passes every call to the host's store and keeps what was
// committed and not since removed, as the observation's saves.
type recordingStore struct {
	inner fetch.Store
	mu    sync.Mutex
	saves []SaveObs
	paths []string
}

func (s *recordingStore) Begin(ctx context.Context, name, mimeType string) (fetch.Pending, error) {
	p, err := s.inner.Begin(ctx, name, mimeType)
	if err != nil {
		return nil, err
	}
	return &recordingPending{inner: p, s: s, name: name, mime: mimeType}, nil
}

// Remove removes through the host's store when it can remove.
func (s *recordingStore) Remove(ctx context.Context, path string) error {
	r, ok := s.inner.(refs.Remover)
	if !ok {
		return errors.New("conformance: the profile's store cannot remove copies")
	}
	if err := r.Remove(ctx, path); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.paths {
		if p == path {
			s.saves = append(s.saves[:i], s.saves[i+1:]...)
			s.paths = append(s.paths[:i], s.paths[i+1:]...)
			break
		}
	}
	return nil
}

func (s *recordingStore) observed() []SaveObs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SaveObs{}, s.saves...)
}

type recordingPending struct {
	inner      fetch.Pending
	s          *recordingStore
	name, mime string
	buf        bytes.Buffer
}

func (p *recordingPending) Write(b []byte) (int, error) {
	n, err := p.inner.Write(b)
	p.buf.Write(b[:n])
	return n, err
}

func (p *recordingPending) Commit(ctx context.Context) (string, error) {
	path, err := p.inner.Commit(ctx)
	if err != nil {
		return path, err
	}
	p.s.mu.Lock()
	p.s.saves = append(p.s.saves, SaveObs{Name: p.name, Base64: encodeBase64(p.buf.Bytes()), MimeType: p.mime})
	p.s.paths = append(p.s.paths, path)
	p.s.mu.Unlock()
	return path, nil
}

func (p *recordingPending) Abort(ctx context.Context) error { return p.inner.Abort(ctx) }
