package nsview

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// preMnt is the mount namespace the probe kept for the next Enter
// (KeepProbeNamespace): fd is -1 for none, and taken (set to -1) under
// mu by the one Enter that uses it.
var preMnt = struct {
	keep atomic.Bool
	mu   sync.Mutex
	fd   int
}{fd: -1}

func keepProbeNamespace() { preMnt.keep.Store(true) }

// keepMount, on the probe's thread after its checks passed, keeps the
// thread's mount namespace when KeepProbeNamespace asked for it. A
// failure keeps nothing: Enter unshares then.
func keepMount() {
	if !preMnt.keep.Load() {
		return
	}
	fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	if preMnt.fd >= 0 { // cannot happen: the probe runs once
		unix.Close(preMnt.fd)
	}
	preMnt.fd = fd
}

// takeMount returns the descriptor of the mount namespace the probe
// kept, or -1 when there is none (not asked for, the probe failed or has
// not finished, or another Enter took it). The caller closes it.
func takeMount() int {
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	fd := preMnt.fd
	preMnt.fd = -1
	return fd
}
