//go:build !linux

package fallback

import (
	"errors"
	"fmt"
	"runtime"
)

func openatBeneath(dirfd int, unsafePath string, flags int, mode uint32, resolve uint64) (int, error) {
	return -1, fmt.Errorf("fallback: OpenatBeneath on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
