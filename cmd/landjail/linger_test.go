package main

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunUserStageEndsWithLandjail: as uid 65534 (the user-namespace
// stage, which lingers until landjail exits when the command left
// nothing: exec.Cmd.DeferNamespaceEnd), the run's PID namespace holds no
// live process once landjail has exited, whether the command left
// nothing or a background process (the namespace then ends with the
// command); landjail exits with the command's code (128+9 when SIGKILL
// killed it, as the stage reports it) and the report says the same, with
// no killed descendant counted for the lingering stage. The scan's
// unconfined control is TestRunPIDNamespaceEndsWithLandjail's. Shown able
// to fail: a lingering stage that ignores end of file on its keep-alive
// pipe (waitEOF made to block for good) left the namespace's PID 1 alive
// after landjail's exit in the first two rows.
func TestRunUserStageEndsWithLandjail(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature
	}
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		t.Skip("namespaces refused (emulation): no user-namespace stage")
	}
	shared := func() string {
		d, err := os.MkdirTemp("", "landjail-linger-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, 0o777))
		d, err = filepath.EvalSymlinks(d)
		require.NoError(t, err)
		return d
	}
	dir := shared()
	bin := filepath.Join(dir, "landjail")
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	self, err := os.Readlink("/proc/self/ns/pid")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, script string
		code         int
	}{
		{"nothing left", "readlink /proc/self/ns/pid", 0},
		{"nothing left, exit 3", "readlink /proc/self/ns/pid; exit 3", 3},
		{"nothing left, killed", "readlink /proc/self/ns/pid; kill -9 $$", 128 + 9},
		{"a background process left", "sleep 30 & readlink /proc/self/ns/pid", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := shared()
			report := filepath.Join(shared(), "report.json")
			c := osexec.Command(bin, "run", "--workspace", ws, "--report", report, "--", "sh", "-c", tc.script)
			c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			var stderr strings.Builder
			c.Stderr = &stderr
			out, err := c.Output()
			code := 0
			if ee, ok := err.(*osexec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err, "%s", stderr.String())
			}
			assert.Equal(t, tc.code, code, "%s", stderr.String())
			ns := strings.TrimSpace(string(out))
			require.True(t, strings.HasPrefix(ns, "pid:["), "%q %s", ns, stderr.String())
			require.NotEqual(t, self, ns, "the command ran in the test's PID namespace")
			assert.Empty(t, pidNSGone(ns), "processes of the run's PID namespace outlived landjail")
			var rep struct {
				PIDNamespace bool `json:"pid_namespace"`
				ExitCode     int  `json:"exit_code"`
				Killed       int  `json:"killed_descendants"`
			}
			rb, err := os.ReadFile(report)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(rb, &rep))
			assert.True(t, rep.PIDNamespace, "%s", rb)
			assert.Equal(t, tc.code, rep.ExitCode, "%s", rb)
			if tc.name != "a background process left" {
				assert.Zero(t, rep.Killed, "%s", rb)
			}
		})
	}
}
