package nsview_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/internal/nsview"
)

func netnsIno(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return st.Ino
}

// TestPrepareNetwork: the namespace PrepareNetwork makes ahead is the one
// the first NoNetwork Enter joins (same inode), and it isolates as an
// unshared one does: only "lo", up; the test's loopback listener
// unreachable (control: reachable from the host namespace). The second
// Enter makes a fresh namespace of its own (the prepared one is taken
// once). Per mode: native, openat2=ENOSYS, landlock=ENOSYS and
// all=EPERM (which blocks openat2 and Landlock only): all of this, as
// namespaces do not depend on them; ns=EPERM (unshare refused, as under
// Docker's default seccomp profile): PrepareNetwork makes nothing and
// Enter of a NoNetwork view fails with ErrUnavailable, the refusal the
// callers fall back on. Elsewhere (not root) it skips through
// kerneltest, as every view test.
func TestPrepareNetwork(t *testing.T) {
	nsview.PrepareNetwork()
	ino, prepared := nsview.PreparedNetworkIno()
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		assert.False(t, prepared, "a network namespace was made with namespaces refused")
		err := inView(nsview.New().NoNetwork(), func() error { return nil })
		assert.ErrorIs(t, err, nsview.ErrUnavailable)
		return
	}
	if err := nsview.Probe(); err != nil {
		assert.False(t, prepared, "a network namespace was made where views are unavailable: %v", err)
	}
	requireViews(t)
	require.True(t, prepared, "PrepareNetwork made no namespace where views work")
	host := netnsIno(t, "/proc/thread-self/ns/net")
	assert.NotEqual(t, host, ino, "the prepared namespace is the host's")

	ln := listentest.Listen(t, "tcp", "127.0.0.1:0")
	vars := map[string]string{"$ADDR": ln.Addr().String()}

	var inViews []uint64
	for i, want := range []string{"the prepared one", "a fresh one"} {
		tr := newTree(t)
		var inView1 uint64
		var ifaces, dial string
		require.NoError(t, inView(nsview.New().Writable(tr.ws).NoNetwork(), func() (err error) {
			inView1 = netnsIno(t, "/proc/thread-self/ns/net")
			if ifaces, err = tr.run([]string{"ifaces"}, vars); err != nil {
				return err
			}
			dial, err = tr.run([]string{"dial", "$ADDR"}, vars)
			return err
		}), "enter %d", i)
		assert.Equal(t, "lo:up", ifaces, "%s: interfaces", want)
		assert.Equal(t, "ECONNREFUSED", dial, "%s: the host's loopback listener", want)
		assert.NotEqual(t, host, inView1, "%s: still in the host's namespace", want)
		inViews = append(inViews, inView1)
	}
	assert.Equal(t, ino, inViews[0], "the first NoNetwork Enter did not join the prepared namespace")
	assert.NotEqual(t, ino, inViews[1], "the prepared namespace was used twice")

	// Control: from the host's namespace the listener answers.
	got, err := newTree(t).run([]string{"dial", "$ADDR"}, vars)
	require.NoError(t, err)
	assert.Equal(t, "ok", got)
	_, err = os.Stat("/proc/thread-self/ns/net")
	require.NoError(t, err)
}
