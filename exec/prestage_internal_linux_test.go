package exec

import (
	"bufio"
	"context"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// envPrestage marks the re-executed, unprivileged test binary of the
// PrestartUserStage tests; its value is the workspace.
const envPrestage = "LANDJAIL_PRESTAGE_WS"

// asNobody re-executes the test binary as uid 65534 (no capability)
// running only the test name, with a fresh workspace (mode 0777) in
// envPrestage and env added, and requires that it passed there; it
// returns the output. Without env it skips where namespaces are refused
// (emulation): there is no stage to prestart.
func asNobody(t *testing.T, name string, env ...string) string {
	t.Helper()
	return asUser(t, 65534, 65534, name, env...)
}

// asUser is asNobody as uid and gid.
func asUser(t *testing.T, uid, gid uint32, name string, env ...string) string {
	t.Helper()
	kerneltest.RequireLandlockABI(t, 4)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature: no kerneltest skip
	}
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked && len(env) == 0 {
		t.Skip("namespaces refused (emulation): no user-namespace stage")
	}
	base, err := os.MkdirTemp("", "landjail-prestage-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	base, err = filepath.EvalSymlinks(base)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	ws := filepath.Join(base, "ws")
	for _, d := range []string{ws, filepath.Join(base, "extra")} {
		require.NoError(t, os.Mkdir(d, 0o777))
		require.NoError(t, os.Chmod(d, 0o777))
	}
	bin := filepath.Join(base, "exec.test")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	c := osexec.CommandContext(t.Context(), bin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	c.Dir = base
	c.Env = append(append(os.Environ(), envPrestage+"="+ws, "GOCOVERDIR=", "HOME="+ws), env...)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+name)
	require.NotContains(t, string(out), "--- SKIP")
	return string(out)
}

// prestageRuleset is the view ruleset of the workspace in envPrestage,
// which a caller without capabilities gets from the user-namespace stage.
func prestageRuleset(t *testing.T) (*jail.Workspace, *landlock.Ruleset) {
	t.Helper()
	require.NotZero(t, os.Geteuid(), "the parent must be unprivileged here")
	ws, err := jail.New(os.Getenv(envPrestage))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{Namespaces: true, System: true})
	require.NoError(t, err)
	require.True(t, rs.UserNamespace(), "layer %v: %s", rs.Report().Layer, rs.Report().LayerReason)
	return ws, rs
}

// isChild reports whether pid is a live (not zombie) child of this
// process (/proc/PID/stat: state and parent).
func isChild(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid())
}

// noChildren reports whether this process has no child at all, running
// or not reaped (wait4 ECHILD).
func noChildren() bool {
	_, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil)
	return err == unix.ECHILD
}

// waitNoChildren waits up to 10 s until this process has no child.
func waitNoChildren(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !noChildren() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.True(t, noChildren(), "a stage left behind")
}

// prestageScript shows what the target gets: its PID namespace (the
// stage's), the view (a host directory outside the workspace read-only),
// its stdout and the ExtraFile as fd 3.
const prestageScript = `readlink /proc/self/ns/pid; touch /etc/landjail-prestage 2>/dev/null && echo etc=rw || echo etc=ro; echo extra >&3`

// runPrestageScript runs prestageScript confined by rs with a pipe as
// stdout and another as fd 3 (both *os.File, so a prestarted stage may
// take them), and returns both outputs and how many prestarted stages
// Start took meanwhile.
func runPrestageScript(t *testing.T, ws *jail.Workspace, rs *landlock.Ruleset, edit func(*Cmd)) (stdout, extra string, taken int64) {
	t.Helper()
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer outR.Close()
	xR, xW, err := os.Pipe()
	require.NoError(t, err)
	defer xR.Close()
	c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", prestageScript)
	c.Stdout = outW
	c.ExtraFiles = []*os.File{xW}
	if edit != nil {
		edit(c)
	}
	before := prestageTaken.Load()
	err = c.Start()
	outW.Close()
	xW.Close()
	require.NoError(t, err)
	o, _ := io.ReadAll(outR)
	x, _ := io.ReadAll(xR)
	require.NoError(t, c.Wait())
	return string(o), string(x), prestageTaken.Load() - before
}

