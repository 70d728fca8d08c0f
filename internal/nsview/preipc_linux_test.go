package nsview_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsview"
)

// TestKeepProbeIPCNamespace: with KeepProbeNamespace the probe also
// makes an IPC namespace (not the host's) that the first Enter joins
// (same inode); there a System V shared-memory segment of the host is
// out of reach (shmctl IPC_STAT on its id: EINVAL; control: found from
// the host). The second Enter makes an IPC namespace of its own (the
// kept one is taken once). Shown red: without Enter's setns to the kept
// IPC namespace the first view stays in the host's (its segment found).
func TestKeepProbeIPCNamespace(t *testing.T) {
	t.Cleanup(nsview.ResetProbe)
	nsview.ResetProbe()
	nsview.KeepProbeNamespace()
	_ = nsview.Probe()
	requireViews(t)
	ino, kept := nsview.KeptIPCIno()
	require.True(t, kept, "the probe made no IPC namespace")
	host := netnsIno(t, "/proc/thread-self/ns/ipc")
	assert.NotEqual(t, host, ino, "the kept IPC namespace is the host's")

	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	require.NoError(t, err)
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	var ds unix.SysvShmDesc
	_, err = unix.SysvShmCtl(id, unix.IPC_STAT, &ds)
	require.NoError(t, err, "control: the segment is found from the host")

	var got []uint64
	for i, want := range []string{"the kept one", "a fresh one"} {
		tr := newTree(t)
		var ns uint64
		var statErr error
		require.NoError(t, inView(tr.view(), func() error {
			ns = netnsIno(t, "/proc/thread-self/ns/ipc")
			// Held to the end, so that the second namespace cannot
			// reuse the first one's inode number.
			f, err := os.Open("/proc/thread-self/ns/ipc")
			if err != nil {
				return err
			}
			t.Cleanup(func() { f.Close() })
			var ds unix.SysvShmDesc
			_, statErr = unix.SysvShmCtl(id, unix.IPC_STAT, &ds)
			return nil
		}), "enter %d", i)
		assert.ErrorIs(t, statErr, unix.EINVAL, "%s: the host's segment reached", want)
		assert.NotEqual(t, host, ns, "%s: still in the host's IPC namespace", want)
		got = append(got, ns)
	}
	assert.Equal(t, ino, got[0], "the first Enter did not join the kept IPC namespace")
	assert.NotEqual(t, ino, got[1], "the kept IPC namespace was used twice")
}
