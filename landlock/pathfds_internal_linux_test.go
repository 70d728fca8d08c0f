package landlock

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPathFDsBounded: pathFDs keeps a descriptor per path up to
// maxPathFDs and stats the rest without one, with the same answers (a
// directory, a file, a missing path's error); take hands a kept one over
// once, and close releases the others.
// Shown able to fail: without the bound, the descriptors kept exceed
// maxPathFDs.
func TestPathFDsBounded(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range maxPathFDs + 10 {
		p := filepath.Join(dir, "f"+strconv.Itoa(i))
		if i%2 == 0 {
			require.NoError(t, os.Mkdir(p, 0o700))
		} else {
			require.NoError(t, os.WriteFile(p, nil, 0o600))
		}
		paths = append(paths, p)
	}
	var p pathFDs
	defer p.close()
	for i, path := range paths {
		isDir, err := p.stat(path)
		require.NoError(t, err)
		assert.Equal(t, i%2 == 0, isDir, path)
	}
	assert.Len(t, p.fds, maxPathFDs)
	_, err := p.stat(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	fd := p.take(paths[0])
	require.GreaterOrEqual(t, fd, 0)
	assert.Equal(t, -1, p.take(paths[0]), "taken once")
	assert.Equal(t, -1, p.take(paths[len(paths)-1]), "past the bound: none kept")
	os.NewFile(uintptr(fd), paths[0]).Close()
	p.close()
	assert.Empty(t, p.fds)
}
