package seccomp

import "errors"

// ErrUnsupportedArch is returned (wrapped together with errors.ErrUnsupported)
// by Build on an architecture or OS the filter is not written for.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// ErrSupervised is returned (wrapped) by callers that cannot serve a
// Supervised filter, such as exec.Cmd.Exec: the filter's listen rule is
// answered by a supervisor goroutine of the process that installed it,
// which an execve would end (every listen would then fail with ENOSYS).
var ErrSupervised = errors.New("seccomp: the filter needs a supervisor in a process that outlives the child (listen rule)")
