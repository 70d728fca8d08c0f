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
		out, err := osexec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	code, out := runBin(t, filepath.Join(dir, "landjail"), env, "mcp", "--help")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "landjail-mcp")
	assert.Contains(t, out, "--ignore-roots", "the arguments reach landjail-mcp")

	require.NoError(t, os.Remove(filepath.Join(dir, "landjail-mcp")))
	code, out = runBin(t, filepath.Join(dir, "landjail"), env, "mcp", "--workspace", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "landjail-mcp binary is neither next to landjail nor in PATH")
}
