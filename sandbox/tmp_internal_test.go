package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkspaceTmpRefusesPlanted: the per-workspace TMPDIR is made 0700
// and used again as it is; what was put in its place is never used: a
// symbolic link (to a 0700 directory of the same user), a directory of
// mode 0755, a directory of another user (root only), a file. Control:
// the same name as a fresh 0700 directory of the user is used. Shown able
// to fail: with the mode check dropped from usableTmp, the 0755 directory
// was used (red).
func TestWorkspaceTmpRefusesPlanted(t *testing.T) {
	parent := t.TempDir()
	uid, gid := os.Geteuid(), os.Getegid()
	dir, ok := workspaceTmp(parent, "/some/workspace", uid, gid)
	require.True(t, ok, "control: made")
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	again, ok := workspaceTmp(parent, "/some/workspace", uid, gid)
	assert.True(t, ok, "control: used again")
	assert.Equal(t, dir, again)

	target := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.Mkdir(target, 0o700))
	plant := map[string]func(string) error{
		"symlink": func(p string) error { return os.Symlink(target, p) },
		"mode 0755": func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chmod(p, 0o755)
		},
		"file": func(p string) error { return os.WriteFile(p, nil, 0o600) },
	}
	if uid == 0 {
		plant["another user's"] = func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}
	}
	for name, put := range plant {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, put(dir))
			got, ok := workspaceTmp(parent, "/some/workspace", uid, gid)
			assert.False(t, ok, "used %s", got)
		})
	}
}
