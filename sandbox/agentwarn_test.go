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
	// Round 9, R9-5: a directory of checkouts, a bare repository, a link
	// to HOME.
	checkouts, bare, homeLink := filepath.Join(base, "src"), filepath.Join(base, "bare.git"), filepath.Join(base, "h")
	require.NoError(t, os.MkdirAll(filepath.Join(checkouts, "proj/.git"), 0o755))
	for _, d := range []string{"objects", "refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(bare, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.Symlink(home, homeLink))
	var b bytes.Buffer
	warnUnprotectedRoots(&b, []string{home, repo, filepath.Join(repo, "sub"), plain, filepath.Join(ws, "build"), file, checkouts, bare, homeLink}, "", home, ws)
	out := b.String()
	assert.Contains(t, out, "--rw "+checkouts+" holds a git repository")
	assert.Contains(t, out, "--rw "+bare+" holds a git repository")
	assert.Contains(t, out, "--rw "+homeLink+" holds your home directory")
	assert.Contains(t, out, "--rw "+home+" holds your home directory")
	assert.Contains(t, out, "--rw "+repo+" holds a git repository")
	assert.Contains(t, out, "--rw "+filepath.Join(repo, "sub")+" holds a git repository")
	assert.NotContains(t, out, plain)
	assert.NotContains(t, out, filepath.Join(ws, "build"))
	assert.Equal(t, 6, bytes.Count(b.Bytes(), []byte("\n")))

	// Red team round 24, R24e-1: a root below HOME that is one of its
	// dot-directories (~/.config, ~/.local/bin); control: ~/projects.
	dotConfig, dotBin, projects := filepath.Join(home, ".config"), filepath.Join(home, ".local", "bin"), filepath.Join(home, "projects")
	for _, d := range []string{dotConfig, dotBin, projects} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	b.Reset()
	warnUnprotectedRoots(&b, []string{dotBin, projects}, dotConfig, home, ws)
	out = b.String()
	assert.Contains(t, out, "--rw "+dotBin+" holds configuration of your home directory")
	assert.Contains(t, out, "--home "+dotConfig+" holds configuration of your home directory")
	assert.NotContains(t, out, projects)

	// Red team round 23, R23a-3: a --home DIR is a read-write root too.
	b.Reset()
	warnUnprotectedRoots(&b, nil, home, home, ws)
	assert.Equal(t, "landjail: warning: --protect-agent-config protects the workspace only: --home "+home+" holds your home directory (shell start-up files, ~/.config/git, ~/.local/bin), writable for the command and not swept\n", b.String())
}
