//go:build !linux

package fetch

import "errors"

// setImmutable is Linux-only; elsewhere a read-only store row relies on
// permission bits alone.
func setImmutable(string, bool) error { return errors.New("no immutable flag on this system") }
