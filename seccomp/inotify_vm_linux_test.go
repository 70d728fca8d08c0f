package seccomp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestFilterVMInotify: with Landlock the brokered program hands
// inotify_add_watch to the supervisor, the program Install and Program
// use refuses it with EPERM, and nothing else differs between the two;
// without Landlock it is allowed and the filter is not brokered.
func TestFilterVMInotify(t *testing.T) {
	tg := nativeArch(t)
	run := func(f *Filter, plain bool, nr uint32) string {
		g := *f
		if plain {
			prog, err := f.plain()
			require.NoError(t, err)
			g.prog = prog
		}
		out, err := vmOf(t, &g).Run(seccompData(uint32(tg), nr, 3, 0x7000, unix.IN_ALL_EVENTS))
		require.NoError(t, err)
		if uint32(out) == unix.SECCOMP_RET_USER_NOTIF {
			return actNotify
		}
		return retName(uint32(out))
	}
	f, err := Build(Options{LandlockABI: 7})
	require.NoError(t, err)
	assert.True(t, f.Brokered())
	assert.False(t, f.Supervised(), "inotify alone does not need a process that stays (Exec refuses Supervised filters)")
	assert.Equal(t, actNotify, run(f, false, unix.SYS_INOTIFY_ADD_WATCH))
	assert.Equal(t, actEPERM, run(f, true, unix.SYS_INOTIFY_ADD_WATCH))
	for _, nr := range []uint32{unix.SYS_INOTIFY_INIT1, unix.SYS_INOTIFY_RM_WATCH, unix.SYS_OPENAT, unix.SYS_FANOTIFY_INIT, unix.SYS_IO_URING_SETUP} {
		assert.Equal(t, run(f, false, nr), run(f, true, nr), "syscall %d", nr)
	}
	assert.Len(t, f.Program(), len(mustPlain(t, f)), "Program is the program without the broker")

	f0, err := Build(Options{LandlockABI: 0})
	require.NoError(t, err)
	assert.False(t, f0.Brokered())
	assert.Equal(t, actAllow, run(f0, false, unix.SYS_INOTIFY_ADD_WATCH))
	assert.Equal(t, actAllow, run(f0, true, unix.SYS_INOTIFY_ADD_WATCH))
}

func mustPlain(t *testing.T, f *Filter) []sockFilter {
	t.Helper()
	prog, err := f.plain()
	require.NoError(t, err)
	return prog
}
