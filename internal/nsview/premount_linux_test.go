package nsview_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
)

// TestKeepProbeNamespace: with KeepProbeNamespace the probe keeps the
// mount namespace it made (not the host's) and the first Enter joins it
// (same inode); that view is a view as an unshared one is: the masked
// .env reads "", the host path outside the writable root is read-only
// (EROFS), while from the host both are as before (control: the secret
// reads, the write succeeds, the mount table is unchanged). The second
// Enter makes a namespace of its own (the kept one is taken once).
// Control: a probe without KeepProbeNamespace keeps nothing. ns=EPERM
// (unshare refused): the probe fails and keeps nothing. Red with
// keepMount's call removed from the probe (nothing kept) and with
// Enter's takeMount removed (the first Enter's namespace differs).
func TestKeepProbeNamespace(t *testing.T) {
	t.Cleanup(nsview.ResetProbe)
	nsview.ResetProbe()
	_ = nsview.Probe() // the control: only what it keeps matters
	_, kept := nsview.KeptMountIno()
	assert.False(t, kept, "control: a namespace kept without KeepProbeNamespace")

	nsview.ResetProbe()
	nsview.KeepProbeNamespace()
	probeErr := nsview.Probe()
	ino, kept := nsview.KeptMountIno()
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked || probeErr != nil {
		assert.False(t, kept, "a namespace was kept where the probe failed: %v", probeErr)
	}
	requireViews(t)
	require.True(t, kept, "the probe kept no namespace")
	host := netnsIno(t, "/proc/thread-self/ns/mnt")
	assert.NotEqual(t, host, ino, "the kept namespace is the host's")

	var inViews []uint64
	for i, want := range []string{"the kept one", "a fresh one"} {
		tr := newTree(t)
		var ns uint64
		var env, write string
		require.NoError(t, inView(tr.view(), func() (err error) {
			ns = netnsIno(t, "/proc/thread-self/ns/mnt")
			// Held to the end, so that the second namespace cannot
			// reuse the first one's inode number.
			f, err := os.Open("/proc/thread-self/ns/mnt")
			if err != nil {
				return err
			}
			t.Cleanup(func() { f.Close() })
			if env, err = tr.run([]string{"read", "$WS/.env"}, nil); err != nil {
				return err
			}
			write, err = tr.run([]string{"write", "$OUT/data.db"}, nil)
			return err
		}), "enter %d", i)
		assert.Equal(t, "", env, "%s: the masked .env", want)
		assert.Equal(t, "EROFS", write, "%s: a host file outside the writable root", want)
		assert.NotEqual(t, host, ns, "%s: still in the host's namespace", want)
		inViews = append(inViews, ns)

		// Control: from the host, unchanged.
		b, err := os.ReadFile(filepath.Join(tr.ws, ".env"))
		require.NoError(t, err)
		assert.Equal(t, "SECRET", string(b))
		got, err := tr.run([]string{"write", "$OUT/data.db"}, nil)
		require.NoError(t, err)
		assert.Equal(t, "ok", got)
	}
	assert.Equal(t, ino, inViews[0], "the first Enter did not join the kept namespace")
	assert.NotEqual(t, ino, inViews[1], "the kept namespace was used twice")
	_, kept = nsview.KeptMountIno()
	assert.False(t, kept, "still kept after an Enter took it")
}
