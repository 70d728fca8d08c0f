package exec_test

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/landlock"
)

// TestFreshSpawnerGuarded: a child of a fresh spawner thread can neither
// signal that thread nor PTRACE_SEIZE it while it is alive (red team
// round 26, R26b-3: the child, in the thread's Landlock domain, tgkill'ed
// it (SIGKILL: landjail gone, the command unsupervised) or seized it and
// ran code in landjail's unconfined threads, in the moment between its
// execve and the thread's exit, 2 to 5 times in 10). Here the thread
// stays alive until the child is done, so the window is the whole run;
// the spawner guard refuses the signal and the seize, and the caller is
// not dumpable (so ptrace_may_access refuses /proc/PID/mem too). Control:
// the same child forked by an unconfined thread of this process signals
// and seizes it.
// Run as root and, re-executed, as uid 65534: root's child is also
// refused /proc/PID/mem by its empty permitted set (cap_ptrace_access_check),
// uid 65534's only by the caller not being dumpable.
func TestFreshSpawnerGuarded(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if h := os.Getenv("LANDJAIL_FRESHGUARD_HELPER"); h != "" {
		require.NotZero(t, os.Geteuid(), "the parent must be unprivileged here")
		freshSpawnerGuarded(t, h)
		return
	}
	helper := buildHelper(t)
	t.Run("root", func(t *testing.T) { freshSpawnerGuarded(t, helper) })
	t.Run("uid 65534", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to switch to uid 65534")
		}
		base := t.TempDir()
		for d := base; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		for _, c := range [][2]string{{os.Args[0], "exec.test"}, {helper, "helper"}} {
			data, err := os.ReadFile(c[0])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(base, c[1]), data, 0o755))
		}
		c := osexec.Command(filepath.Join(base, "exec.test"), "-test.run=^TestFreshSpawnerGuarded$", "-test.v")
		c.Dir = base
		c.Env = append(os.Environ(), "LANDJAIL_FRESHGUARD_HELPER="+filepath.Join(base, "helper"), "GOCOVERDIR=", "TMPDIR=/tmp")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "--- PASS: TestFreshSpawnerGuarded")
	})
}

func freshSpawnerGuarded(t *testing.T, helper string) {
	f := newFixture(t)
	data, err := os.ReadFile(helper)
	require.NoError(t, err)
	f.helper = filepath.Join(f.rox, "helper")
	require.NoError(t, os.WriteFile(f.helper, data, 0o755))
	rs := f.compile(t, landlock.Options{})
	child := func() (string, error) {
		out, err := osexec.Command(f.helper, "seize", strconv.Itoa(unix.Gettid())).CombinedOutput()
		return string(out), err // waited for on this thread: it stays alive
	}

	var control string
	var cerr error
	require.NoError(t, osthread.Run(func() error {
		control, cerr = child()
		return nil
	}))
	require.NoError(t, cerr, "control: an unconfined thread is signalled and seized: %s", control)
	assert.Contains(t, control, "tgkill: <nil>; ptrace seize: errno 0; open mem: <nil>")

	require.NoError(t, exec.UndumpableForTest())
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	require.NoError(t, err)
	assert.Zero(t, d, "the caller is still dumpable")
	if os.Geteuid() != 0 {
		// Not dumpable, the caller refuses every ptrace of a process
		// without CAP_SYS_PTRACE, even from an unconfined child.
		var after string
		require.NoError(t, osthread.Run(func() error {
			after, _ = child()
			return nil
		}))
		assert.Contains(t, after, "tgkill: <nil>; ptrace seize: operation not permitted; open mem: open /proc/", "an unconfined child of a dumpable-0 caller")
		assert.Contains(t, after, "/mem: permission denied")
	}

	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/true")
	c.FreshThread = true
	var out string
	require.NoError(t, exec.SpawnForTest(c, func() error {
		out, err = child()
		return nil
	}))
	t.Logf("uid %d, confined child: %s", os.Geteuid(), out)
	assert.Error(t, err, "the child signalled or seized its spawner thread: %s", out)
	assert.Contains(t, out, "tgkill: operation not permitted; ptrace seize: operation not permitted; open mem: open /proc/")
	assert.Contains(t, out, "/mem: permission denied")
}