// TestPrestartedStage: as uid 65534, a stage started by
// PrestartUserStage before the command was known runs it exactly as a
// stage cloned by Start does: in a PID namespace of its own, in the view
// (/etc read-only), stdout and the ExtraFile (passed with the spec) in
// place. Control: the same run without PrestartUserStage (Start clones
// the stage, none taken). Shown able to fail: with the stage ignoring the
// passed descriptors (files left 0..NFiles-1) the prestarted run printed
// nothing on either pipe.
func TestPrestartedStage(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestPrestartedStage")
		return
	}
	ws, rs := prestageRuleset(t)
	for _, prestart := range []bool{false, true} {
		t.Run("prestart="+strconv.FormatBool(prestart), func(t *testing.T) {
			if prestart {
				PrestartUserStage(true)
			}
			stdout, extra, taken := runPrestageScript(t, ws, rs, nil)
			own, err := os.Readlink("/proc/self/ns/pid")
			require.NoError(t, err)
			ns, rest, _ := strings.Cut(stdout, "\n")
			assert.True(t, strings.HasPrefix(ns, "pid:["), stdout)
			assert.NotEqual(t, own, ns, "the command is in this process's PID namespace")
			assert.Equal(t, "etc=ro\n", rest)
			assert.Equal(t, "extra\n", extra)
			want := int64(0)
			if prestart {
				want = 1
			}
			assert.Equal(t, want, taken, "prestarted stages taken")
			waitNoChildren(t)
		})
	}
}

// TestPrestartedStageViewAhead: the stage gets the view when the Cmd is
// made (CommandContext) or, prestarted after that, at Start; either way it
// runs the command as a stage cloned at Start does. A Cmd whose Ruleset
// was replaced after CommandContext does not take the stage that was
// sent the old view: the command runs in the new view (a directory
// outside the workspace writable), from a stage cloned at Start; control:
// the old Ruleset's view keeps that directory read-only. Red without the
// comparison in takePrestage: the stage was taken (1) and the write
// failed (EROFS, the old view).
func TestPrestartedStageViewAhead(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestPrestartedStageViewAhead")
		return
	}
	ws, rs := prestageRuleset(t)
	extra := filepath.Join(filepath.Dir(os.Getenv(envPrestage)), "extra")
	ws2, err := jail.New(os.Getenv(envPrestage), jail.WithAllowed(extra, jail.ReadWrite))
	require.NoError(t, err)
	t.Cleanup(func() { ws2.Close() })
	rs2, err := landlock.Compile(ws2, landlock.Options{Namespaces: true, System: true})
	require.NoError(t, err)
	require.True(t, rs2.UserNamespace())
	write := `touch ` + extra + `/f 2>/dev/null && echo rw || echo ro`
	run := func(c *Cmd) (string, int64) {
		outR, outW, err := os.Pipe()
		require.NoError(t, err)
		defer outR.Close()
		c.Stdout = outW
		before := prestageTaken.Load()
		err = c.Start()
		outW.Close()
		require.NoError(t, err)
		out, _ := io.ReadAll(outR)
		require.NoError(t, c.Wait())
		os.Remove(filepath.Join(extra, "f"))
		return string(out), prestageTaken.Load() - before
	}
	t.Run("prestarted after CommandContext", func(t *testing.T) {
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", write)
		PrestartUserStage(true)
		out, taken := run(c)
		assert.Equal(t, "ro\n", out)
		assert.EqualValues(t, 1, taken)
		waitNoChildren(t)
	})
	t.Run("control: the old view", func(t *testing.T) {
		PrestartUserStage(true)
		out, taken := run(CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", write))
		assert.Equal(t, "ro\n", out)
		assert.EqualValues(t, 1, taken)
		waitNoChildren(t)
	})
	t.Run("Ruleset replaced after CommandContext", func(t *testing.T) {
		PrestartUserStage(true)
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", write)
		c.Workspace, c.Ruleset = ws2, rs2
		out, taken := run(c)
		assert.Equal(t, "rw\n", out)
		assert.Zero(t, taken)
		waitNoChildren(t)
	})
}

