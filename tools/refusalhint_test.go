package tools_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestFileToolRefusalNamesRuleAndFlag: a file tool's policy refusal names
// the rule and the operator's flag (issue 23): outside every root (--ro
// for a read, --rw for a write), a deny pattern (by design), a read-only
// path (--rw). Control: an error that is no refusal (a missing file in
// the workspace) names no rule.
func TestFileToolRefusalNamesRuleAndFlag(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("A=1"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs/a.md"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "o.txt"), []byte("x"), 0o644))
	tr := jail.NewReadTracker()
	ws, err := jail.New(root, jail.WithReadTracker(tr), jail.WithDeny(".env"), jail.WithReadOnly("docs/"))
	require.NoError(t, err)
	defer ws.Close()
	k := &tools.Toolkit{WS: ws, Tracker: tr}

	_, err = k.ReadFile(tools.ReadFileArgs{Path: filepath.Join(outside, "o.txt")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rule: outside every root; the operator's flag: --ro "+filepath.Join(outside, "o.txt"))
	_, err = k.WriteFile(tools.WriteFileArgs{Path: filepath.Join(outside, "n.txt"), Content: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the operator's flag: --rw "+filepath.Join(outside, "n.txt"))
	_, err = k.ReadFile(tools.ReadFileArgs{Path: ".env"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rule: a deny pattern")
	assert.Contains(t, err.Error(), "not allowed by design")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "docs/a.md"})
	require.NoError(t, err)
	_, err = k.WriteFile(tools.WriteFileArgs{Path: "docs/a.md", Content: "y"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the operator's flag: --rw "+filepath.Join(root, "docs/a.md"))

	_, err = k.ReadFile(tools.ReadFileArgs{Path: "missing.txt"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "rule:", "control: not a refusal")
}
