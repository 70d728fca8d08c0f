package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPForwards: "landjail mcp" execs landjail-mcp from its own
// directory with every argument, and says what is missing when it is not
// there.
func TestMCPForwards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	for _, pkg := range []string{".", "../landjail-mcp"} {
		name := "landjail"
		if pkg != "." {
			name = "landjail-mcp"
		}
		build := osexec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		build.Env = append(os.Environ(), "GOCACHE="+os.Getenv(envGoCache)) // the user's (TestMain)
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	code, out := runBin(t, filepath.Join(dir, "landjail"), env, "mcp", "--help")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "landjail-mcp")
	assert.Contains(t, out, "--ignore-roots", "the arguments reach landjail-mcp")

	// Group-writable next to landjail: refused, not run.
	require.NoError(t, os.Chmod(filepath.Join(dir, "landjail-mcp"), 0o775))
	code, out = runBin(t, filepath.Join(dir, "landjail"), env, "mcp", "--help")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "writable by another user")
	assert.NotContains(t, out, "--ignore-roots")

	// Missing next to landjail, planted in PATH (a workspace's bin, say):
	// never run. Control: PATH finds and runs the planted one.
	require.NoError(t, os.Remove(filepath.Join(dir, "landjail-mcp")))
	planted := t.TempDir()
	marker := filepath.Join(t.TempDir(), "planted-ran")
	require.NoError(t, os.WriteFile(filepath.Join(planted, "landjail-mcp"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	env = []string{"PATH=" + planted + ":/usr/bin:/bin"}
	ctl := osexec.Command("/bin/sh", "-c", "landjail-mcp")
	ctl.Env = env
	require.NoError(t, ctl.Run())
	require.FileExists(t, marker, "control")
	require.NoError(t, os.Remove(marker))
	code, out = runBin(t, filepath.Join(dir, "landjail"), env, "mcp", "--workspace", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "landjail-mcp binary is not next to landjail")
	assert.NoFileExists(t, marker, "the landjail-mcp planted in PATH ran")
}
