package landlock

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/threadcaps"
)

// TestShmDirOfAnotherRun (red team round 31, R31c-19): a .shm that a
// root --user run made in the user's TMPDIR (root's, 01777) is reused by
// the user's own run, which may not chmod it; it failed every run with
// EPERM. Control: one with another mode is still set to 01777 by its
// owner.
func TestShmDirOfAnotherRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a directory of another owner)")
	}
	tmp, err := os.MkdirTemp("", "shm-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	require.NoError(t, os.Chmod(tmp, 0o777))
	shm := filepath.Join(tmp, ".shm")
	require.NoError(t, os.Mkdir(shm, 0o700))
	require.NoError(t, os.Chmod(shm, 0o777|os.ModeSticky))
	require.NoError(t, threadcaps.RunAs(&syscall.Credential{Uid: 65534, Gid: 65534}, func() error {
		_, err := makeShmDir(tmp)
		assert.NoError(t, err, "the user's run reuses root's .shm")
		return nil
	}))
	require.NoError(t, os.Chmod(shm, 0o700))
	_, err = makeShmDir(tmp)
	require.NoError(t, err)
	fi, err := os.Stat(shm)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, fi.Mode(), "control: its owner sets 01777")
}