// TestPrestartedStageNotTaken: a Cmd that needs what must hold from the
// stage's clone on (Rlimits: set on the process for the fork) does not
// take the prestarted stage: its limit is in force in the command
// (ulimit -n), the stage is discarded and reaped (no child left). Control:
// the stage was a child of this process before the Start. The same for
// discardPrestage (what Exec calls before replacing the process).
func TestPrestartedStageNotTaken(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestPrestartedStageNotTaken")
		return
	}
	ws, rs := prestageRuleset(t)
	stagePid := func() int {
		prestaged.mu.Lock()
		ps := prestaged.ps
		prestaged.mu.Unlock()
		require.NotNil(t, ps)
		<-ps.done
		require.NoError(t, ps.err)
		return ps.cmd.Process.Pid
	}
	t.Run("Rlimits", func(t *testing.T) {
		PrestartUserStage(true)
		require.True(t, isChild(stagePid()), "control: the prestarted stage is a child")
		outR, outW, err := os.Pipe()
		require.NoError(t, err)
		defer outR.Close()
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "ulimit -n")
		c.Stdout = outW
		c.Rlimits = []Rlimit{{Resource: unix.RLIMIT_NOFILE, Cur: 200, Max: 200}}
		before := prestageTaken.Load()
		err = c.Start()
		outW.Close()
		require.NoError(t, err)
		out, _ := io.ReadAll(outR)
		require.NoError(t, c.Wait())
		assert.Equal(t, "200\n", string(out))
		assert.Zero(t, prestageTaken.Load()-before, "taken")
		waitNoChildren(t)
	})
	t.Run("discardPrestage", func(t *testing.T) {
		PrestartUserStage(false)
		pid := stagePid()
		require.True(t, isChild(pid), "control: the prestarted stage is a child")
		discardPrestage(&Cmd{})
		assert.True(t, noChildren(), "reaped when discardPrestage returns")
		_, _, taken := runPrestageScript(t, ws, rs, nil)
		assert.Zero(t, taken, "nothing left to take")
	})
}

// TestPrestartedStageExitsWithParent: a prestarted stage that no Start
// took exits when its parent does (end of file on its socket): the
// unprivileged child prints the stage's pid and exits; the stage is gone
// soon after (reaped by whoever inherited it). Control: alive while the
// child was (checked there). While it waits it is not dumpable (its
// /proc files owned by root; control: the child's own, by its uid). Red
// with a stage that ignores end of file; red with PR_SET_DUMPABLE after
// the spec (as before), the waiting stage's files owned by uid 65534.
func TestPrestartedStageExitsWithParent(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		out := asNobody(t, "TestPrestartedStageExitsWithParent")
		i := strings.Index(out, "stage pid ")
		require.GreaterOrEqual(t, i, 0, out)
		pid, err := strconv.Atoi(strings.Fields(out[i+len("stage pid "):])[0])
		require.NoError(t, err)
		gone := func() bool {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				return true
			}
			// A zombie not yet reaped by init has exited too.
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			return len(f) > 0 && f[0] == "Z"
		}
		deadline := time.Now().Add(10 * time.Second)
		for !gone() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.True(t, gone(), "the stage %d outlived its parent", pid)
		return
	}
	PrestartUserStage(true)
	prestaged.mu.Lock()
	ps := prestaged.ps
	prestaged.mu.Unlock()
	require.NotNil(t, ps)
	<-ps.done
	require.NoError(t, ps.err)
	pid := ps.cmd.Process.Pid
	time.Sleep(50 * time.Millisecond)
	require.True(t, isChild(pid), "control: the stage waits while its parent lives")
	require.NoError(t, unix.Kill(pid, 0))
	// Waiting, it is not dumpable: its /proc files belong to root (its
	// user namespace's root is not mapped), not to this uid, so no
	// process of this uid may ptrace it or read its memory. Control:
	// this process's own.
	owner := func(pid string) uint32 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat("/proc/"+pid+"/environ", &st))
		return st.Uid
	}
	require.EqualValues(t, os.Getuid(), owner("self"), "control")
	deadline := time.Now().Add(5 * time.Second)
	for owner(strconv.Itoa(pid)) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.Zero(t, owner(strconv.Itoa(pid)), "the waiting stage is dumpable")
	t.Logf("stage pid %d", pid)
}

// TestPrestartRefused: where user namespaces are refused (a container's
// seccomp profile: LANDJAIL_EMULATE=ns=EPERM), PrestartUserStage's clone
// fails and leaves nothing behind (no child), the ruleset falls back to
// Landlock alone, and the command runs as without the call. Control:
// everywhere else the prestarted stage runs (TestPrestartedStage).
func TestPrestartRefused(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestPrestartRefused", kerneltest.EnvEmulate+"=ns=EPERM")
		return
	}
	_, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
	require.True(t, blocked, "the emulation is in force")
	PrestartUserStage(true)
	prestaged.mu.Lock()
	ps := prestaged.ps
	prestaged.mu.Unlock()
	require.NotNil(t, ps)
	<-ps.done
	assert.ErrorIs(t, ps.err, unix.EPERM)
	assert.True(t, noChildren(), "a failed prestart left a child")
	ws, err := jail.New(os.Getenv(envPrestage))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{Namespaces: true, System: true})
	require.NoError(t, err)
	assert.False(t, rs.UserNamespace())
	out, err := CommandContext(context.Background(), ws, rs, "/bin/echo", "ok").Output()
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(out))
	assert.True(t, noChildren())
}

