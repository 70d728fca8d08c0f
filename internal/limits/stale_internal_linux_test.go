package limits

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestCleanDefaultAmortised: Start's sweep of the default cgroup v1
// parents (cleanDefault) still removes a group a SIGKILLed landjail left
// (an empty group named for a dead owner of this PID namespace):
//   - in the pids hierarchy at once, even just after a full sweep (the
//     quick check), with the same group in the other hierarchies;
//   - in another hierarchy alone (what a partial removal leaves) once the
//     last full sweep is staleEvery old, or stamped in the future, even
//     after groups were made and removed in the pids directory (which
//     moves its mtime); the full sweep stamps the time on the pids
//     "landjail" directory's atime.
//
// Shown able to fail: with the quick check's staleNames dropped the
// pids case fails; with sweepDue always false the two others fail.
func TestCleanDefaultAmortised(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only (v2 sweeps its one directory at every start)")
	}
	stampDir := ""
	if mnt, ok := p.v1["pids"]; ok {
		stampDir = filepath.Join(mnt, "landjail")
	}
	other := ""
	for _, c := range []string{"memory", "cpuacct", "cpu"} {
		if mnt, ok := p.v1[c]; ok && mnt != p.v1["pids"] && mnt != p.v1["freezer"] {
			other = filepath.Join(mnt, "landjail")
			break
		}
	}
	if stampDir == "" || other == "" {
		t.Skip("needs a pids hierarchy and a memory, cpuacct or cpu one apart from it")
	}
	require.NoError(t, os.MkdirAll(stampDir, 0o755))
	require.NoError(t, os.MkdirAll(other, 0o755))
	ns := strconv.FormatUint(selfPIDNS(), 10)
	seq := 0
	staleGroup := func(dir string) string {
		seq++
		// pid 999999999 does not exist: its start time is never 1.
		g := filepath.Join(dir, "landjail-"+ns+"-999999999-1-"+strconv.Itoa(seq))
		require.NoError(t, os.Mkdir(g, 0o755))
		t.Cleanup(func() { unix.Rmdir(g) })
		return g
	}
	stamp := func(m time.Time) {
		require.NoError(t, os.Chtimes(stampDir, m, time.Time{}))
		// A group made and removed there (every run does) must not
		// refresh the stamp.
		tmp := filepath.Join(stampDir, "landjail-stamp-test-"+strconv.Itoa(os.Getpid()))
		require.NoError(t, os.Mkdir(tmp, 0o755))
		require.NoError(t, unix.Rmdir(tmp))
	}

	now := time.Now()
	stamp(now)
	g := staleGroup(stampDir)
	gOther := filepath.Join(other, filepath.Base(g))
	require.NoError(t, os.Mkdir(gOther, 0o755))
	t.Cleanup(func() { unix.Rmdir(gOther) })
	cleanDefault(now, nil)
	assert.NoDirExists(t, g, "pids hierarchy: removed at the next start")
	assert.NoDirExists(t, gOther, "the same group in another hierarchy: removed with it")

	for _, tc := range []struct {
		name string
		last time.Time
	}{
		{"last full sweep staleEvery ago", now.Add(-staleEvery)},
		{"stamp in the future", now.Add(time.Hour)},
	} {
		stamp(tc.last)
		g := staleGroup(other)
		cleanDefault(now, nil)
		assert.NoDirExists(t, g, tc.name)
		var st unix.Stat_t
		require.NoError(t, unix.Stat(stampDir, &st))
		at := time.Unix(st.Atim.Unix())
		assert.True(t, at.Equal(now), "%s: the full sweep stamped %v, want %v", tc.name, at, now)
	}
}
