package limits_test

import (
	"bufio"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
)

// v2Parent makes a parent group for the test in a real cgroup2
// hierarchy: the unified mode's root, or on a hybrid host its
// /sys/fs/cgroup/unified (whose controllers, here hugetlb only, do not
// matter for placement, cgroup.kill, cpu.stat and removal).
func v2Parent(t *testing.T) string {
	t.Helper()
	var root string
	for _, d := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(d, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			root = d
			break
		}
	}
	if root == "" || os.Geteuid() != 0 {
		kerneltest.Missing(t, "no writable cgroup2 hierarchy (needs root and a cgroup2 mount)")
	}
	dir := filepath.Join(root, "landjail-test-"+strconv.Itoa(os.Getpid())+"-"+t.Name())
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() { unix.Rmdir(dir) })
	return dir
}

// TestV2PlaceKillRemove: on cgroup v2 (Options.Parent) the child is
// cloned into the group (CLONE_INTO_CGROUP: its /proc/PID/cgroup names
// it from its first instruction), a setsid'd SIGTERM-ignoring daemon
// that outlived its parent (control: alive before Close) is killed by
// cgroup.kill, CPU time comes from cpu.stat, a pids limit the parent
// cannot offer is reported NotEnforced with the reason (and refused with
// Strict), and the group is removed. Where clone3 is refused (the ns
// emulation, like container seccomp profiles) the run has no v2 group
// and its limits say why.
func TestV2PlaceKillRemove(t *testing.T) {
	parent := v2Parent(t)
	r, err := limits.Start(limits.Spec{Pids: 40}, limits.Options{Parent: parent})
	require.NoError(t, err)
	if _, ok := kerneltest.Blocked(kerneltest.FeatureNamespaces); ok {
		// The emulation refuses clone3 with ENOSYS, as container
		// profiles do: no CLONE_INTO_CGROUP, so no v2 group at all.
		l := r.Limits()[0]
		assert.Equal(t, limits.NotEnforced, l.Mechanism)
		assert.Contains(t, l.Note, "clone3")
		assert.Equal(t, -1, r.CgroupFD())
		return
	}
	require.NotEqual(t, -1, r.CgroupFD())
	l := r.Limits()[0]
	hasPids := strings.Contains(readFile(t, filepath.Join(parent, "cgroup.controllers")), "pids")
	if hasPids {
		assert.Equal(t, limits.CgroupV2, l.Mechanism)
	} else {
		assert.Equal(t, limits.NotEnforced, l.Mechanism)
		assert.Contains(t, l.Note, "no cgroup v2 pids controller")
		_, err := limits.Start(limits.Spec{Pids: 40}, limits.Options{Parent: parent, Strict: true})
		assert.ErrorIs(t, err, limits.ErrNotEnforced)
	}

	c := osexec.Command(python(t), "-c", daemon)
	stdout, err := c.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, r.Start(c))
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.NoError(t, c.Wait())
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	rel := strings.TrimPrefix(r.Path(), filepath.Dir(parent))
	assert.Contains(t, readFile(t, "/proc/"+strconv.Itoa(pid)+"/cgroup"), rel, "the daemon is in the group")
	require.NoError(t, unix.Kill(pid, 0), "control: the daemon outlived its parent")

	res, err := r.Close()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Killed, 2)
	assert.True(t, gone(pid))
	assert.NotNil(t, res.CPUTimeUsec, "cpu.stat usage_usec is always there on v2")
	_, err = os.Stat(res.Cgroup)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestV2Stale: a group in a v2 parent whose owner is gone (a pid that
// does not exist) with a sleep in it is emptied and removed by
// CleanStale; a directory of another name and a group named for another
// PID namespace are left alone (controls).
func TestV2Stale(t *testing.T) {
	parent := v2Parent(t)
	var st unix.Stat_t
	require.NoError(t, unix.Stat("/proc/self/ns/pid", &st))
	stale := filepath.Join(parent, "landjail-"+strconv.FormatUint(st.Ino, 10)+"-999999999-1-1")
	otherNS := filepath.Join(parent, "landjail-1-999999999-1-1") // another PID namespace's
	other := filepath.Join(parent, "not-landjail")
	require.NoError(t, os.Mkdir(stale, 0o755))
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.Mkdir(otherNS, 0o755))
	t.Cleanup(func() { unix.Rmdir(other); unix.Rmdir(otherNS); unix.Rmdir(stale) })
	sleep := osexec.Command("/bin/sleep", "100")
	require.NoError(t, sleep.Start())
	go sleep.Wait()
	require.NoError(t, os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0))
	n, err := limits.CleanStale(parent)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, other)
	assert.DirExists(t, otherNS, "a group of another PID namespace is not judged")
	assert.True(t, gone(sleep.Process.Pid))
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestAvailable: the probe agrees with the file system: cgroup v2 when
// /sys/fs/cgroup is a cgroup2 mount (root, pids offered, clone3
// allowed), cgroup v1 when it is a tmpfs of v1 hierarchies with pids
// (root); the reason is empty only for v2; this process's cgroup
// namespace is compared with the initial one's inode.
func TestAvailable(t *testing.T) {
	p := limits.Available()
	t.Logf("%+v", p)
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs("/sys/fs/cgroup", &st))
	switch {
	case p.Mechanism == limits.CgroupV2:
		assert.EqualValues(t, unix.CGROUP2_SUPER_MAGIC, st.Type)
		assert.Contains(t, p.Controllers, "pids")
		assert.Empty(t, p.Reason)
	case p.Mechanism == limits.CgroupV1:
		assert.NotEqualValues(t, unix.CGROUP2_SUPER_MAGIC, st.Type)
		assert.Contains(t, p.Controllers, "pids")
		assert.Zero(t, os.Geteuid())
		assert.NotEmpty(t, p.Reason, "says why not v2")
	default:
		assert.NotEmpty(t, p.Reason)
	}
	var ns unix.Stat_t
	require.NoError(t, unix.Stat("/proc/self/ns/cgroup", &ns))
	assert.Equal(t, ns.Ino != 0xEFFFFFFB, p.CgroupNamespace)
}
