package nsview

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestTryUserNS runs the user-namespace probe as uid 65534 (in a
// re-executed test process that drops to it) natively and under the two
// emulations that take it away: ns=EPERM (Docker's profile: no user
// namespace at all) and nscaps=EPERM (Ubuntu's AppArmor: a user
// namespace, but nothing can be mounted or unshared in it). It checks
// each step's verdict, the control that proves the mount step is really
// tried (a user namespace alone, whose mount namespace still belongs to
// the host: the mount fails with EPERM even natively), and that no child
// is left behind.
func TestTryUserNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature: no kerneltest skip
	}
	for _, mode := range []string{"native", "ns=EPERM", "nscaps=EPERM"} {
		t.Run(mode, func(t *testing.T) {
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
			require.False(t, hasCapSysAdmin())

			blocked, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			_, capsOnly := kerneltest.Blocked(kerneltest.FeatureNSCaps)

			step, errno := tryUserNS(UserNSFlags)
			if nsBlocked {
				assert.Equal(t, [2]any{uint32(stepClone), blocked}, [2]any{step, errno}, "the stage's clone")
			} else {
				assert.Equal(t, [2]any{uint32(0), unix.Errno(0)}, [2]any{step, errno}, "the stage's clone, mount and fsopen")
			}

			step, errno = tryUserNS(unix.CLONE_NEWUSER)
			if runtime.GOARCH != "amd64" {
				// The forked probe tries no mount (probe_userns_other_linux.go).
				assert.Equal(t, nsBlocked && !capsOnly, errno != 0, "a user namespace alone: %d %v", step, errno)
			} else if nsBlocked && !capsOnly {
				assert.Equal(t, [2]any{uint32(stepClone), blocked}, [2]any{step, errno}, "a user namespace alone")
			} else {
				assert.Equal(t, [2]any{uint32(stepMount), unix.EPERM}, [2]any{step, errno}, "a user namespace alone: the host's mount namespace cannot be changed from it")
			}

			err := probeUserNSNow()
			if nsBlocked {
				require.ErrorIs(t, err, ErrUnavailable)
				assert.ErrorIs(t, err, blocked)
				assert.Contains(t, err.Error(), "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC)")
			} else {
				assert.NoError(t, err)
			}

			// Every probe child is reaped (they signal nothing at exit).
			assert.Eventually(t, func() bool { return children(t) == "" }, 5*time.Second, 10*time.Millisecond, "probe children left")
		})
	}
}

// children lists the children of every thread of this process.
func children(t *testing.T) string {
	files, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	var all []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			all = append(all, strings.TrimSpace(string(b)))
		}
	}
	return strings.Join(all, " ")
}
