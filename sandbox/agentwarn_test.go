package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarnUnprotectedRoots (red team round 8, R8-3): a --rw directory
// that is the home directory, or a git repository outside the
// workspace, is named; a plain output directory, a directory inside the
// workspace and a file are not (controls).
func TestWarnUnprotectedRoots(t *testing.T) {
	base := t.TempDir()
	home, repo, plain, ws := filepath.Join(base, "home"), filepath.Join(base, "repo"), filepath.Join(base, "out"), filepath.Join(base, "ws")
	for _, d := range []string{home, filepath.Join(repo, ".git"), filepath.Join(repo, "sub"), plain, filepath.Join(ws, ".git"), filepath.Join(ws, "build")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	file := filepath.Join(plain, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	var b bytes.Buffer
	warnUnprotectedRoots(&b, []string{home, repo, filepath.Join(repo, "sub"), plain, filepath.Join(ws, "build"), file}, home, ws)
	out := b.String()
	assert.Contains(t, out, "--rw "+home+" holds your home directory")
	assert.Contains(t, out, "--rw "+repo+" holds a git repository")
	assert.Contains(t, out, "--rw "+filepath.Join(repo, "sub")+" holds a git repository")
	assert.NotContains(t, out, plain)
	assert.NotContains(t, out, filepath.Join(ws, "build"))
	assert.Equal(t, 3, bytes.Count(b.Bytes(), []byte("\n")))
}
