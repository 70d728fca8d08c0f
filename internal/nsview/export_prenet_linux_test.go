package nsview

import "github.com/landjail/landjail/internal/prenet"

// PreparedNetworkIno waits for PrepareNetwork's namespace and returns its
// inode (what /proc/thread-self/ns/net of a thread in it shows), without
// taking it; false when there is none.
func PreparedNetworkIno() (uint64, bool) { return prenet.Peek() }
