package seccomp

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// TestEventLogBounded (red team round 15, R15b-3): a command that makes
// refused calls with distinct paths cannot grow the supervisor's log past
// MaxEvents distinct events; every call is still counted, the later ones
// under OverflowPath. Control: below the bound every path is kept. Red
// before: 12,000 events were kept.
func TestEventLogBounded(t *testing.T) {
	var l eventLog
	for i := range MaxEvents + 2000 {
		l.add(Event{Syscall: "openat", Errno: unix.EROFS, Path: fmt.Sprintf("/usr/x%d", i), Access: "create", Why: ViewReadOnly})
	}
	ev := l.events()
	assert.Len(t, ev, MaxEvents+1)
	total, overflow := 0, 0
	for _, e := range ev {
		total += e.Count
		if e.Path == OverflowPath {
			overflow += e.Count
		}
	}
	assert.Equal(t, MaxEvents+2000, total, "every call counted")
	assert.Equal(t, 2000, overflow)
	assert.Equal(t, "/usr/x0", ev[0].Path, "control: the first paths are kept")
}
