package main

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/proctest"
)

// requireCgroup skips (fails under LANDJAIL_REQUIRE_KERNEL=1) where no
// cgroup mechanism is usable by this process.
func requireCgroup(t *testing.T) limits.Mechanism {
	t.Helper()
	p := limits.Available()
	if p.Mechanism != limits.CgroupV1 && p.Mechanism != limits.CgroupV2 {
		kerneltest.Missing(t, "a writable cgroup hierarchy: %s", p.Reason)
	}
	return p.Mechanism
}

// readReport decodes a --report file.
func readReport(t *testing.T, path string) runReport {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r runReport
	require.NoError(t, json.Unmarshal(b, &r), "%s", b)
	return r
}

// TestRunLimits: the resource limits of issue 22 through `landjail run`,
// each with its control (the same command without the limit succeeds).
// A bounded fork bomb is capped at --pids and by the default limit; a
// 512 MiB allocation is killed at --memory 64M and the report and stderr
// say OOM; a 5 MiB write fails with EFBIG at --max-file-size 1M.
func TestRunLimits(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	mech := requireCgroup(t)
	ws := wsDir(t)
	report := filepath.Join(t.TempDir(), "r.json")
	// n sleeping children; "forked N" counts those that started (a
	// shell's background job that cannot fork ends the shell instead).
	bomb := func(n int) []string {
		return []string{"/usr/bin/python3", "-c", fmt.Sprintf(`import os, time
pids = []
for i in range(%d):
    try:
        p = os.fork()
    except OSError:
        break
    if p == 0:
        time.sleep(60)
        os._exit(0)
    pids.append(p)
print("forked", len(pids))
for p in pids:
    os.kill(p, 9)
`, n)}
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	t.Run("pids", func(t *testing.T) {
		code, out, stderr := runCLI(t, append([]string{"run", "--workspace", ws, "--pids", "20", "--report", report, "--"}, bomb(60)...)...)
		require.Equal(t, 0, code, stderr)
		var n int
		fmt.Sscanf(strings.TrimSpace(out), "forked %d", &n)
		assert.Less(t, n, 20, out)
		r := readReport(t, report)
		require.NotNil(t, r.Limits)
		assert.Equal(t, mech, r.Limits.Limits[0].Mechanism)
		if assert.NotNil(t, r.Limits.PidsRefused) {
			assert.NotZero(t, *r.Limits.PidsRefused)
		}
		assert.Contains(t, stderr, "refused at --pids 20")
		code, out, stderr = runCLI(t, append([]string{"run", "--workspace", ws, "--pids", "max", "--"}, bomb(60)...)...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, "forked 60", strings.TrimSpace(out), "control: no limit")
	})
	t.Run("default pids", func(t *testing.T) {
		// 4,200 sleepers: over the default 4,096 (a bounded bomb; the
		// pids row's control shows an unlimited one starts all).
		code, out, stderr := runCLI(t, append([]string{"run", "--workspace", ws, "--timeout", "2m", "--"}, bomb(4200)...)...)
		require.Equal(t, 0, code, stderr)
		var n int
		fmt.Sscanf(strings.TrimSpace(out), "forked %d", &n)
		assert.Less(t, n, limits.DefaultPids, out)
		assert.Greater(t, n, 1000, out)
	})
	t.Run("memory", func(t *testing.T) {
		alloc := []string{"/usr/bin/python3", "-c", "b = bytearray(512 << 20); print('allocated')"}
		if _, err := os.Stat(alloc[0]); err != nil {
			t.Skip("needs /usr/bin/python3")
		}
		code, out, stderr := runCLI(t, append([]string{"run", "--workspace", ws, "--memory", "64M", "--report", report, "--"}, alloc...)...)
		assert.Equal(t, 137, code, "%s%s", out, stderr)
		assert.NotContains(t, out, "allocated")
		assert.Contains(t, stderr, "killed by the OOM killer at --memory 64MiB")
		r := readReport(t, report)
		if assert.NotNil(t, r.Limits) && assert.NotNil(t, r.Limits.OOMKills) {
			assert.NotZero(t, *r.Limits.OOMKills)
		}
		code, out, stderr = runCLI(t, append([]string{"run", "--workspace", ws, "--timeout", "1m", "--"}, alloc...)...)
		assert.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "allocated", "control: no limit")
	})
	t.Run("file size", func(t *testing.T) {
		script := `head -c 5242880 /dev/zero > big 2>/dev/null; wc -c < big`
		code, out, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--max-file-size", "1M", "--", "sh", "-c", script)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, "1048576", strings.TrimSpace(out))
		code, out, stderr = runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", script)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, "5242880", strings.TrimSpace(out), "control: no limit")
	})
}

