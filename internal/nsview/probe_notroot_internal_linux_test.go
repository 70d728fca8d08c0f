package nsview

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
)

// TestProbeNotRootThreadless: for a caller without CAP_SYS_ADMIN (uid
// 65534, in a re-executed test process) the probe answers without a
// thread of its own (no osthread.Go: its check of the main thread is never
// asked) and its error is the one it was (ErrNotPrivileged, wrapping
// ErrUnavailable; the text with the user-namespace note, read when the
// text is asked for). Control: as root the probe runs on a thread.
func TestProbeNotRootThreadless(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534 and for the control") // not a kernel feature
	}
	for _, asRoot := range []bool{true, false} {
		name := map[bool]string{true: "root", false: "65534"}[asRoot]
		t.Run(name, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t) {
				return
			}
			if !asRoot {
				require.NoError(t, syscall.Setgroups(nil))
				require.NoError(t, syscall.Setresgid(65534, 65534, 65534))
				require.NoError(t, syscall.Setresuid(65534, 65534, 65534))
			}
			calls, _, restore := osthread.FakeMain()
			defer restore()
			err := probeNow()
			if asRoot {
				assert.NotZero(t, calls.Load(), "the control: root's probe runs on a thread of its own")
				return
			}
			assert.Zero(t, calls.Load(), "a thread made for a caller without CAP_SYS_ADMIN")
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrNotPrivileged) && errors.Is(err, ErrUnavailable), "%v", err)
			want := ErrNotPrivileged.Error() + ": not root; the user-namespace stage builds the view instead where it can (ProbeUserNS)" + userNSNote()
			assert.Equal(t, want, err.Error())
			assert.True(t, strings.HasPrefix(err.Error(), ErrUnavailable.Error()), "%v", err)
		})
	}
}
