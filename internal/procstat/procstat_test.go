package procstat

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFile: the same bytes as os.ReadFile for a procfs file, a file
// larger than the first buffer, and an empty one; ENOENT is
// fs.ErrNotExist inside a *fs.PathError naming the path.
func TestReadFile(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("0123456789", 1000)), 0o600))
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, p := range []string{"/proc/self/status", big, empty} {
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := ReadFile(p)
		require.NoError(t, err, p)
		if p == "/proc/self/status" { // differs between reads: compare the lines that do not
			assert.Equal(t, strings.SplitN(string(want), "\n", 3)[:2], strings.SplitN(string(got), "\n", 3)[:2])
			continue
		}
		assert.Equal(t, want, got, p)
	}
	_, err := ReadFile("/proc/self/nonexistent")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "/proc/self/nonexistent", pe.Path)
}

// TestStartTime: this process's start time is read, the same each time
// and from SelfStartTime; a pid that does not exist is fs.ErrNotExist.
func TestStartTime(t *testing.T) {
	st, err := StartTime(os.Getpid())
	require.NoError(t, err)
	assert.NotZero(t, st)
	self, err := SelfStartTime()
	require.NoError(t, err)
	assert.Equal(t, st, self)
	ppid, err := StartTime(os.Getppid())
	require.NoError(t, err)
	assert.LessOrEqual(t, ppid, st, "the parent started no later than this process")
	_, err = StartTime(999999999)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
