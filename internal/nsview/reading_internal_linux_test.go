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

// TestKeepMountTable: a table and an fs.mount-max given with
// KeepMountTable (what the user-namespace stage gets from its parent)
// are what the next Enter on that thread checks, without a reading of
// its own of either: the real table and limit (LastMountTable after
// MountBudget) pass with no reading, a table as long as the limit is
// refused with ErrMountLimit before anything is built, and so is the
// real table with a kept limit below it. Control: with nothing kept,
// Enter reads both itself (one reading each) and passes. Shown red: with
// keepMountTable doing nothing the first case read the table and the
// limit, and the refusals passed.
func TestKeepMountTable(t *testing.T) {
	kerneltest.RequireNamespaces(t, Probe())
	var n, nmax atomic.Int32
	saved, savedMax := readMountPoints, mountMax
	readMountPoints = func() ([]string, error) { n.Add(1); return mountPoints() }
	mountMax = func() (int, error) { nmax.Add(1); return savedMax() }
	t.Cleanup(func() { readMountPoints, mountMax = saved, savedMax })
	v := New().Writable(t.TempDir()).PrivateTmp()
	enterWith := func(table []string, max int) error {
		return osthread.Run(func() error {
			KeepMountTable(table, max)
			return v.Enter()
		})
	}

	_, err := MountBudget()
	require.NoError(t, err)
	table, max := LastMountTable()
	require.NotEmpty(t, table)
	require.Positive(t, max)
	takeReading() // MountBudget's own, kept for this thread: not the point here
	n.Store(0)
	nmax.Store(0)
	require.NoError(t, enterWith(table, max))
	assert.Equal(t, int32(0), n.Load(), "the kept table was read again")
	assert.Equal(t, int32(0), nmax.Load(), "the kept fs.mount-max was read again")

	full := make([]string, max)
	for i := range full {
		full[i] = "/m" + strconv.Itoa(i)
	}
	assert.ErrorIs(t, enterWith(full, max), ErrMountLimit)
	assert.ErrorIs(t, enterWith(table, len(table)+1), ErrMountLimit, "a kept limit below the table and the view")
	assert.Equal(t, int32(0), n.Load())
	assert.Equal(t, int32(0), nmax.Load())

	require.NoError(t, enterWith(nil, 0), "control")
	assert.Equal(t, int32(1), n.Load(), "control: nothing kept, Enter reads the table")
	assert.Equal(t, int32(1), nmax.Load(), "control: nothing kept, Enter reads fs.mount-max")
}
