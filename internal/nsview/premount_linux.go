package nsview

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/prenet"
)

// preMnt is the mount namespace the probe kept for the next Enter
// (KeepProbeNamespace): fd is -1 for none, and taken (set to -1) under
// mu by the one Enter that uses it.
var preMnt = struct {
	keep atomic.Bool
	mu   sync.Mutex
	fd   int
	ipc  int // an IPC namespace made on the probe's thread too (-1 for none)
}{fd: -1, ipc: -1}

func keepProbeNamespace() { preMnt.keep.Store(true) }

// keepMount, on the probe's thread after its checks passed, keeps the
// thread's mount namespace when KeepProbeNamespace asked for it, and a
// new IPC namespace unshared there for the same Enter (its creation,
// ≈40 µs, then off the spawn's path; where it fails Enter unshares one).
// A failure keeps nothing: Enter unshares then.
func keepMount() {
	if !preMnt.keep.Load() {
		return
	}
	fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	ipc := -1
	if unix.Unshare(unix.CLONE_NEWIPC) == nil {
		if ipc, err = unix.Open("/proc/thread-self/ns/ipc", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			ipc = -1
		}
	}
	storeMount(fd, ipc)
}

// storeMount keeps the mount namespace fd and the IPC namespace ipc (-1
// for none) for the next Enter.
func storeMount(fd, ipc int) {
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	if preMnt.fd >= 0 { // cannot happen: the probe runs once
		unix.Close(preMnt.fd)
	}
	if preMnt.ipc >= 0 {
		unix.Close(preMnt.ipc)
	}
	preMnt.fd, preMnt.ipc = fd, ipc
}

// earlyMount, on the probe's thread when KeepProbeNamespace asked for a
// kept namespace, takes the mount and IPC namespaces package prenet made
// earlier (prenet.StartWithMount, which landjail run starts from a
// package initializer) instead of the probe making them: ok when there
// are some (their unshare(CLONE_FS|CLONE_NEWNS) and mount(MS_PRIVATE)
// succeeded there). The caller then checks the rest and calls
// storeMount, or closes them.
func earlyMount() (mnt, ipc int, ok bool) {
	if !preMnt.keep.Load() {
		return -1, -1, false
	}
	mnt, ipc = prenet.TakeMount()
	return mnt, ipc, mnt >= 0
}

// takeMount returns the descriptors of the mount namespace the probe
// kept and of the IPC namespace made with it, each -1 when there is none
// (not asked for, the probe failed or has not finished, or another Enter
// took them). The caller closes them.
func takeMount() (mnt, ipc int) {
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	mnt, ipc = preMnt.fd, preMnt.ipc
	preMnt.fd, preMnt.ipc = -1, -1
	return mnt, ipc
}
