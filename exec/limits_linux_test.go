package exec_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// TestCgroupPlacement: with Cmd.Cgroup the child is in the run's group
// (its /proc/PID/cgroup names it) on every spawn path: pooled, fresh
// thread, PID namespace or not; control: the same Cmd
// without Cgroup is not. And the group's pids limit binds the child: a
// shell cannot start 6 background jobs under pids 4 (control: it can
// without the group).
func TestCgroupPlacement(t *testing.T) {
	if p := limits.Available(); p.Mechanism == limits.NotEnforced {
		kerneltest.Missing(t, "no usable cgroup: %s", p.Reason)
	}
	ws, err := jail.New(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	ruleset := func(t *testing.T, ns bool) *landlock.Ruleset {
		rs, err := landlock.Compile(ws, landlock.Options{System: true, Namespaces: ns})
		require.NoError(t, err)
		t.Cleanup(func() { exec.Release(rs); rs.Close() })
		return rs
	}
	for _, tc := range []struct {
		name   string
		ns     bool
		fresh  bool
		nopidn bool
	}{
		{name: "pooled"},
		{name: "fresh", fresh: true},
		{name: "namespaces+pidns", ns: true},
		{name: "namespaces+pidns fresh", ns: true, fresh: true},
		{name: "namespaces no pidns", ns: true, nopidn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := ruleset(t, tc.ns)
			for _, placed := range []bool{true, false} {
				r, err := limits.Start(limits.DefaultSpec(), limits.Options{})
				require.NoError(t, err)
				c := exec.CommandContext(context.Background(), ws, rs, "/bin/sleep", "10")
				c.FreshThread, c.NoPIDNamespace = tc.fresh, tc.nopidn
				if placed {
					c.Cgroup = r
				}
				require.NoError(t, c.Start())
				b, err := os.ReadFile("/proc/" + strconv.Itoa(c.Process.Pid) + "/cgroup")
				require.NoError(t, err)
				in := strings.Contains(string(b), filepath.Base(r.Path()))
				assert.Equal(t, placed, in, "placed=%v: %s", placed, b)
				c.Process.Kill()
				c.Wait()
				_, err = r.Close()
				require.NoError(t, err)
			}
		})
	}
	t.Run("pids limit binds", func(t *testing.T) {
		rs := ruleset(t, false)
		for _, placed := range []bool{true, false} {
			r, err := limits.Start(limits.Spec{Pids: 4}, limits.Options{})
			require.NoError(t, err)
			c := exec.CommandContext(context.Background(), ws, rs, "/bin/sh", "-c",
				"for i in 1 2 3 4 5 6; do sleep 2 & done; wait")
			if placed {
				c.Cgroup = r
			}
			out, err := c.CombinedOutput()
			if placed {
				assert.Contains(t, string(out), "fork", "pids 4 refuses the jobs")
			} else {
				assert.NoError(t, err, "control: %s", out)
			}
			_, err = r.Close()
			require.NoError(t, err)
		}
	})
}

// TestRlimitsFileSize: with Rlimits RLIMIT_FSIZE 1 MiB a 5 MiB write
// stops at 1 MiB with EFBIG ("File too large"; SIGXFSZ ignored by the
// shell's trap, inherited across execve); control: without it the file
// gets 5 MiB. The caller's own limit is unchanged afterwards. (Without
// CAP_SYS_RESOURCE, as on the machine this was written on, the soft
// limit alone is set: the shell does not raise it.)
func TestRlimitsFileSize(t *testing.T) {
	t.Logf("hard limits: %v", exec.HardRlimits())
	dir := t.TempDir()
	ws, err := jail.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true})
	require.NoError(t, err)
	t.Cleanup(func() { exec.Release(rs); rs.Close() })
	var before unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &before))
	for _, limited := range []bool{true, false} {
		c := exec.CommandContext(context.Background(), ws, rs, "/bin/sh", "-c",
			"trap '' XFSZ; yes | head -c 5242880 > f")
		if limited {
			c.Rlimits = []exec.Rlimit{{Resource: unix.RLIMIT_FSIZE, Cur: 1 << 20, Max: 1 << 20}}
		}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		err := c.Run()
		st, serr := os.Stat(filepath.Join(dir, "f"))
		require.NoError(t, serr, "%v: %s", err, out.String())
		if limited {
			assert.Error(t, err)
			assert.Contains(t, out.String(), "File too large")
			assert.EqualValues(t, 1<<20, st.Size())
		} else {
			assert.NoError(t, err, out.String())
			assert.EqualValues(t, 5<<20, st.Size(), "control")
		}
	}
	var after unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &after))
	assert.Equal(t, before, after, "the caller's limit restored")
}
