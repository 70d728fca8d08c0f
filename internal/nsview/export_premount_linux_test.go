package nsview

import (
	"sync"

	"golang.org/x/sys/unix"
)

// ResetProbe makes the next Probe probe again (as in a fresh process),
// drops a kept mount namespace and KeepProbeNamespace's request.
func ResetProbe() {
	probeOnce = sync.OnceValue(probeNow)
	preMnt.keep.Store(false)
	mnt, ipc := takeMount()
	for _, fd := range []int{mnt, ipc} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// KeptMountIno returns the inode of the mount namespace the probe kept
// (what /proc/thread-self/ns/mnt of a thread in it shows), without taking
// it; false when there is none.
func KeptMountIno() (uint64, bool) {
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	if preMnt.fd < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(preMnt.fd, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}

// KeptIPCIno returns the inode of the IPC namespace the probe made with
// the mount namespace it kept, without taking it; false when there is
// none.
func KeptIPCIno() (uint64, bool) {
	preMnt.mu.Lock()
	defer preMnt.mu.Unlock()
	if preMnt.ipc < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(preMnt.ipc, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}
