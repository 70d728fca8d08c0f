package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/tools"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestServe(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(ws+"/src", 0o755))
	require.NoError(t, os.WriteFile(ws+"/src/a.txt", []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(ws+"/.env", []byte("K=1\n"), 0o644))
	require.NoError(t, os.WriteFile(base+"/secret", []byte("SECRET\n"), 0o644))

	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	var stderr strings.Builder
	app := newApp(sr, sw, &stderr)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(context.Background(), []string{"landjail-mcp", "--workspace", ws, "--deny-secrets", "--timeout", "5s"})
	}()

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	require.NoError(t, err)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, res.Tools, len((&tools.Toolkit{}).Definitions()))
	text := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "src/a.txt"}})
	require.NoError(t, err)
	assert.False(t, r.IsError, text(r))
	r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "src/a.txt", "content": "x"}})
	require.NoError(t, err)
	assert.False(t, r.IsError, text(r))
	for _, p := range []string{"../secret", ".env", base + "/secret"} {
		r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": p}})
		require.NoError(t, err)
		assert.True(t, r.IsError, text(r))
	}
	r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "cat src/a.txt; cat ../secret; echo HOME=$HOME; echo x > \"$HOME/cache-probe\" && echo home-writable; echo $TMPDIR"}})
	require.NoError(t, err)
	t.Log(text(r))
	assert.NotContains(t, text(r), "SECRET")
	// bash's HOME is the private directory per workspace, outside it
	// (caches and dotfiles stay out of the project), and writable.
	// Without Landlock the path check refuses the script ($HOME cannot
	// be verified before it runs): nothing to look at then.
	if out := text(r); !r.IsError {
		i := strings.Index(out, "HOME=")
		require.GreaterOrEqual(t, i, 0, out)
		home := strings.TrimSpace(strings.SplitN(out[i+len("HOME="):], "\n", 2)[0])
		assert.NotEqual(t, ws, home)
		assert.False(t, strings.HasPrefix(home, ws+"/"), "HOME %s is inside the workspace", home)
		assert.Contains(t, out, "home-writable")
	}
	require.NoError(t, cs.Close())
	cw.Close()
	require.NoError(t, <-done)
	t.Log("stderr:", stderr.String())
}

func TestMain(m *testing.M) {
	kerneltest.SerializeAudit() // --explain uses the machine's audit state: see its doc
	kerneltest.Main(m)
}

// TestServeExplain: --explain is the server's as README says (each bash
// call's result ends with its refusals); it was refused at start, the
// documented feature unreachable (red team round 15). Control: without
// it, the same call has no refusal line.
func TestServeExplain(t *testing.T) {
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock); blocked {
		t.Skip("no Landlock (emulation): the script is refused by the path check")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, explain := range []bool{false, true} {
		ws, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		var stderr strings.Builder
		app := newApp(sr, sw, &stderr)
		args := []string{"landjail-mcp", "--workspace", ws, "--timeout", "10s"}
		if explain {
			args = append(args, "--explain")
		}
		done := make(chan error, 1)
		go func() {
			err := app.Run(context.Background(), args)
			sw.Close() // a server that refused to start ends the client's read
			done <- err
		}()
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatalf("connect: %v; the server: %v", err, <-done)
		}
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "touch /usr/landjail-explain-probe || true"}})
		require.NoError(t, err)
		out := r.Content[0].(*mcp.TextContent).Text
		if explain {
			assert.Contains(t, out, "refused:", out)
		} else {
			assert.NotContains(t, out, "refused:", "control: %s", out)
		}
		require.NoError(t, cs.Close())
		cw.Close()
		require.NoError(t, <-done)
	}
}
