package exec_test

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
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

// TestExecLimits: the in-place path. A process that moved itself into
// a run's group (limits.Run.JoinProcess) and calls Cmd.Exec with Rlimits
// becomes the command in that group with those limits, hard ones
// included (/proc/self/cgroup names the group; ulimit -f and -Hf are
// 1 MiB in 512-byte blocks); so does one that only sets Cmd.Cgroup (on
// cgroup v1 Exec's thread joins alone before its execve, the path
// `landjail run` takes); control: without JoinProcess, Cgroup and Rlimits
// the command is in no such group and unlimited. The group, whose owner
// is then gone, is removed by CleanStale.
func TestExecLimits(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if mode := os.Getenv("LANDJAIL_EXEC_LIMITS"); mode != "" {
		ws, err := jail.New(os.Getenv("LANDJAIL_EXEC_LIMITS_DIR"))
		if err == nil {
			var rs *landlock.Ruleset
			rs, err = landlock.Compile(ws, landlock.Options{System: true, Extra: []landlock.Rule{
				{Path: "/proc", Access: ll.AccessFSReadFile | ll.AccessFSReadDir, Source: "extra"}}})
			var r *limits.Run
			if err == nil {
				r, err = limits.Start(limits.DefaultSpec(), limits.Options{})
			}
			if err == nil {
				os.Stdout.WriteString(filepath.Base(r.Path()) + "\n")
				c := exec.CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "cat /proc/self/cgroup; ulimit -f; ulimit -Hf")
				switch mode {
				case "join":
					c.Rlimits = []exec.Rlimit{{Resource: unix.RLIMIT_FSIZE, Cur: 1 << 20, Max: 1 << 20}}
					err = r.JoinProcess()
				case "thread":
					// cgroup v1: Exec's thread joins alone before its
					// execve; v2: the caller still joins (a descriptor).
					c.Cgroup = r
					if r.CgroupFD() >= 0 {
						err = r.JoinProcess()
					}
				}
				if err == nil {
					err = c.Exec()
				}
			}
		}
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(3)
	}
	if p := limits.Available(); p.Mechanism == limits.NotEnforced {
		kerneltest.Missing(t, "no usable cgroup: %s", p.Reason)
	}
	for _, mode := range []string{"join", "thread", "control"} {
		join := mode != "control"
		c := osexec.Command(os.Args[0], "-test.run=^TestExecLimits$")
		c.Env = append(os.Environ(), "LANDJAIL_EXEC_LIMITS="+mode, "LANDJAIL_EXEC_LIMITS_DIR="+t.TempDir())
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		group := lines[0]
		body := strings.Join(lines[1:len(lines)-2], "\n")
		if join {
			assert.Contains(t, body, group, "in the group")
			if mode == "join" {
				assert.Equal(t, []string{"2048", "2048"}, lines[len(lines)-2:], "soft and hard RLIMIT_FSIZE in 512-byte blocks")
			}
		} else {
			assert.NotContains(t, body, group, "control: not in the group")
			assert.Equal(t, []string{"unlimited", "unlimited"}, lines[len(lines)-2:], "control")
		}
	}
	_, err := limits.CleanStale("")
	require.NoError(t, err)
}
