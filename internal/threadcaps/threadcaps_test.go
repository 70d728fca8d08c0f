package threadcaps

import (
	"os"
	"path/filepath"
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
