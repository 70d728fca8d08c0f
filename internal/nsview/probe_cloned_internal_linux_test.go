package nsview

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestProbeUserNSAfterStageClone: in a process that cloned the stage
// itself (stageCloned, faked here), the user-namespace probe's child gets
// only CLONE_NEWUSER|CLONE_NEWNS, and the probe still answers as before:
// nil natively; where namespaces are refused (ns=EPERM) or a user
// namespace carries no mount namespace (nscaps=EPERM, Ubuntu's AppArmor
// as emulated) the clone's errno, naming the flags tried. Control: without the stage's clone,
// every flag of UserNSFlags, as before.
func TestProbeUserNSAfterStageClone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature
	}
	for _, mode := range []string{"native", "ns=EPERM", "nscaps=EPERM"} {
		for _, cloned := range []bool{true, false} {
			name := mode + map[bool]string{true: "/cloned", false: "/not-cloned"}[cloned]
			t.Run(name, func(t *testing.T) {
				var env []string
				if mode != "native" {
					env = append(env, kerneltest.EnvEmulate+"="+mode)
				}
				if !kerneltest.RunInSubprocess(t, env...) {
					return
				}
				require.NoError(t, syscall.Setgroups(nil))
				require.NoError(t, syscall.Setresgid(65534, 65534, 65534))
				require.NoError(t, syscall.Setresuid(65534, 65534, 65534))

				stageCloned = func() bool { return cloned }
				var tried []uintptr
				tryUserNSFunc = func(flags uintptr) (uint32, unix.Errno) {
					tried = append(tried, flags)
					return tryUserNS(flags)
				}
				err := probeUserNSNow()

				want := uintptr(UserNSFlags)
				if cloned {
					want = unix.CLONE_NEWUSER | unix.CLONE_NEWNS
				}
				assert.Equal(t, []uintptr{want}, tried)
				blocked, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
				switch {
				case nsBlocked:
					// Both emulations refuse a mount namespace at the clone
					// (nscaps=EPERM lets a user namespace alone be made):
					// the reduced probe, which asks for one, still fails.
					require.ErrorIs(t, err, ErrUnavailable)
					assert.ErrorIs(t, err, blocked)
					if cloned {
						assert.Contains(t, err.Error(), "clone(CLONE_NEWUSER|CLONE_NEWNS)")
					} else {
						assert.Contains(t, err.Error(), "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC)")
					}
				default:
					assert.NoError(t, err)
				}
			})
		}
	}
}
