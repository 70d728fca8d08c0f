package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestClosedStderrKeepsCleanup: landjail whose stdout and stderr readers
// are gone (`landjail run ... 2>&1 | head` after head exits) still ends
// the run: a write there fails with EPIPE instead of killing landjail
// with SIGPIPE before the sweep (red team round 26, R26d-3: the command
// made a nested repository's core.fsmonitor, whose quarantine line was
// landjail's first write: landjail died, nothing was swept). Here the
// sweep must quarantine what the command made and landjail must exit
// with the command's status (red without the catch: landjail ended by
// SIGPIPE).
func TestClosedStderrKeepsCleanup(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	ws := gitRepo(t)
	script := "git init -q src/vendor && git -C src/vendor config core.fsmonitor 'touch /nonexistent; false' && sleep 0.5; exit 7"
	r, w, err := os.Pipe()
	require.NoError(t, err)
	r.Close() // nobody reads landjail's stdout and stderr
	c := osexec.Command(bin, "run", "--workspace", ws, "--timeout", "1m", "--protect-agent-config", "--", "sh", "-c", script)
	c.Stdout, c.Stderr = w, w
	require.NoError(t, c.Start())
	w.Close()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		t.Fatal("landjail hung")
	}
	var ee *osexec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 7, ee.ExitCode(), "landjail ended by %v, not with the command's status", ee.ProcessState)
	b, err := os.ReadFile(filepath.Join(ws, "src/vendor/.git/config"))
	if err == nil {
		assert.NotContains(t, string(b), "fsmonitor", "the sweep did not run: the command's core.fsmonitor is in place")
	}
	m, _ := filepath.Glob(filepath.Join(ws, "src/vendor/.git/config.landjail-quarantined-*"))
	assert.NotEmpty(t, m, "nothing quarantined")
}
