package nsview

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/prenet"
)

// TestLateNetworkNoneAfterAll: Enter joins a prepared network namespace
// after its mounts (lateNetwork); when the namespace it waited for is not
// there after all (its making failed, or another Enter took it), the
// thread still gets a network namespace of its own, with the loopback up:
// never the host's. Control: the same thread's namespace before the call
// is the host's. Shown able to fail: with the fallback unshare removed
// the thread stayed in the host's namespace.
func TestLateNetworkNoneAfterAll(t *testing.T) {
	kerneltest.RequireNamespaces(t, Probe())
	// A preparation that left nothing to take (failed, or taken); after
	// the test, none begun (TestPrepareNetwork makes its own).
	prenet.Reset()
	t.Cleanup(prenet.Reset)
	prenet.Start()
	if fd := prenet.Take(); fd >= 0 {
		unix.Close(fd) // taken by another Enter
	}
	ino := func() uint64 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat("/proc/thread-self/ns/net", &st))
		return st.Ino
	}
	host := ino()
	var before, after uint64
	var loUp bool
	require.NoError(t, osthread.Run(func() error {
		before = ino()
		if err := lateNetwork(true); err != nil {
			return err
		}
		after = ino()
		lo, err := net.InterfaceByName("lo")
		if err != nil {
			return err
		}
		loUp = lo.Flags&net.FlagUp != 0
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		assert.Len(t, ifs, 1, "interfaces besides lo: %v", ifs)
		return nil
	}))
	assert.Equal(t, host, before, "control: the thread starts in the host's namespace")
	assert.NotEqual(t, host, after, "the thread stayed in the host's network namespace")
	assert.True(t, loUp, "loopback down")
}
