package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestConfigCarveOutsReachFileTools is the reported break: with read_only
// and protect_agent_config in a --config file, the MCP server refused bash
// but its file tools wrote .git/hooks/pre-commit, .git/config and .bashrc
// and edited a read-only file (code execution outside the sandbox the next
// time the user runs git). The policy now comes from one Workspace, so
// every file tool refuses them; an unprotected sibling stays writable.
func TestConfigCarveOutsReachFileTools(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "ws")
	for _, d := range []string{".git/hooks", "docs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	const marker = "UNTOUCHED-7f3a"
	files := map[string]string{
		".git/config":          "[core]\n\tbare = false\n# " + marker + "\n",
		".bashrc":              "# " + marker + "\n",
		"docs/frozen.md":       "frozen " + marker + "\n",
		"notes.md":             "free\n",
		".git/hooks/README.md": marker + "\n",
	}
	for p, s := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	cfg := filepath.Join(base, "landjail.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(
		"workspace = \"ws\"\nread_only = [\"docs/frozen.md\"]\nprotect_agent_config = true\n"), 0o644))

	o, err := cliopts.ReadConfig(cfg)
	require.NoError(t, err)
	tr := jail.NewReadTracker()
	ws, err := o.Policy(jail.WithReadTracker(tr))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	cs, _ := connect(t, &tools.Toolkit{WS: ws, Tracker: tr}, nil)

	// Control: the same tools write an unprotected file.
	_, isErr := call(t, cs, "read_file", map[string]any{"path": "notes.md"})
	require.False(t, isErr)
	out, isErr := call(t, cs, "edit_file", map[string]any{"path": "notes.md", "old_string": "free", "new_string": "edited"})
	require.False(t, isErr, out)
	out, isErr = call(t, cs, "write_file", map[string]any{"path": "new.txt", "content": "x"})
	require.False(t, isErr, out)

	for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".bashrc", "docs/frozen.md", ".git/hooks/README.md"} {
		out, isErr := call(t, cs, "write_file", map[string]any{"path": p, "content": "#!/bin/sh\ntouch /tmp/pwned\n"})
		assert.True(t, isErr, "write_file %s: %s", p, out)
		assert.Contains(t, out, "read-only", "write_file %s", p)
	}
	for _, p := range []string{".git/config", ".bashrc", "docs/frozen.md"} {
		_, isErr := call(t, cs, "read_file", map[string]any{"path": p})
		require.False(t, isErr, "read_file %s (read-only paths stay readable)", p)
		out, isErr := call(t, cs, "edit_file", map[string]any{"path": p, "old_string": marker, "new_string": "fsmonitor = /tmp/x"})
		assert.True(t, isErr, "edit_file %s: %s", p, out)
	}
	for p, s := range files {
		if p == "notes.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		assert.Equal(t, s, string(b), "%s changed", p)
	}
	assert.NoFileExists(t, filepath.Join(root, ".git/hooks/pre-commit"))
}
