package landlock

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
)

// TestBelowHardLinkedLinks: hard links of one symbolic link in one
// denied directory are resolved once (red team round 23, R23a-12: 3M
// of them in a planted .aws/ cost every later start 81 s and 1.6 GB),
// while the same link's hard link in another directory, where its
// relative target names another file, is still followed: .aws/l ->
// ../t.txt and its 2,000 hard links deny t.txt, sub/.aws/l (the same
// inode) denies sub/t.txt. Control: both targets carved. Red without
// the inode check: 2,001 resolutions in .aws/.
func TestBelowHardLinkedLinks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".aws", "sub/.aws"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"t.txt", "sub/t.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("secret\n"), 0o644))
	}
	link := filepath.Join(root, ".aws/l")
	require.NoError(t, os.Symlink("../t.txt", link))
	for i := range 2000 {
		require.NoError(t, unix.Linkat(unix.AT_FDCWD, link, unix.AT_FDCWD, filepath.Join(root, ".aws", "h"+strconv.Itoa(i)), 0))
	}
	require.NoError(t, unix.Linkat(unix.AT_FDCWD, link, unix.AT_FDCWD, filepath.Join(root, "sub/.aws/l"), 0))
	ws, err := jail.New(root, jail.WithDenySecrets())
	require.NoError(t, err)
	defer ws.Close()
	var n atomic.Int64
	belowResolveHook = func() { n.Add(1) }
	defer func() { belowResolveHook = nil }()
	carves, err := walkCarves(ws, []string{root}, DefaultWalkLimit)
	require.NoError(t, err)
	denied := map[string]bool{}
	for _, c := range carves {
		if c.access == 0 {
			denied[c.path] = true
		}
	}
	assert.True(t, denied[filepath.Join(root, "t.txt")], "the target of .aws/l denied")
	assert.True(t, denied[filepath.Join(root, "sub/t.txt")], "the target of sub/.aws/l (the same inode) denied")
	assert.LessOrEqual(t, n.Load(), int64(4), "links resolved below")
}
