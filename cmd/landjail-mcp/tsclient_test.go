package main

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// tsCall is one tool call as testdata/tsclient/client.mjs records it.
type tsCall struct {
	IsError       *bool   `json:"isError"`
	Text          string  `json:"text"`
	Leaked        bool    `json:"leaked"`
	ProtocolError *string `json:"protocolError"`
}

// tsSummary is the JSON line client.mjs prints.
type tsSummary struct {
	Server   map[string]any    `json:"server"`
	Tools    []string          `json:"tools"`
	Calls    map[string]tsCall `json:"calls"`
	Refusals map[string]tsCall `json:"refusals"`
}

// tsClientDir returns a directory holding client.mjs with its
// node_modules: testdata/tsclient itself when node_modules is there (a
// developer ran npm ci), else a temporary copy where `npm ci` installs
// the locked @modelcontextprotocol/sdk from the registry.
func tsClientDir(t *testing.T, npm string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "tsclient"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(src, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return src
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "client.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		kerneltest.Missing(t, "npm ci of testdata/tsclient failed (no registry?): %v: %s", err, out)
	}
	return dir
}

// TestTSClient drives the built landjail-mcp with a client we did not
// write: the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
// Client + StdioClientTransport, pinned in testdata/tsclient) spawns it
// with --deny-secrets --protect-agent-config, lists the tools, edits a
// file through read_file/write_file/edit_file/patch, and asks for four
// things the policy refuses. Each refusal must be a tool result (not a
// JSON-RPC error, which hosts surface as a crash of the tool) and must
// not carry the secret.
func TestTSClient(t *testing.T) {
	node, err := osexec.LookPath("node")
	if err != nil {
		kerneltest.Missing(t, "node is not installed: the TypeScript SDK client needs it")
	}
	npm, err := osexec.LookPath("npm")
	if err != nil {
		kerneltest.Missing(t, "npm is not installed: it installs the TypeScript SDK client")
	}
	dir := tsClientDir(t, npm)
	bin := buildBinary(t)

	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	const marker = "LANDJAIL-TS-SECRET-7f3a"
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "outside"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "outside", "secret"), []byte(marker+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN="+marker+"\n"), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), bin, ws, marker)
	cmd.Dir = dir
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*osexec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "client.mjs: %s", stderr)
	var s tsSummary
	require.NoError(t, json.Unmarshal(out, &s), "%s", out)

	assert.Equal(t, "landjail", s.Server["name"])
	assert.Equal(t, []string{"bash", "edit_file", "glob", "grep", "list_directory", "patch", "read_file", "write_file"}, s.Tools)

	for _, name := range []string{"write_file", "read_file", "edit_file", "patch", "read_back"} {
		c, ok := s.Calls[name]
		if assert.True(t, ok, name) {
			assert.Nil(t, c.ProtocolError, name)
			if assert.NotNil(t, c.IsError, name) {
				assert.False(t, *c.IsError, "%s: %s", name, c.Text)
			}
		}
	}
	assert.Contains(t, s.Calls["read_file"].Text, "beta")
	assert.Contains(t, s.Calls["read_back"].Text, "delta")
	assert.Contains(t, s.Calls["read_back"].Text, "gamma")
	got, err := os.ReadFile(filepath.Join(ws, "src", "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "delta\ngamma\n", string(got), "the edits reached the disk")

	exitCode := regexp.MustCompile(`\[exit code ([1-9][0-9]*)\]`)
	for name, want := range map[string]string{
		"read_outside":   "outside the workspace",
		"read_env":       "denied by policy",
		"write_git_hook": "read-only",
		"bash_outside":   "",
	} {
		c, ok := s.Refusals[name]
		if !assert.True(t, ok, name) {
			continue
		}
		assert.Nil(t, c.ProtocolError, "%s must be a tool result, not a JSON-RPC error", name)
		assert.False(t, c.Leaked, "%s leaked the secret: %s", name, c.Text)
		assert.NotContains(t, c.Text, marker, name)
		if !assert.NotNil(t, c.IsError, name) {
			continue
		}
		if name == "bash_outside" {
			// Known gap (reported): the bash tool reports a command that
			// ran and failed as a normal result with its exit code, so
			// under Landlock `cat ../outside/secret` comes back isError
			// false with "Permission denied" and "[exit code 1]". Where
			// the shell-command path check refuses it before running
			// (no Landlock) it is isError true. Either way it failed.
			if !*c.IsError {
				assert.Regexp(t, exitCode, c.Text, "bash_outside must fail: %s", c.Text)
			}
			continue
		}
		assert.True(t, *c.IsError, "%s must be refused: %s", name, c.Text)
		assert.Contains(t, c.Text, want, name)
	}
	_, err = os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the git hook was not written")
}
