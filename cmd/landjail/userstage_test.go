package main

import (
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

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestUserStageOneMountNamespace: as uid 65534 the command runs in the
// user-namespace stage's own mount namespace (the view is built there,
// nsview.View.EnterOwnNamespaces), not in a second one made for the
// stage's thread: /proc/STAGE/ns/mnt and /proc/COMMAND/ns/mnt name the
// same namespace; control: landjail's own (the host's) is another, and
// the command still sees the view (a host path outside the workspace is
// read-only: EROFS from touch, so "ro"). Red before: the stage unshared
// a second mount namespace for its thread and the two differed.
func TestUserStageOneMountNamespace(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534 and read the stage's /proc entries")
	}
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		t.Skip("namespaces refused (emulation): no user-namespace stage")
	}
	shared := func() string {
		d, err := os.MkdirTemp("", "landjail-userstage-")
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
	out := filepath.Join(ws, "out")
	c := osexec.Command(bin, "run", "--workspace", ws, "--timeout", "1m", "--",
		"/bin/sh", "-c", "touch /etc/landjail-userstage 2>/dev/null && echo rw >"+out+" || echo ro >"+out+"; exec sleep 3")
	c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr strings.Builder
	c.Stderr = &stderr
	require.NoError(t, c.Start())
	defer c.Wait()
	defer c.Process.Kill()

	children := func(pid int) []int {
		var out []int
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, s := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(s); err == nil {
					out = append(out, n)
				}
			}
		}
		return out
	}
	comm := func(pid int) string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return strings.TrimSpace(string(b))
	}
	mntns := func(pid int) string {
		s, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/mnt")
		return s
	}
	var stage, cmd int
	for range 250 {
		for _, s := range children(c.Process.Pid) {
			for _, k := range children(s) {
				if comm(k) == "sleep" {
					stage, cmd = s, k
				}
			}
		}
		if cmd != 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotZero(t, cmd, "no stage with a sleeping command under landjail %d: %s", c.Process.Pid, stderr.String())
	stageNS, cmdNS, hostNS := mntns(stage), mntns(cmd), mntns(c.Process.Pid)
	require.NotEmpty(t, stageNS)
	require.NotEmpty(t, cmdNS)
	assert.Equal(t, stageNS, cmdNS, "the command is not in the stage's mount namespace")
	assert.NotEqual(t, hostNS, cmdNS, "control: the command is in landjail's (the host's) mount namespace")
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "ro", strings.TrimSpace(string(got)), "the view: a host path outside the workspace")
	_, err = os.Stat("/etc/landjail-userstage")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
