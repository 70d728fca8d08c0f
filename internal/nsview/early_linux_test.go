package nsview_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/prenet"
)

// envEarlyChild makes the test binary run earlyChild and exit: package
// prenet's state is once per process.
const envEarlyChild = "NSVIEW_TEST_EARLY_CHILD"

// earlyChild does what landjail run does (prenet.StartWithMount from
// its initializer, KeepProbeNamespace, the probe, one Enter) and reports
// whether the view's mount, IPC and network namespaces are the ones
// prenet made early: "joined", "none" (prenet made nothing; the probe's
// error follows), or what differs.
func earlyChild() string {
	prenet.StartWithMount()
	mnt, made := prenet.PeekMount()
	net, _ := prenet.Peek()
	nsview.KeepProbeNamespace()
	if err := nsview.Probe(); err != nil || !made {
		return fmt.Sprintf("none (made %v, probe %v)", made, err)
	}
	ipc, _ := nsview.KeptIPCIno()
	dir, err := os.MkdirTemp("", "early")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	got := map[string]uint64{}
	err = osthread.Run(func() error {
		if err := nsview.New().Writable(dir).NoNetwork().Enter(); err != nil {
			return err
		}
		for _, kind := range []string{"mnt", "ipc", "net"} {
			var st unix.Stat_t
			if err := unix.Stat("/proc/thread-self/ns/"+kind, &st); err != nil {
				return err
			}
			got[kind] = st.Ino
		}
		return nil
	})
	if err != nil {
		return "enter: " + err.Error()
	}
	var odd []string
	for kind, want := range map[string]uint64{"mnt": mnt, "ipc": ipc, "net": net} {
		if got[kind] != want {
			odd = append(odd, fmt.Sprintf("%s %d, made early %d", kind, got[kind], want))
		}
	}
	if len(odd) > 0 {
		return strings.Join(odd, "; ")
	}
	return "joined"
}

// TestEarlyNamespaces: with the namespaces landjail run's package
// initializer makes (prenet.StartWithMount), the probe makes none of its
// own and the first Enter joins those (same mount, IPC and network
// namespace inodes), in a child (prenet's state is once per process).
// Red with the probe ignoring them (earlyMount returning false: the
// view's mount and IPC namespaces differ). ns=EPERM: nothing is made and
// the probe fails; not root: skipped as every view test.
func TestEarlyNamespaces(t *testing.T) {
	probeErr := nsview.Probe()
	cmd := osexec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envEarlyChild+"=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	if !kerneltest.ExpectNamespaces(t, probeErr) {
		assert.True(t, strings.HasPrefix(string(out), "none"), "%s", out)
		return
	}
	assert.Equal(t, "joined", string(out))
}
