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
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/proctest"
)

// TestServerKillsOrphans: a bash call's background child (same session)
// is killed when the call returns; a setsid'd grandchild, which cannot be
// attributed to the call, is killed when the server exits. Before, both
// outlived the server.
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
	gc, bg := proctest.ReadPid(t, filepath.Join(ws, "gc.pid")), proctest.ReadPid(t, filepath.Join(ws, "bg.pid"))
	t.Cleanup(func() { unix.Kill(gc, unix.SIGKILL); unix.Kill(bg, unix.SIGKILL) })
	assert.False(t, proctest.Alive(bg), "the call's background child %d outlived the call", bg)
	assert.True(t, proctest.Alive(gc), "the setsid'd grandchild is only killed at exit (it cannot be attributed)")

	require.NoError(t, cs.Close())
	assert.False(t, proctest.Alive(gc), "setsid'd grandchild %d outlived the server", gc)
}

// TestServeRefusesRootWorkspace: with no --workspace, "/" is refused.
func TestServeRefusesRootWorkspace(t *testing.T) {
	t.Chdir("/")
	var stderr strings.Builder
	err := newApp(strings.NewReader(""), &strings.Builder{}, &stderr).Run(context.Background(), []string{"landjail-mcp"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--workspace")
}
