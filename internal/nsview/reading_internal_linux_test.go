package nsview

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
)

// TestEnterTakesBudgetReading: Enter after MountBudget, in the same
// mount namespace, checks the mount limit against MountBudget's reading
// of the mount table instead of reading it again; the reading is taken
// once (a second Enter reads), and one made in another mount namespace
// is never taken. Shown red: before the change, the first case read the
// table twice.
func TestEnterTakesBudgetReading(t *testing.T) {
	kerneltest.RequireNamespaces(t, Probe())
	var n atomic.Int32
	saved := readMountPoints
	readMountPoints = func() ([]string, error) { n.Add(1); return mountPoints() }
	t.Cleanup(func() { readMountPoints = saved })
	v := New().Writable(t.TempDir()).PrivateTmp()
	enter := func() { require.NoError(t, osthread.Run(v.Enter)) }

	_, err := MountBudget()
	require.NoError(t, err)
	enter()
	assert.Equal(t, int32(1), n.Load(), "MountBudget, then Enter in the same namespace: one reading")
	enter()
	assert.Equal(t, int32(2), n.Load(), "a second Enter reads again (the reading is taken once)")

	n.Store(0)
	require.NoError(t, osthread.Run(func() error {
		if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
			return err
		}
		_, err := MountBudget()
		return err
	}))
	enter()
	assert.Equal(t, int32(2), n.Load(), "a reading of another mount namespace must not be taken")
}
