package main

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// spawnScript starts a setsid'd grandchild (gc.pid) and a plain
// background child (bg.pid), both sleeping, and returns once both wrote
// their pid.
const spawnScript = `setsid sh -c 'echo $$ > gc.pid.tmp && mv gc.pid.tmp gc.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
sh -c 'echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -f gc.pid ] || [ ! -f bg.pid ]; do sleep 0.05; done
`

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// alive reports whether pid is a living process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

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
	require.NoError(t, os.WriteFile(filepath.Join(ws, "spawn.sh"), []byte(spawnScript), 0o755))

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
	gc, bg := readPid(t, filepath.Join(ws, "gc.pid")), readPid(t, filepath.Join(ws, "bg.pid"))
	t.Cleanup(func() { unix.Kill(gc, unix.SIGKILL); unix.Kill(bg, unix.SIGKILL) })
	assert.False(t, alive(bg), "the call's background child %d outlived the call", bg)
	assert.True(t, alive(gc), "the setsid'd grandchild is only killed at exit (it cannot be attributed)")

	require.NoError(t, cs.Close())
	assert.False(t, alive(gc), "setsid'd grandchild %d outlived the server", gc)
}

// TestServeRefusesRootWorkspace: with no --workspace, "/" is refused.
func TestServeRefusesRootWorkspace(t *testing.T) {
	t.Chdir("/")
	var stderr strings.Builder
	err := newApp(strings.NewReader(""), &strings.Builder{}, &stderr).Run(context.Background(), []string{"landjail-mcp"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--workspace")
}
