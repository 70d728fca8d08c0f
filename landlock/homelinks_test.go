package landlock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// TestDeniedPathsHomeLinks (red team round 13, R13-5): with the user's
// stowed dotfiles repository as the workspace, what HOME's denied names
// lead to is denied under its dotfiles name too: ~/.aws -> dotfiles/aws
// (a denied directory name), ~/.kube -> dotfiles/kube and ~/.config/gh
// -> ../dotfiles/gh (patterns through the link: **/.kube/config,
// **/.config/gh/hosts.yml). Controls: a file no denied name leads to,
// and the same tree without the links.
func TestDeniedPathsHomeLinks(t *testing.T) {
	for _, linked := range []bool{false, true} {
		home, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		t.Setenv("HOME", home)
		d := filepath.Join(home, "dotfiles")
		for f, c := range map[string]string{"aws/credentials": "k", "kube/config": "t", "kube/cache/x": "c", "gh/hosts.yml": "g", "bash/.bashrc": "b", "docker/config.json": "d"} {
			require.NoError(t, os.MkdirAll(filepath.Join(d, filepath.Dir(f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d, f), []byte(c), 0o644))
		}
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
		if linked {
			require.NoError(t, os.Symlink("dotfiles/aws", filepath.Join(home, ".aws")))
			require.NoError(t, os.Symlink("dotfiles/kube", filepath.Join(home, ".kube")))
			require.NoError(t, os.Symlink("../dotfiles/gh", filepath.Join(home, ".config/gh")))
			require.NoError(t, os.Symlink("dotfiles/bash/.bashrc", filepath.Join(home, ".bashrc")))
			// A file link inside a real directory (dotbot, stow
			// --no-folding: red team round 14, R14-1).
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".docker"), 0o700))
			require.NoError(t, os.Symlink("../dotfiles/docker/config.json", filepath.Join(home, ".docker/config.json")))
		}
		ws, err := jail.New(d, jail.WithDenySecrets())
		require.NoError(t, err)
		denied, _, err := landlock.DeniedPaths(ws, 0)
		require.NoError(t, err)
		ws.Close()
		for _, p := range []string{"aws", "kube/config", "gh/hosts.yml", "docker/config.json"} {
			if linked {
				assert.Contains(t, denied, filepath.Join(d, p), p)
			} else {
				assert.NotContains(t, denied, filepath.Join(d, p), "control, no link: %s", p)
			}
		}
		assert.NotContains(t, denied, filepath.Join(d, "kube/cache/x"))
		assert.NotContains(t, denied, filepath.Join(d, "bash/.bashrc"))
	}
}
