package exec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestGuard installs the spawner guard on a throwaway thread: calls that
// target that thread by id fail with EPERM, the same calls aimed at
// another thread of the process do not. (ptrace cannot be checked this
// way: attaching to one's own thread group always fails with EPERM.)
func TestGuard(t *testing.T) {
	type result struct{ tgkill, kill, pidfd, other error }
	var r result
	require.NoError(t, onFreshThread(func() error {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
		if err := installGuard(); err != nil {
			return err
		}
		me, pid := unix.Gettid(), unix.Getpid()
		r.tgkill = unix.Tgkill(pid, me, 0)
		r.kill = unix.Kill(me, 0)
		fd, err := unix.PidfdOpen(me, unix.PIDFD_THREAD)
		if err == nil {
			unix.Close(fd)
		}
		r.pidfd = err
		r.other = unix.Tgkill(pid, pid, 0) // the main thread
		return nil
	}))
	assert.ErrorIs(t, r.tgkill, unix.EPERM)
	assert.ErrorIs(t, r.kill, unix.EPERM)
	assert.ErrorIs(t, r.pidfd, unix.EPERM)
	assert.NoError(t, r.other)
}
