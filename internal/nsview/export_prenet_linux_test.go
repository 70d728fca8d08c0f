package nsview

import "golang.org/x/sys/unix"

// PreparedNetworkIno waits for PrepareNetwork's namespace and returns its
// inode (what /proc/thread-self/ns/net of a thread in it shows), without
// taking it; false when there is none.
func PreparedNetworkIno() (uint64, bool) {
	<-preNet.done
	preNet.mu.Lock()
	defer preNet.mu.Unlock()
	if preNet.fd < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(preNet.fd, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}
