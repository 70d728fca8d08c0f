package main

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
)

// TestRunCPUsBoundsSupervisor: --cpus bounds the CPU landjail's seccomp
// supervisor spends answering the command's brokered calls, as it bounds
// the command's group (red team round 22, R22b-2: 16 processes adding
// inotify watches in a loop under --cpus 0.1 made landjail use 0.95 CPU
// outside the group). Four such processes run 3 s in a supervised run
// (the namespace layer's PID namespace); landjail's own CPU time (its
// /proc stat, not its children's) must stay within 0.1 CPU of the wall
// time (×1.3, + 0.2 s for its start). Control: the same run without
// --cpus makes landjail spend more than twice that bound, or the case
// is inconclusive on this host and logs so. Red without
// Filter.LimitSupervisorCPU's call in sandbox: 2.5 s of landjail's CPU
// in 3.3 s.
func TestRunCPUsBoundsSupervisor(t *testing.T) {
	bin, ws := cpuProbeRun(t)
	measure := func(cpus ...string) (used, wall time.Duration, out string) {
		// --timeout: supervised in every layer (the Landlock-only
		// fallback execve's the command otherwise, and refuses inotify).
		args := append([]string{"run", "--timeout", "60s", "--workspace", ws}, cpus...)
		args = append(args, "--", "sh", "-c", "for i in 1 2 3 4; do ./notifyprobe burn . 3 & done; wait")
		used, wall, out, err := ownCPU(bin, ws, args...)
		require.NoError(t, err, "%s", out)
		return used, wall, out
	}
	free, freeWall, out := measure()
	require.Contains(t, out, "calls", "the probe's watches are answered")
	used, wall, out := measure("--cpus", "0.1")
	require.Contains(t, out, "calls")
	bound := time.Duration(0.1*1.3*float64(wall)) + 200*time.Millisecond
	t.Logf("landjail's CPU: %v in %v without --cpus, %v in %v with --cpus 0.1 (bound %v)", free, freeWall, used, wall, bound)
	assert.LessOrEqual(t, used, bound, "the supervisor's answers within --cpus")
	if free <= 2*bound {
		t.Logf("inconclusive control: without --cpus landjail spent only %v here", free)
	}
}

// ownCPU runs landjail (bin) with args in dir and returns its own CPU
// time (ticksOf: not its children's), the wall time, and its output.
func ownCPU(bin, dir string, args ...string) (used, wall time.Duration, out string, err error) {
	c := osexec.Command(bin, args...)
	c.Dir = dir
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	begin := time.Now()
	if err := c.Start(); err != nil {
		return 0, 0, "", err
	}
	used, err = waitCPU(c)
	return used, time.Since(begin), buf.String(), err
}

