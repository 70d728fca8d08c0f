package seccomp

import "golang.org/x/sys/unix"

// Program returns a copy of f's BPF program (struct sock_filter, as
// seccomp(2) SECCOMP_SET_MODE_FILTER takes it), for a re-executed stage
// that installs the same filter on its own thread (package exec's
// PID-namespace init). Nil for a nil Filter. A Supervised filter's program
// returns SECCOMP_RET_USER_NOTIF and needs the supervisor Install starts:
// installing the bare program elsewhere leaves listen unanswered (it fails
// with ENOSYS once the listener is gone), so callers use Install for it.
// The program is the one Install installs: inotify_add_watch, which only a
// broker can answer (Filter.InstallBroker), fails with EPERM.
func (f *Filter) Program() []unix.SockFilter {
	if f == nil {
		return nil
	}
	prog, err := f.plain()
	if err != nil {
		// Cannot happen (Build compiled the same rules with one errno
		// for a user notification); without a listener the brokered
		// program fails inotify_add_watch with ENOSYS: closed too.
		prog = f.prog
	}
	return append([]unix.SockFilter(nil), prog...)
}
