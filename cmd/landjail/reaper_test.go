package main

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/internal/reaper"
)

// TestKillDescendantsPIDNamespaceOrphans: a landjail killed with SIGKILL
// leaves its command's PID namespace init and the command (a process of
// that namespace whose parent was landjail) to the nearest subreaper, here
// the test process. reaper.KillDescendants once waited for the init
// alone, while the init waited (zap_pid_ns_processes) for the command's
// zombie, which only the subreaper could reap: a deadlock (seen as a hung
// test run). Now every child is signalled first and reaped as it exits.
func TestKillDescendantsPIDNamespaceOrphans(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
		t.Skip("no PID namespace without the namespace layer")
	}
	require.NoError(t, reaper.Become())
	bin := landjailBin(t)
	tag := "landjail-orphan-" + t.Name()
	cmd := exec.Command(bin, "run", "--workspace", wsDir(t), "--timeout", "1m", "--", "sh", "-c", "sleep 60; : "+tag)
	require.NoError(t, cmd.Start())
	for range 200 {
		if proctest.Find(tag) != 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotZero(t, proctest.Find(tag), "the command did not start")
	require.NoError(t, cmd.Process.Kill())
	done := make(chan error, 1)
	go func() {
		_, err := reaper.KillDescendants()
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("KillDescendants hung on a PID namespace init whose members were re-parented to us")
	}
	cmd.Wait()
	require.Zero(t, proctest.Find(tag), "the command survived")
}
