package main

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/landlock"
)

// TestServerKillsOrphans: a bash call's background child (same session)
// is killed when the call returns; a setsid'd grandchild is killed with
// it where the call has a PID namespace of its own (the namespace ends
// with the call), else (ns=EPERM, not root: it cannot be attributed to
// the call) when the server exits. Before, both outlived the server.
func TestServerKillsOrphans(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "landjail-mcp")
	out, err := osexec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "spawn.sh"), []byte(proctest.SpawnDescendants), 0o755))

	srv := osexec.Command(bin, "--workspace", ws, "--timeout", "30s")
	srv.Stderr = os.Stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
	require.NoError(t, err)
	start := time.Now()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sh spawn.sh"}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	assert.Less(t, time.Since(start), 2*time.Second, "the call waited for its orphans' output pipe")
	gc, bg := proctest.HostPid(t, ws, proctest.GrandchildCmd), proctest.HostPid(t, ws, proctest.BackgroundCmd)
	t.Cleanup(func() { proctest.Kill(gc, bg) })
	assert.Zero(t, bg, "the call's background child outlived the call")
	if pidNamespaceExpected(t) {
		assert.Zero(t, gc, "the setsid'd grandchild dies with the call's PID namespace")
	} else if m := limits.Available().Mechanism; m == limits.CgroupV1 || m == limits.CgroupV2 {
		assert.Zero(t, gc, "the setsid'd grandchild dies with the call's control group")
	} else {
		assert.NotZero(t, gc, "without a PID namespace the setsid'd grandchild is only killed at exit (it cannot be attributed)")
	}

	require.NoError(t, cs.Close())
	assert.False(t, gc != 0 && proctest.Alive(gc), "setsid'd grandchild %d outlived the server", gc)
}

// TestServeRefusesRootWorkspace: with no --workspace, "/" is refused.
func TestServeRefusesRootWorkspace(t *testing.T) {
	t.Chdir("/")
	var stderr strings.Builder
	err := newApp(strings.NewReader(""), &strings.Builder{}, &stderr).Run(context.Background(), []string{"landjail-mcp"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--workspace")
}

// pidNamespaceExpected reports whether a bash call runs in a PID
// namespace of its own in this mode: where the namespace view can be
// built (root, namespaces not refused by the emulation) and Landlock is
// there.
func pidNamespaceExpected(t *testing.T) bool {
	t.Helper()
	return landlock.ABI() > 0 && kerneltest.ExpectNamespaces(t, nsview.Probe())
}
