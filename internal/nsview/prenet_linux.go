package nsview

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
)

// preNet is the network namespace PrepareNetwork makes for the next
// NoNetwork Enter: fd (-1 for none) is valid once done is closed, and
// taken (set to -1) under mu by the one Enter that uses it.
var preNet = struct {
	once sync.Once
	done chan struct{}
	mu   sync.Mutex
	fd   int
	// started: PrepareNetwork began making one (networkPending).
	started atomic.Bool
}{done: make(chan struct{}), fd: -1}

func prepareNetwork() {
	preNet.once.Do(func() {
		preNet.started.Store(true)
		osthread.Go(func() { // a thread of its own, which dies afterwards
			defer close(preNet.done)
			if unix.Unshare(unix.CLONE_NEWNET) != nil || loopbackUp() != nil {
				return
			}
			fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err == nil {
				preNet.fd = fd
			}
		})
	})
}

// networkPending reports, without waiting, whether PrepareNetwork began
// making a namespace that no Enter has taken yet (it may still be being
// made, or have failed: takeNetwork says).
func networkPending() bool {
	if !preNet.started.Load() {
		return false
	}
	preNet.mu.Lock()
	defer preNet.mu.Unlock()
	select {
	case <-preNet.done:
		return preNet.fd >= 0
	default:
		return true
	}
}

// takeNetwork returns the descriptor of the namespace PrepareNetwork made
// (waiting for it while it is being made), or -1 when there is none:
// PrepareNetwork was not called (from now on it does nothing), failed,
// or another Enter took it. The caller closes it.
func takeNetwork() int {
	preNet.once.Do(func() { close(preNet.done) })
	<-preNet.done
	preNet.mu.Lock()
	defer preNet.mu.Unlock()
	fd := preNet.fd
	preNet.fd = -1
	return fd
}