// TestRunLimitsTeardown: a setsid'd, SIGTERM-ignoring, re-forking daemon
// is gone after the run even without a PID namespace (the control group
// is killed whole), and no group is left behind; a group of a landjail
// killed with SIGKILL is removed at the next start.
func TestRunLimitsTeardown(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	requireCgroup(t)
	ws := wsDir(t)
	tag := "landjail-daemon-" + filepath.Base(ws)
	daemon := `setsid sh -c 'trap "" TERM; while :; do sleep 1; done; : ` + tag + `' </dev/null >/dev/null 2>&1 & sleep 0.3`
	code, _, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--no-pid-namespace", "--", "sh", "-c", daemon)
	require.Equal(t, 0, code, stderr)
	time.Sleep(200 * time.Millisecond)
	if pid := proctest.Find(tag); pid != 0 {
		proctest.Kill(pid)
		t.Fatalf("the daemon %d outlived the run", pid)
	}
	parent := filepath.Join("/sys/fs/cgroup/pids/landjail")
	if limits.Available().Mechanism == limits.CgroupV2 {
		parent = ""
	}
	if parent != "" {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			assert.False(t, e.IsDir() && strings.Contains(e.Name(), fmt.Sprintf("-%d-", os.Getpid())), "left behind: %s", e.Name())
		}
	}

	// SIGKILL of landjail: its group and what runs in it stay until the
	// next landjail start removes them.
	bin := landjailBin(t)
	cmd := osexec.Command(bin, "run", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", "sleep 30; : "+tag)
	require.NoError(t, cmd.Start())
	var group string
	for range 100 {
		if group = findGroup(parent, cmd.Process.Pid); group != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotEmpty(t, group, "the run's group under %s", parent)
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--timeout", "1m", "--", "true")
	require.Equal(t, 0, code, out)
	assert.NoDirExists(t, group, "the stale group is removed at the next start")
	if pid := proctest.Find("sleep 30; : " + tag); pid != 0 {
		proctest.Kill(pid)
		t.Errorf("the killed run's command %d survived the cleanup", pid)
	}
}

// findGroup returns the group directory under parent named for the
// landjail process pid ("" when none).
func findGroup(parent string, pid int) string {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if e.IsDir() && strings.Contains(e.Name(), fmt.Sprintf("-%d-", pid)) {
			return filepath.Join(parent, e.Name())
		}
	}
	return ""
}

// TestRunLimitsUnprivileged: as uid 65534 on a cgroup v1 host no group
// can be made: the limits are reported not enforced (an explicit one on
// stderr), and --strict refuses an explicit limit.
func TestRunLimitsUnprivileged(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
	if limits.Available().Mechanism != limits.CgroupV1 {
		t.Skip("the host is not cgroup v1: a non-root caller may have a delegated v2 group")
	}
	shared := func() string {
		d, err := os.MkdirTemp("", "landjail-limits-unpriv-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, 0o777))
		d, err = filepath.EvalSymlinks(d)
		require.NoError(t, err)
		return d
	}
	ws, dir := shared(), shared()
	bin := filepath.Join(dir, "landjail")
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	run := func(args ...string) (int, string) {
		c := osexec.Command(bin, args...)
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		if ee, ok := err.(*osexec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err, "%s", out)
		return 0, string(out)
	}
	report := filepath.Join(ws, "r.json")
	code, out := run("run", "--workspace", ws, "--no-namespaces", "--report", report, "--", "true")
	require.Equal(t, 0, code, out)
	r := readReport(t, report)
	require.NotNil(t, r.Limits)
	assert.Equal(t, limits.NotEnforced, r.Limits.Limits[0].Mechanism, "the default pids limit, reported")
	assert.NotContains(t, out, "NOT enforced", "the default is best effort, in the report only")
	code, out = run("run", "--workspace", ws, "--no-namespaces", "--pids", "100", "--", "true")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "resource limits NOT enforced: pids")
	code, out = run("run", "--strict", "--workspace", ws, "--no-namespaces", "--pids", "100", "--", "true")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "not enforced")
}

// TestRunLimitsOOMSparesLandjail: the PID namespace's init shares
// landjail's memory (CLONE_VM); in the run's memory group the OOM killer
// picked it for memory the command held outside any RSS (its private
// /tmp's tmpfs pages) and so killed landjail itself: no report, no sweep
// (red team N1). The init now stays out of the group: landjail survives,
// writes the report and names the OOM kill. Red before: the report file
// was empty and landjail died with SIGKILL.
func TestRunLimitsOOMSparesLandjail(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	requireCgroup(t)
	bin := landjailBin(t)
	ws := wsDir(t)
	report := filepath.Join(t.TempDir(), "r.json")
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--memory", "64M", "--report", report, "--",
		"sh", "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>/dev/null; echo done")
	t.Logf("exit %d: %s", code, out)
	r := readReport(t, report)
	require.NotNil(t, r.Limits, "landjail wrote its report")
	if assert.NotNil(t, r.Limits.OOMKills) {
		assert.NotZero(t, *r.Limits.OOMKills)
	}
}

// TestRunReapsOrphans: R26d-2. A supervised run without a PID namespace
// reaps the orphans of the command as they exit: a program that never has
// more than 3 processes alive but orphans 600 short-lived grandchildren
// completes under --pids 200 (they stayed zombies of landjail, charged to
// the group, until the run's end: refused after ~200, so at least 390 of
// the 600 failed). The control: the default layer, whose PID
// namespace's init reaps them. The reaper runs beside the command: on a
// loaded 2-core runner it lagged 200 zombies behind a tight loop (75
// refused), so the loop yields 1 ms a round and a lag of under 100 is
// allowed; without the reaper nothing is reaped and the count stays far
// above that.
func TestRunReapsOrphans(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	requireCgroup(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	bin := landjailBin(t)
	ws := wsDir(t)
	prog := []string{"/usr/bin/python3", "-c", `import os, time
failed = 0
for i in range(600):
    time.sleep(0.001)
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        continue
    if pid == 0:
        try:
            if os.fork() == 0:
                os._exit(0)
        except OSError:
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        failed += 1
print("forks failed:", failed)
`}
	for _, mode := range [][]string{nil, {"--no-pid-namespace"}, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"layer"}, mode...), " "), func(t *testing.T) {
			args := append(append([]string{"run", "--workspace", ws}, mode...), "--timeout", "60s", "--pids", "200", "--")
			// The built binary, as the reviewer ran it.
			code, out := runBin(t, bin, nil, append(args, prog...)...)
			assert.Equal(t, 0, code, out)
			var failed int
			_, err := fmt.Sscanf(out, "forks failed: %d\n", &failed)
			require.NoError(t, err, out)
			assert.Less(t, failed, 100, out)
		})
	}
}
