package seccomp

import "golang.org/x/sys/unix"

// Program returns a copy of f's BPF program (struct sock_filter, as
// seccomp(2) SECCOMP_SET_MODE_FILTER takes it), for a re-executed stage
// that installs the same filter on its own thread (package exec's
// PID-namespace init). Nil for a nil Filter. A Supervised filter's program
// returns SECCOMP_RET_USER_NOTIF and needs the supervisor Install starts:
// installing the bare program elsewhere leaves listen unanswered (it fails
// with ENOSYS once the listener is gone), so callers use Install for it.
func (f *Filter) Program() []unix.SockFilter {
	if f == nil {
		return nil
	}
	return append([]unix.SockFilter(nil), f.prog...)
}