// TestStageForwardsSignals: as uid 65534, a signal to the stage (what
// Cmd.Process is) reaches the command's process group and the stage exits
// with the command's status: the command's own exit code after its trap
// ran, 128+15 when SIGTERM killed it; with the stage prestarted or cloned
// at Start. Shown able to fail: with supervise's forwarding removed the
// command never saw the signal (the test's 10 s timeout killed it).
func TestStageForwardsSignals(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestStageForwardsSignals")
		return
	}
	ws, rs := prestageRuleset(t)
	for _, tc := range []struct {
		name, script, out string
		code              int
	}{
		{"trapped", `trap 'echo term; exit 7' TERM; echo ready; while :; do sleep 0.05; done`, "term\n", 7},
		{"killed", `echo ready; exec sleep 100`, "", 128 + 15},
	} {
		for _, prestart := range []bool{false, true} {
			t.Run(tc.name+"/prestart="+strconv.FormatBool(prestart), func(t *testing.T) {
				if prestart {
					PrestartUserStage(true)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				outR, outW, err := os.Pipe()
				require.NoError(t, err)
				defer outR.Close()
				c := CommandContext(ctx, ws, rs, "/bin/sh", "-c", tc.script)
				c.Stdout = outW
				err = c.Start()
				outW.Close()
				require.NoError(t, err)
				br := bufio.NewReader(outR)
				line, err := br.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "ready\n", line)
				require.NoError(t, c.Process.Signal(unix.SIGTERM))
				rest, _ := io.ReadAll(br)
				c.Wait()
				assert.Equal(t, tc.out, string(rest))
				require.NotNil(t, c.ProcessState)
				assert.Equal(t, tc.code, c.ProcessState.ExitCode())
				assert.NoError(t, ctx.Err(), "the command outlived the signal")
				waitNoChildren(t)
			})
		}
	}
}

// TestStageMapsCallerIDs: the stage, cloned without uid and gid maps
// (CLONE_VM|CLONE_VFORK: os/exec cannot write them), maps the caller's
// ids to themselves itself: as uid 4242 and gid 4343 (not 65534, which
// is also what an unmapped id shows), the command runs as 4242:4343,
// with exactly those one-line maps and setgroups denied, prestarted and
// not, and a file it creates is owned by 4242:4343 outside. Control: the
// test process (the stage's parent) runs as 4242:4343. Shown able to
// fail: without the ids in the marker the command saw 65534 (unmapped)
// and a one-line map was missing.
func TestStageMapsCallerIDs(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asUser(t, 4242, 4343, "TestStageMapsCallerIDs")
		return
	}
	require.Equal(t, 4242, os.Getuid(), "control: the parent's uid")
	require.Equal(t, 4343, os.Getgid(), "control: the parent's gid")
	ws, rs := prestageRuleset(t)
	for _, prestart := range []bool{false, true} {
		t.Run("prestart="+strconv.FormatBool(prestart), func(t *testing.T) {
			if prestart {
				PrestartUserStage(true)
			}
			f := filepath.Join(ws.Root(), "made-"+strconv.FormatBool(prestart))
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			defer outR.Close()
			c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c",
				`id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; touch `+f)
			c.Stdout = outW
			err = c.Start()
			outW.Close()
			require.NoError(t, err)
			out, _ := io.ReadAll(outR)
			require.NoError(t, c.Wait())
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Len(t, lines, 5, "%s", out)
			assert.Equal(t, []string{"4242", "4343"}, lines[:2])
			assert.Equal(t, []string{"4242", "4242", "1"}, strings.Fields(lines[2]))
			assert.Equal(t, []string{"4343", "4343", "1"}, strings.Fields(lines[3]))
			assert.Equal(t, "deny", lines[4])
			var st unix.Stat_t
			require.NoError(t, unix.Stat(f, &st))
			assert.Equal(t, [2]uint32{4242, 4343}, [2]uint32{st.Uid, st.Gid}, "the file's owner outside")
			waitNoChildren(t)
		})
	}
}
