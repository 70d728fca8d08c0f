package threadcaps

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRunDropsDAC: as root, a file of another user with mode 0600 opens
// on an ordinary thread (CAP_DAC_OVERRIDE: the control) and not inside
// Run, whose thread holds only what keep names; the calling thread's
// set is the same after.
func TestRunDropsDAC(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_DAC_OVERRIDE to drop)")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("x"), 0o600))
	require.NoError(t, os.Chown(secret, 65534, 65534))

	before, err := Effective()
	require.NoError(t, err)
	require.NotZero(t, before&(1<<unix.CAP_DAC_OVERRIDE), "root without CAP_DAC_OVERRIDE")
	b, err := os.ReadFile(secret)
	require.NoError(t, err, "control: root reads another user's 0600 file")
	assert.Equal(t, "x", string(b))

	var inside uint64
	err = Run([]int{unix.CAP_CHOWN}, func() error {
		var err error
		if inside, err = Effective(); err != nil {
			return err
		}
		_, err = os.ReadFile(secret)
		return err
	})
	assert.ErrorIs(t, err, os.ErrPermission)
	assert.Equal(t, uint64(1)<<unix.CAP_CHOWN&before, inside)

	after, err := Effective()
	require.NoError(t, err)
	assert.Equal(t, before, after)
	_, err = os.ReadFile(secret)
	assert.NoError(t, err, "the caller's thread keeps its capabilities")
}

// TestRunKeepsNothing: keep nil empties every set.
func TestRunKeepsNothing(t *testing.T) {
	require.NoError(t, Run(nil, func() error {
		e, err := Effective()
		assert.Zero(t, e)
		return err
	}))
}

// TestRunBadCapability: an out-of-range capability is an error and fn
// does not run.
func TestRunBadCapability(t *testing.T) {
	ran := false
	err := Run([]int{64}, func() error { ran = true; return nil })
	assert.Error(t, err)
	assert.False(t, ran)
}

// TestRunAs: as root, fn runs with another user's permission checks (a
// 0600 file of 65534 opens, root's own 0600 file does not) and none at
// all with nil (root's file opens, 65534's does not: no
// CAP_DAC_OVERRIDE); the calling thread keeps its capabilities.
func TestRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (setfsuid to another user)")
	}
	dir, err := os.MkdirTemp("", "runas-") // searchable by 65534 (t.TempDir's parent is not)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	theirs, mine := filepath.Join(dir, "theirs"), filepath.Join(dir, "mine")
	require.NoError(t, os.WriteFile(theirs, []byte("x"), 0o600))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	require.NoError(t, os.WriteFile(mine, []byte("x"), 0o600))
	try := func(p string) bool {
		f, err := os.Open(p)
		if err == nil {
			f.Close()
		}
		return err == nil
	}
	require.NoError(t, RunAs(&syscall.Credential{Uid: 65534, Gid: 65534}, func() error {
		assert.True(t, try(theirs), "65534 opens its own file")
		assert.False(t, try(mine), "65534 cannot open root's 0600 file")
		return nil
	}))
	require.NoError(t, RunAs(nil, func() error {
		assert.True(t, try(mine), "root's own file")
		assert.False(t, try(theirs), "no CAP_DAC_OVERRIDE")
		return nil
	}))
	assert.True(t, try(theirs) && try(mine), "control: the caller's thread keeps root's capabilities")
	// Keeping CAP_CHOWN: effective again after the fsuid change cleared
	// it; a file made there is given away, root's file stays closed.
	require.NoError(t, os.Chmod(dir, 0o777))
	made := filepath.Join(dir, "made")
	require.NoError(t, RunAsKeeping(&syscall.Credential{Uid: 65534, Gid: 65534}, []int{unix.CAP_CHOWN}, func() error {
		f, err := os.Create(made)
		require.NoError(t, err)
		assert.NoError(t, f.Chown(1000, 1000), "CAP_CHOWN kept")
		f.Close()
		assert.False(t, try(mine), "still no CAP_DAC_OVERRIDE")
		return nil
	}))
	fi, err := os.Stat(made)
	require.NoError(t, err)
	assert.EqualValues(t, 1000, fi.Sys().(*syscall.Stat_t).Uid)
}
