package openat

import (
	"errors"
	"syscall"
)

// Sentinel errors. Path operations return *fs.PathError whose Err wraps
// one of these together with the kernel's errno, so both
// errors.Is(err, ErrEscapes) and errors.Is(err, syscall.EXDEV) hold.
var (
	// ErrEscapes: the name is absolute or its ".." components climb
	// above the root (openat2 RESOLVE_BENEATH: EXDEV).
	ErrEscapes = errors.New("path escapes from root")

	// ErrSymlink: a component of the name, including the last one, is a
	// symbolic link (openat2 RESOLVE_NO_SYMLINKS: ELOOP). Root never
	// follows symlinks; resolve them first (jail.Workspace does).
	ErrSymlink = errors.New("path contains a symbolic link")

	// ErrMountCrossing: the root was opened with ResolveNoXDev and the
	// name crosses a mount point (openat2 RESOLVE_NO_XDEV: EXDEV).
	ErrMountCrossing = errors.New("path crosses a mount point")

	// ErrInvalidName: the name is "." or ".." where an entry name is
	// needed (Remove, Rename, Mkdir, Lstat, Readlink...), or contains NUL.
	ErrInvalidName = errors.New("invalid name for this operation")

	// ErrUnsupportedMode: the permission bits passed to OpenFile, OpenFd,
	// Create, Mkdir, MkdirAll or WriteFile hold more than 0o777
	// (setuid, setgid, sticky or a type bit), which os.Root refuses with
	// the same message. Chmod accepts them, as os.Root.Chmod does.
	ErrUnsupportedMode = errors.New("unsupported file mode")
)

// errnoError joins a sentinel with the errno it was derived from.
type errnoError struct {
	sentinel error
	errno    syscall.Errno
}

func (e *errnoError) Error() string   { return e.sentinel.Error() + " (" + e.errno.Error() + ")" }
func (e *errnoError) Unwrap() []error { return []error{e.sentinel, e.errno} }
