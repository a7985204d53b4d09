package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcplrefs/refcore/refs"
)

// Removers returns a [refs.Remover] that removes a copy from whichever of
// rs holds it, for a registry whose fetchers keep copies in more than one
// store: give refs.Config.Remover Removers(shared, hostStore) when
// [Config.HostStore] is set, so that a copy the registry stops naming goes
// from either store. Every one of rs is asked; one that answers with an
// error wrapping [ErrBadName] (as a [DirStore] does for a path outside its
// directory) does not hold the copy. Remove fails when a remover fails in
// another way, or when none holds the path.
func Removers(rs ...refs.Remover) refs.Remover { return removers(rs) }

type removers []refs.Remover

func (rs removers) Remove(ctx context.Context, path string) error {
	var errs []error
	held := false
	for _, r := range rs {
		err := r.Remove(ctx, path)
		switch {
		case err == nil:
			held = true
		case errors.Is(err, ErrBadName):
		default:
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if !held {
		return fmt.Errorf("%w: no store holds the copy", ErrBadName)
	}
	return nil
}
