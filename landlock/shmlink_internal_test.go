package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestDeniedLinkIntoShm: a denied name linked into the private TMPDIR's
// .shm, which the namespace view also shows as /dev/shm, refuses the
// policy (red team round 26, R26e-1: the target was carved at its
// TMPDIR path and read at /dev/shm). Control: a link to another file of
// the same TMPDIR is carved there.
func TestDeniedLinkIntoShm(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(tmp, ".shm"), 0o700))
	for _, f := range []string{".shm/stash", "other"} {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, f), []byte("SECRET"), 0o600))
	}
	rules := []Rule{{Path: root, Access: RightsAll}}

	require.NoError(t, os.Symlink(filepath.Join(tmp, ".shm", "stash"), filepath.Join(root, ".env")))
	ws, err := jail.New(root, jail.WithDeny(".env"))
	require.NoError(t, err)
	defer ws.Close()
	_, err = collectCarves(ws, Options{}, rules, tmp)
	assert.ErrorIs(t, err, ErrNotEnforceable)

	require.NoError(t, os.Remove(filepath.Join(root, ".env")))
	require.NoError(t, os.Symlink(filepath.Join(tmp, "other"), filepath.Join(root, ".env")))
	carves, err := collectCarves(ws, Options{}, rules, tmp)
	require.NoError(t, err, "control")
	var carved bool
	for _, c := range carves {
		carved = carved || c.path == filepath.Join(tmp, "other")
	}
	assert.True(t, carved, "control: the target in the TMPDIR is carved")
}
