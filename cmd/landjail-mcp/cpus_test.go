package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
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
		before := procCPU(t, srv.Process.Pid)
		start := time.Now()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "./vmsplice 4"}})
		wall = time.Since(start)
		used = procCPU(t, srv.Process.Pid) - before
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

// procCPU is the user and system CPU time of process pid, every thread
// (/proc/PID/stat's utime and stime, in clock ticks of 10 ms).
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var u, s int64
	_, err = fmt.Sscan(f[11]+" "+f[12], &u, &s)
	require.NoError(t, err)
	return time.Duration(u+s) * 10 * time.Millisecond
}
