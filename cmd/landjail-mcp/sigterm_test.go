package main

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestSIGTERMEndsRunningCalls: SIGTERM ends the session while a bash
// call still runs: the call's command is killed, the server exits at
// once, and the sweep of --protect-agent-config runs (red team round 23,
// R23b-1: the session waited for the call, up to its timeout, so a
// client's SIGKILL after its grace period skipped the sweep, and the
// command's core.fsmonitor in a repository it made stayed). The call
// makes the repository, then sleeps 100 s; SIGTERM comes once the
// config exists. Control: the config is there before the signal. Red
// with the signal only cancelling the session: the server still runs
// 10 s later.
func TestSIGTERMEndsRunningCalls(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Parallel()
	bin := buildBinary(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	// In a subdirectory: the Landlock-only layer (ns=EPERM) freezes the
	// workspace's root, where protected names are carved out.
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	srv, cs := startOwned(t, bin, "--workspace", ws, "--protect-agent-config", "--timeout", "5m")
	ctx := context.Background()
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "git init -q sub/newdir && git -C sub/newdir config core.fsmonitor 'echo PWNED' && sleep 100",
		"timeout": 300,
	}})
	config := filepath.Join(ws, "sub/newdir/.git/config")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(config)
		return err == nil && containsFsmonitor(b)
	}, 30*time.Second, 50*time.Millisecond, "control: the call made the repository")
	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the server still runs 10 s after SIGTERM")
	}
	b, _ := os.ReadFile(config)
	assert.False(t, containsFsmonitor(b), "core.fsmonitor swept at the session's end")
}

func containsFsmonitor(b []byte) bool { return bytes.Contains(b, []byte("fsmonitor")) }

// startOwned starts the server bin with args on pipes of the test's own
// and connects a client: the test is the only one to Wait for the
// process (mcp.CommandTransport's Close waits too, and two Waits raced:
// the race pass of CI, 12e31a6), and Wait does not close the pipes under
// the SDK's reader. The process is killed at the test's end.
func startOwned(t *testing.T, bin string, args ...string) (*osexec.Cmd, *mcp.ClientSession) {
	t.Helper()
	srv := osexec.Command(bin, args...)
	srv.Stderr = os.Stderr
	inR, stdin, err := os.Pipe()
	require.NoError(t, err)
	stdout, outW, err := os.Pipe()
	require.NoError(t, err)
	srv.Stdin, srv.Stdout = inR, outW
	require.NoError(t, srv.Start())
	inR.Close()
	outW.Close()
	t.Cleanup(func() { srv.Process.Kill(); stdin.Close(); stdout.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	return srv, cs
}
