package nsview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestOpenNoSymlinks: walk's one-syscall path (openat2
// RESOLVE_NO_SYMLINKS) gives up, leaving the refusal to the component
// walk, wherever the walk refuses: a symbolic link in the middle, a
// trailing one, a magic link (/proc/self/cwd), a file in the middle, a
// missing name; where it answers, it opens the same inode as the walk.
// Shown red: without the trailing-link check (fstat S_IFLNK) the
// trailing link is opened.
func TestOpenNoSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "link")))

	for _, p := range []string{
		filepath.Join(dir, "link", "sub"), // a link in the middle
		filepath.Join(dir, "link"),        // a trailing link
		"/proc/self/cwd",                  // a magic link
		filepath.Join(dir, "file", "x"),   // not a directory in the middle
		filepath.Join(dir, "missing"),
	} {
		fd, ok := openNoSymlinks(p)
		if ok {
			unix.Close(fd)
		}
		assert.False(t, ok, "%s: the fast path must leave it to the walk", p)
		if _, err := walk(p, false); err == nil {
			t.Errorf("%s: the walk opened it", p)
		}
	}

	t.Run("answers as the walk", func(t *testing.T) {
		kerneltest.RequireOpenat2(t)
		p := filepath.Join(dir, "real", "sub")
		fd, ok := openNoSymlinks(p)
		require.True(t, ok, "openat2 works here: the fast path should answer")
		defer unix.Close(fd)
		noOpenat2.Store(true) // the component walk alone
		wfd, err := walk(p, false)
		noOpenat2.Store(false)
		require.NoError(t, err)
		defer unix.Close(wfd)
		var a, b unix.Stat_t
		require.NoError(t, unix.Fstat(fd, &a))
		require.NoError(t, unix.Fstat(wfd, &b))
		assert.Equal(t, [2]uint64{b.Dev, b.Ino}, [2]uint64{a.Dev, a.Ino})
	})
}
