package landlock

import (
	"os"

	"golang.org/x/sys/unix"
)

// DupFD returns a duplicate (close-on-exec) of the Ruleset's Landlock
// ruleset descriptor and the flags RestrictSelf passes to
// landlock_restrict_self(2), for a re-executed stage that confines itself
// with the same ruleset (package exec's PID-namespace init, which inherits
// the descriptor). The caller closes the file. Errors: ErrUnavailable
// without a Landlock domain (LevelPathCheck), ErrClosed after Close, the
// errno of fcntl(F_DUPFD_CLOEXEC).
func (r *Ruleset) DupFD() (*os.File, uint32, error) {
	if r == nil {
		return nil, 0, ErrUnavailable
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, 0, ErrClosed
	}
	if r.fd < 0 {
		return nil, 0, ErrUnavailable
	}
	fd, err := unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), r.restrictFlags, nil
}
