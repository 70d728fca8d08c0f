package openat_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/openat"
)

// TestWriteFileKeepsOwner: WriteFile over a file of another user, as
// root, keeps its owner, group and mode (red team round 25, R25b-5:
// landjail-mcp as root turned a user's 0600 file into root's, and its
// owner could no longer read it). Control: a new file is the writer's.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("old"), 0o600))
	require.NoError(t, os.Chown(f, 65534, 65533))
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.WriteFile("f", []byte("new"), 0o644))
	fi, err := os.Stat(f)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65533}, [2]uint32{st.Uid, st.Gid}, "owner and group kept")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode kept")
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))

	require.NoError(t, r.WriteFile("g", []byte("x"), 0o644))
	fi, err = os.Stat(filepath.Join(dir, "g"))
	require.NoError(t, err)
	assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "control: a new file is the writer's")
}

// TestLchown: Lchown gives a file away through its parent's fd and
// changes a symbolic link itself, never what it names (a link to a file
// outside the root stays pointing at a file that keeps its owner).
func TestLchown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir, out := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "victim"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(out, "victim"), filepath.Join(dir, "l")))
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Lchown("f", 65534, 65533))
	require.NoError(t, r.Lchown("l", 65534, 65533))
	uid := func(p string) uint32 {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	assert.Equal(t, uint32(65534), uid(filepath.Join(dir, "f")))
	assert.Equal(t, uint32(65534), uid(filepath.Join(dir, "l")), "the link itself")
	assert.Equal(t, uint32(0), uid(filepath.Join(out, "victim")), "not what it names")
	assert.Error(t, r.Lchown("../x", 0, 0), "outside the root")
}
