package nsview

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
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
	resetPreNet()
	t.Cleanup(resetPreNet)
	preNet.once.Do(func() {
		preNet.started.Store(true)
		close(preNet.done)
	})
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

// resetPreNet puts PrepareNetwork's state back to none begun, closing a
// namespace nobody took. Not safe while a preparation is under way.
func resetPreNet() {
	if preNet.started.Load() {
		<-preNet.done // the preparation ended
	}
	preNet.mu.Lock()
	defer preNet.mu.Unlock()
	if preNet.fd >= 0 {
		unix.Close(preNet.fd)
	}
	preNet.once = sync.Once{}
	preNet.done = make(chan struct{})
	preNet.fd = -1
	preNet.started.Store(false)
}
