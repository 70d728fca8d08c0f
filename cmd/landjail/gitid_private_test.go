package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestGitIdentityNeverRunsPrivateDirGit: --git-identity runs no git
// found in a private HOME or TMPDIR landjail grants commands read-write
// and keeps between runs (red team round 26, R26a-6: a run wrote
// HOME/bin/git, its default private HOME, and the next run executed it
// unconfined through a workspace bin linked there). Control: the same
// program in a directory no command can write runs
// (TestGitIdentityNeverRunsWorkspaceGit).
func TestGitIdentityNeverRunsPrivateDirGit(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	ws, outside := wsDir(t), wsDir(t)
	marker := filepath.Join(outside, "ran")
	fake := "#!/bin/sh\necho \"$(id -u)\" >> " + marker + "\necho Fake Name\n"
	cache, tmp := filepath.Join(outside, "cache"), filepath.Join(outside, "tmp")
	for _, d := range []string{
		filepath.Join(cache, "landjail", "home", "0123456789abcdef", "bin"), // a default private HOME
		filepath.Join(tmp, "landjail-0-0123456789ab", "bin"),                // a private TMPDIR
		filepath.Join(tmp, "landjail-home-65534-0123456789abcdef", "bin"),   // a --user's private HOME
	} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "git"), []byte(fake), 0o755))
		env := []string{"PATH=" + d, "HOME=" + outside, "XDG_CACHE_HOME=" + cache, "TMPDIR=" + tmp, "GIT_CONFIG_NOSYSTEM=1"}
		code, out := runBinEnv(t, bin, env, "run", "--timeout", "1m", "--workspace", ws, "--git-identity", "--", "/bin/true")
		assert.NotEqual(t, 0, code, "%s: %s", d, out)
		assert.Contains(t, out, "root the command can write", d)
		assert.NoFileExists(t, marker, "the git of %s ran: %s", d, out)
	}
}