// waitCPU waits for the started c and returns its own CPU time (its
// /proc stat's utime and stime, read every 50 ms until it exits).
func waitCPU(c *osexec.Cmd) (used time.Duration, err error) {
	ticks := func(pid int) time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return -1
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		return time.Duration(u+s) * 10 * time.Millisecond // USER_HZ 100
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for {
		// A zombie's stat reads 0: the largest sample is landjail's.
		used = max(used, ticks(c.Process.Pid))
		select {
		case err := <-done:
			return used, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestRunCPUsBoundsTerminalRelay: --cpus bounds the CPU landjail's
// pseudo-terminal relay spends copying the command's output to the
// caller's terminal (red team round 22, R22c-3: a command writing to
// its terminal as fast as it could cost landjail 1.75 times its own
// share). On a terminal in raw mode, `yes` writes long lines for 3 s
// while the test reads the terminal as fast as it can; landjail's own
// CPU must stay within what the same run with `sleep 3` costs it plus
// 0.1 CPU of the wall time (×1.3, + 0.1 s). Red: 0.96 s in 3 s. Control: without
// --cpus landjail spends more than twice that, or the case is
// inconclusive here and logs so. Red without Relay.LimitCPU's call in
// run.go.
func TestRunCPUsBoundsTerminalRelay(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	requireCgroup(t)
	if !slices.Contains(limits.Available().Controllers, "cpu") {
		kerneltest.Missing(t, "no cpu controller")
	}
	bin := landjailBin(t)
	ws := wsDir(t)
	// Long lines on a raw terminal: the command's writes are cheap
	// copies, the relay's read and write of each chunk its whole cost.
	const (
		idleCmd  = "stty raw -echo; sleep 3"
		writeCmd = "stty raw -echo; timeout 3 yes " + "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	)
	run := func(cmd string, cpus ...string) (used, wall time.Duration) {
		m, s := callerTerminal(t)
		args := append([]string{bin, "run", "--workspace", ws}, cpus...)
		args = append(args, "--", "sh", "-c", cmd)
		begin := time.Now()
		c := osexec.Command(args[0], args[1:]...)
		c.Dir = ws
		c.Stdin, c.Stdout, c.Stderr = s, s, s
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		require.NoError(t, c.Start())
		var shown atomic.Int64
		go func() {
			b := make([]byte, 64<<10)
			for {
				n, err := m.Read(b)
				shown.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		used, err := waitCPU(c)
		if cmd == idleCmd {
			require.NoError(t, err)
		} else {
			assertExit(t, err, 124, fmt.Sprintf("%d bytes shown", shown.Load())) // timeout's
			require.Greater(t, shown.Load(), int64(1<<20), "the output reached the terminal")
		}
		return used, time.Since(begin)
	}
	idle, _ := run(idleCmd, "--cpus", "0.1")
	free, freeWall := run(writeCmd)
	used, wall := run(writeCmd, "--cpus", "0.1")
	bound := idle + time.Duration(0.1*1.3*float64(wall)) + 100*time.Millisecond
	t.Logf("landjail's CPU: %v idle (sleep 3), %v in %v without --cpus, %v in %v with --cpus 0.1 (bound %v)", idle, free, freeWall, used, wall, bound)
	assert.LessOrEqual(t, used, bound, "the relay within --cpus")
	if free <= 2*bound {
		t.Logf("inconclusive control: without --cpus landjail spent only %v here", free)
	}
}

// TestRunCPUsBoundsLiveWatch: --cpus bounds the CPU the live watch of
// --protect-agent-config spends on what the command does, as it bounds
// the command's group (red team round 22, R22c-2: renaming a directory
// of 20,000 subdirectories back and forth under --cpus 0.1 made
// landjail use 0.9 CPU; here, before the fix, 1.0 CPU for the 3 s of
// the loop, and an overflow of inotify's queue stopped the command).
// The workspace holds a directory of 5,000 subdirectories (known at the
// sweep's Take, so each move back is examined again); the command
// renames it away and back for 3 s. landjail's own CPU must stay within
// what the same run with `sleep 3` costs it (the sweep before and after
// the command) plus 0.1 CPU of the wall time ×1.3 and the drain of the
// events queued when the command ends (0.3 s), with no event lost.
// Control: the same run without --cpus makes landjail spend more than
// 0.3 CPU over the idle run's CPU (until the command is stopped should
// inotify's queue overflow), or the case is inconclusive and logs so.
// Red without the Throttle's Share in sandbox.Plan.WatchSweep (2.65 s
// in 3.3 s); without its Freeze (the command held while the watch has a
// backlog), the --cpus run's queue overflowed in 3 of 8 runs on a
// loaded host.
func TestRunCPUsBoundsLiveWatch(t *testing.T) {
	bin, ws := cpuProbeRun(t)
	// In a subdirectory: the Landlock-only layer (ns=EPERM) freezes the
	// workspace's root, where protected names are carved out.
	for i := range 5000 {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub/a", "d"+strconv.Itoa(i)), 0o755))
	}
	run := func(cmd string, cpus ...string) (used, wall time.Duration, out string) {
		args := append([]string{"run", "--protect-agent-config", "--workspace", ws}, cpus...)
		used, wall, out, err := ownCPU(bin, ws, append(args, "--", "sh", "-c", cmd)...)
		if len(cpus) > 0 || !strings.Contains(out, "overflowed") {
			require.NoError(t, err, "%s", out)
		}
		if _, err := os.Stat(filepath.Join(ws, "sub/a")); err != nil {
			require.NoError(t, os.Rename(filepath.Join(ws, "sub/b"), filepath.Join(ws, "sub/a")))
		}
		return used, wall, out
	}
	idle, _, _ := run("sleep 3", "--cpus", "0.1")
	free, freeWall, _ := run("./notifyprobe rename sub 3") // may overflow: stopped
	used, wall, out := run("./notifyprobe rename sub 3", "--cpus", "0.1")
	require.Contains(t, out, "renames")
	require.NotContains(t, out, "overflowed", "the command held, its events not lost")
	// Since cpushare.MaxHold (red team round 24, R24c-1; README) what one
	// charge owes beyond a 2 s hold is forgiven, so a watch whose event
	// batches cost more than the share's credit runs past 0.1: measured
	// 0.09-0.35 CPU over the idle run here under load (the CI's 1.23 s
	// against the former 0.13-CPU bound), against 0.9-1.1 unbounded. The
	// bound is 0.4 CPU: a share that does not hold still fails.
	bound := idle + time.Duration(0.4*float64(wall)) + 300*time.Millisecond
	t.Logf("landjail's CPU: %v idle (sleep 3), %v in %v without --cpus, %v in %v with --cpus 0.1 (bound %v)", idle, free, freeWall, used, wall, bound)
	assert.LessOrEqual(t, used, bound, "the live watch within --cpus")
	if rate := float64(free-idle) / float64(freeWall); rate <= 0.3 {
		t.Logf("inconclusive control: without --cpus landjail spent only %.2f CPU over its idle run here", rate)
	}
}

// cpuProbeRun skips (or fails, LANDJAIL_REQUIRE_KERNEL) without Landlock,
// a control group or its cpu controller, and returns landjail's binary
// and a workspace holding testdata/notifyprobe.
func cpuProbeRun(t *testing.T) (bin, ws string) {
	t.Helper()
	kerneltest.RequireLandlockABI(t, 1)
	requireCgroup(t)
	if !slices.Contains(limits.Available().Controllers, "cpu") {
		kerneltest.Missing(t, "no cpu controller")
	}
	bin = landjailBin(t)
	probe := buildCLI(t, "./testdata/notifyprobe", "CGO_ENABLED=0")
	ws = wsDir(t)
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notifyprobe"), data, 0o755))
	return bin, ws
}
