//go:build !linux

package selfproc

import "syscall"

// oPath: no O_PATH outside Linux; a read-only open stands in (Start is
// only called on Linux).
const oPath = syscall.O_RDONLY
