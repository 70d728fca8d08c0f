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

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestServeProcLinkRefusesFileTools is red team round 26's R26e-5: the
// server started outside the workspace (cwd /, as a client may start
// it), a bash call plants .env -> /proc/self/cwd/notes.txt, and what the
// user then writes as .env lands in notes.txt. The next bash call's
// planning refuses the policy (the link's target depends on who follows
// it), but read_file and grep of notes.txt returned the secret, before
// that bash call and after it. Now every file tool refuses, naming the
// link, until the link is gone. Control: the same session without the
// link: read_file notes.txt answers.
func TestServeProcLinkRefusesFileTools(t *testing.T) {
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock); blocked {
		t.Skip("no Landlock (emulation): the planting script is refused by the path check")
	}
	const secret = "API_KEY=sk-live-MCPPROC"
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir("/")
	for _, plant := range []bool{false, true} {
		ws, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		var stderr strings.Builder
		app := newApp(sr, sw, &stderr)
		done := make(chan error, 1)
		go func() {
			err := app.Run(context.Background(), []string{"landjail-mcp", "--workspace", ws, "--deny-secrets", "--timeout", "10s"})
			sw.Close()
			done <- err
		}()
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatalf("connect: %v; the server: %v", err, <-done)
		}
		callTool := func(name string, args map[string]any) (string, bool) {
			t.Helper()
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			require.NoError(t, err)
			return r.Content[0].(*mcp.TextContent).Text, r.IsError
		}
		cmd := "echo planted"
		if plant {
			cmd = "ln -s /proc/self/cwd/notes.txt .env; echo planted"
		}
		out, isErr := callTool("bash", map[string]any{"command": cmd})
		require.False(t, isErr, out)
		require.Contains(t, out, "planted")
		// The user fills .env in the workspace (cwd there): notes.txt.
		require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(secret+"\n"), 0o644))

		read := func() {
			t.Helper()
			for _, c := range []struct {
				name string
				args map[string]any
			}{
				{"read_file", map[string]any{"path": "notes.txt"}},
				{"grep", map[string]any{"pattern": "sk-live", "path": "."}},
			} {
				out, isErr := callTool(c.name, c.args)
				if plant {
					assert.True(t, isErr, "%s: %s", c.name, out)
					assert.NotContains(t, out, secret, c.name)
					assert.Contains(t, out, "/proc/self", "%s names the link: %s", c.name, out)
				} else {
					assert.False(t, isErr, "control %s: %s", c.name, out)
					assert.Contains(t, out, secret, "control %s", c.name)
				}
			}
		}
		read() // before the next bash call
		out, isErr = callTool("bash", map[string]any{"command": "cat notes.txt"})
		if plant {
			assert.True(t, isErr, "bash's planning refuses the policy: %s", out)
			assert.NotContains(t, out, secret)
		}
		read() // after it
		if plant {
			// Gone: the file tools answer again.
			require.NoError(t, os.Remove(filepath.Join(ws, ".env")))
			out, isErr := callTool("read_file", map[string]any{"path": "notes.txt"})
			assert.False(t, isErr, "the link removed: %s", out)
		}
		require.NoError(t, cs.Close())
		cw.Close()
		require.NoError(t, <-done)
	}
}
