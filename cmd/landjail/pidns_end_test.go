package main

import (
	"bytes"
	"encoding/json"
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

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
)

// pidNSMembers returns the host PIDs of the live processes whose PID
// namespace is ns ("pid:[INODE]", as readlink /proc/PID/ns/pid says).
// Zombies are left out: they run nothing and hold nothing but their PID
// until their parent (for an orphan, the caller's init or nearest
// subreaper, which may reap late) reaps them.
func pidNSMembers(ns string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid"))
		if err != nil || l != ns {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(st, ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

// pidNSGone waits up to 10 s (a loaded CI runner) for the PID namespace
// ns to hold no live process, and returns those still in it.
func pidNSGone(ns string) []string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := pidNSMembers(ns)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunPIDNamespaceEndsWithLandjail: a supervised run's PID namespace
// holds no process once landjail has exited, whether the command left
// nothing (its init then ends with landjail's exit:
// exec.Cmd.DeferNamespaceEnd) or a background process (the namespace
// ends when the command exits). The unconfined control shows the scan
// finds a namespace that outlives its creator (unshare --pid --fork).
// Shown able to fail: an init that ignores end of file on its keep-alive
// pipe (the read loop of pidinit_vm_amd64.s not left on 0) fails the
// first case.
func TestRunPIDNamespaceEndsWithLandjail(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	kerneltest.RequireNamespaces(t, nsview.Probe())
	bin := landjailBin(t)
	self, err := os.Readlink("/proc/self/ns/pid")
	require.NoError(t, err)

	t.Run("unconfined control", func(t *testing.T) {
		if _, err := osexec.LookPath("unshare"); err != nil {
			t.Skip("no unshare(1)")
		}
		// The outer unshare exits at once; the namespace's PID 1 (sh)
		// and its sleep stay.
		outFile := filepath.Join(t.TempDir(), "ns")
		c := osexec.Command("unshare", "--pid", "--fork", "sh", "-c", "readlink /proc/self/ns/pid > "+outFile+"; exec sleep 30")
		require.NoError(t, c.Start())
		var ns string
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
			for _, pid := range pidNSMembers(ns) { // the orphaned sleep
				if n, err := strconv.Atoi(pid); err == nil && ns != "" {
					syscall.Kill(n, syscall.SIGKILL)
				}
			}
		})
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(outFile); bytes.HasSuffix(b, []byte("\n")) {
				ns = strings.TrimSpace(string(b))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		require.True(t, strings.HasPrefix(ns, "pid:["), "%q", ns)
		assert.NotEmpty(t, pidNSMembers(ns), "control: the scan should find the namespace's processes")
	})

	for _, tc := range []struct {
		name, script string
	}{
		{"nothing left (ends with landjail's exit)", "readlink /proc/self/ns/pid"},
		{"a background process left (ends with the command)", "sleep 30 & readlink /proc/self/ns/pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := wsDir(t)
			// Default run: no terminal, no --timeout; supervised for
			// the PID namespace only.
			c := osexec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", tc.script)
			c.Stdin = nil
			out, err := c.Output()
			require.NoError(t, err, "%s", out)
			ns := strings.TrimSpace(string(out))
			require.True(t, strings.HasPrefix(ns, "pid:["), "%q", ns)
			if ns == self {
				t.Skip("the command ran in the test's PID namespace (no PID namespace in this mode)")
			}
			assert.Empty(t, pidNSGone(ns), "processes of the run's PID namespace outlived landjail")
		})
	}
}

// TestRunReportNoInitCounted: with --allow-domain landjail kills its
// remaining children after the command (the proxy's process among them),
// so a run whose command left nothing must not have kept its PID
// namespace's init alive until then (exec.Cmd.DeferNamespaceEnd): the
// report would count it as a killed descendant. The built binary, next
// to landjail-netproxy as installed, since only a process that exits
// after the run defers the init's end. Shown red: deferring with a
// proxy too (run.go's condition dropped) reports 1.
func TestRunReportNoInitCounted(t *testing.T) {
	if wantProxyMode(t, false) != cliopts.NetworkAirtight {
		t.Skip("no airtight proxy in this mode (no namespaces or Landlock ABI < 4)")
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"landjail": landjailBin(t), "landjail-netproxy": buildCLI(t, "../landjail-netproxy")} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o755))
	}
	ws := wsDir(t)
	report := filepath.Join(t.TempDir(), "report.json")
	out, err := osexec.Command(filepath.Join(dir, "landjail"), "run", "--workspace", ws, "--allow-domain", "example.com",
		"--report", report, "--", "true").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var rep struct {
		PIDNamespace bool `json:"pid_namespace"`
		Killed       int  `json:"killed_descendants"`
	}
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.True(t, rep.PIDNamespace, "%s", b)
	assert.Zero(t, rep.Killed, "the command left nothing: %s", b)
}
