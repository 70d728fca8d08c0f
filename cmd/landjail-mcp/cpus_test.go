package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
)

// TestBashOutputWithinCPUs: under --cpus the copy of a bash call's
// output (os/exec's goroutine reading the command's pipe) is charged to
// the call's share and waits while it is owed (red team round 24,
// R24b-1: a command writing with vmsplice(2), page references cheap for
// it, made landjail-mcp copy at 0.27 CPU under --cpus 0.1). The command
// writes that way for 4 s under --cpus 0.1; the server's own CPU over
// the call must stay within 1.5× the share of the call's wall time plus
// 0.15 s (the call's planning and spawn, before the share's account
// starts). Control: the same call without --cpus makes the server copy
// at more than that rate, or the case is inconclusive and says so.
// Measured here: 0.23–0.40 s in 4.0 s; without sandbox.Plan.chargeOutput
// 0.41–0.69 s in 4–5 s (the writer itself is held to 0.1 CPU by its
// group, so the copy costs only 1–2.7 times that): this bound catches
// the reviewer's 2.7×, not every excess; TestChargeOutput is red
// without the charge.
func TestBashOutputWithinCPUs(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if m := limits.Available().Mechanism; m != limits.CgroupV1 && m != limits.CgroupV2 {
		kerneltest.Missing(t, "no control group for --cpus")
	}
	if !slices.Contains(limits.Available().Controllers, "cpu") {
		kerneltest.Missing(t, "no cpu controller")
	}
	if testing.Short() {
		t.Skip("4 s of CPU-bound output, twice")
	}
	t.Parallel()
	bin := buildBinary(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	out, err := osexec.Command("go", "build", "-o", filepath.Join(ws, "vmsplice"), "./testdata/vmsplice").CombinedOutput()
	require.NoError(t, err, "%s", out)

	call := func(flags ...string) (used, wall time.Duration) {
		srv := osexec.Command(bin, append([]string{"--workspace", ws, "--timeout", "1m"}, flags...)...)
		srv.Stderr = os.Stderr
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: srv}, nil)
		require.NoError(t, err)
		defer cs.Close()
		before := proctest.CPU(t, srv.Process.Pid)
		start := time.Now()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "./vmsplice 4"}})
		wall = time.Since(start)
		used = proctest.CPU(t, srv.Process.Pid) - before
		require.NoError(t, err)
		require.False(t, r.IsError, "%v", r.Content)
		return used, wall
	}
	free, freeWall := call()
	used, wall := call("--cpus", "0.1")
	bound := time.Duration(0.1*1.5*float64(wall)) + 150*time.Millisecond
	t.Logf("landjail-mcp's CPU: %v in %v without --cpus, %v in %v with --cpus 0.1 (bound %v)", free, freeWall, used, wall, bound)
	assert.LessOrEqual(t, used, bound, "the output copy within --cpus")
	if free <= 2*bound {
		t.Logf("inconclusive control: without --cpus landjail-mcp spent only %v here", free)
	}
}

// TestFileToolsNotChargedToCalls: the CPU of the file tools the agent
// calls is not charged to a running bash call's --cpus share, a hold is
// at most cpushare.MaxHold, and a session that ends on SIGTERM thaws
// what the live watch holds before it kills the calls' commands (red
// team round 24, R24c-1, whose shape this is: under --cpus 0.02
// --protect-agent-config, 1.3 s of grep was charged to a call whose
// command made a directory every 0.3 s; the watch froze every call for
// 65 s, SIGTERM no longer ended the server, the client's SIGKILL
// skipped the sweep and core.fsmonitor stayed). The workspace is a git
// repository with 81 MB of text; the call sets core.fsmonitor in a
// repository it makes, then keeps the watch charging; the agent greps
// the workspace meanwhile; SIGTERM once the call's command stopped
// ticking for 1.5 s, or after 10 s. The server must exit within 5 s
// with the config swept. Control: the call made the config, the greps
// ran. Red without cpushare.Exempt, MaxHold and Plan.EndHolds: still
// running 5 s after SIGTERM.
func TestFileToolsNotChargedToCalls(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if m := limits.Available().Mechanism; m != limits.CgroupV1 && m != limits.CgroupV2 {
		kerneltest.Missing(t, "no control group for --cpus")
	}
	if !slices.Contains(limits.Available().Controllers, "cpu") {
		kerneltest.Missing(t, "no cpu controller")
	}
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
		t.Skip("the shape writes at the workspace's root, which the Landlock-only layer freezes under --protect-agent-config")
	}
	if testing.Short() {
		t.Skip("81 MB written, 10 s")
	}
	t.Parallel()
	bin := buildBinary(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	out, err := osexec.Command("git", "init", "-q", ws).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "data"), 0o755))
	line := []byte("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n")
	chunk := bytes.Repeat(line, 9<<20/len(line))
	for i := range 9 {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "data", fmt.Sprintf("f%d.txt", i)), chunk, 0o644))
	}
	srv, cs := startOwned(t, bin, "--workspace", ws, "--protect-agent-config", "--cpus", "0.02", "--timeout", "5m")
	ctx := context.Background()
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "git init -q newdir && git -C newdir config core.fsmonitor 'echo PWNED' && i=0; while :; do i=$((i+1)); date +%s.%N > tick; mkdir d$i; rmdir d$i; sleep 0.3; done",
		"timeout": 300,
	}})
	config := filepath.Join(ws, "newdir/.git/config")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(config)
		return err == nil && bytes.Contains(b, []byte("fsmonitor"))
	}, 30*time.Second, 50*time.Millisecond, "control: the call made the repository")
	time.Sleep(2 * time.Second)
	var greps atomic.Int32
	go func() { // on until after the SIGTERM, as an agent's would be
		for range 6 {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "zzzz[0-9]+nomatch", "path": "."}})
			if err != nil || r.IsError {
				return
			}
			greps.Add(1)
		}
	}()
	time.Sleep(3 * time.Second)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if st, err := os.Stat(filepath.Join(ws, "tick")); err == nil && time.Since(st.ModTime()) > 1500*time.Millisecond {
			t.Logf("the call's command has not ticked for %v", time.Since(st.ModTime()))
			break
		}
	}
	require.Positive(t, greps.Load(), "control: the greps ran")
	require.NoError(t, srv.Process.Signal(unix.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still runs 5 s after SIGTERM")
	}
	b, _ := os.ReadFile(config)
	assert.False(t, bytes.Contains(b, []byte("fsmonitor")), "core.fsmonitor swept at the session's end")
}
