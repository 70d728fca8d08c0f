package nsview

import (
	"strconv"
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

// TestKeepMountTable: a table given with KeepMountTable (what the
// user-namespace stage gets from its parent) is what the next Enter on
// that thread checks, without a reading of its own: the real table
// (LastMountTable after MountBudget) passes with no reading, and a table
// as long as fs.mount-max is refused with ErrMountLimit before anything
// is built. Control: with nothing kept, Enter reads the table itself
// (one reading) and passes. Shown red: with keepMountTable doing nothing
// the first case read once and the second passed.
func TestKeepMountTable(t *testing.T) {
	kerneltest.RequireNamespaces(t, Probe())
	var n atomic.Int32
	saved := readMountPoints
	readMountPoints = func() ([]string, error) { n.Add(1); return mountPoints() }
	t.Cleanup(func() { readMountPoints = saved })
	v := New().Writable(t.TempDir()).PrivateTmp()
	enterWith := func(table []string) error {
		return osthread.Run(func() error {
			KeepMountTable(table)
			return v.Enter()
		})
	}

	_, err := MountBudget()
	require.NoError(t, err)
	table := LastMountTable()
	require.NotEmpty(t, table)
	takeReading() // MountBudget's own, kept for this thread: not the point here
	n.Store(0)
	require.NoError(t, enterWith(table))
	assert.Equal(t, int32(0), n.Load(), "the kept table was read again")

	max, err := mountMax()
	require.NoError(t, err)
	full := make([]string, max)
	for i := range full {
		full[i] = "/m" + strconv.Itoa(i)
	}
	err = enterWith(full)
	assert.ErrorIs(t, err, ErrMountLimit)
	assert.Equal(t, int32(0), n.Load())

	require.NoError(t, enterWith(nil), "control")
	assert.Equal(t, int32(1), n.Load(), "control: nothing kept, Enter reads the table")
}
