package seccomp

import "errors"

// ErrUnsupportedArch is returned (wrapped together with errors.ErrUnsupported)
// by Build on an architecture or OS the filter is not written for.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")
