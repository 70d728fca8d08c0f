package openat

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenat2Retry injects the errnos of races that cannot be produced on
// demand (a rename or mount during the lookup) in front of a real open, and
// checks which are retried, how often, and what is returned: EXDEV for a
// local name is a race with complete_walk's final check (retried, as
// filepath-securejoin does), EXDEV for a name that escapes lexically is the
// answer (never retried), and every retry loop stops at maxLookupRetries.
func TestOpenat2Retry(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, unix.Mkdir(filepath.Join(dir, "a"), 0o755))
	dirfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dirfd)

	tests := []struct {
		name      string
		path      string
		inject    []error // errnos returned before the real open (nil: forever the last)
		forever   bool    // keep returning the last injected errno
		wantErr   error
		wantCalls int
	}{
		{"EXDEV race on a local name", "a", []error{unix.EXDEV, unix.EXDEV}, false, nil, 3},
		{"EAGAIN race", "a", []error{unix.EAGAIN}, false, nil, 2},
		{"EINTR", "a", []error{unix.EINTR}, false, nil, 2},
		{"EXDEV for an escaping name is the answer", "../x", []error{unix.EXDEV}, true, unix.EXDEV, 1},
		{"EXDEV for an absolute name is the answer", "/etc", []error{unix.EXDEV}, true, unix.EXDEV, 1},
		{"ENOENT is the answer", "a", []error{unix.ENOENT}, true, unix.ENOENT, 1},
		{"EXDEV on a local name forever: bounded", "a", []error{unix.EXDEV}, true, unix.EXDEV, maxLookupRetries},
		{"EAGAIN forever: bounded", "a/../a", []error{unix.EAGAIN}, true, unix.EAGAIN, maxLookupRetries},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			old := openat2Syscall
			defer func() { openat2Syscall = old }()
			openat2Syscall = func(dirfd int, path string, how *unix.OpenHow) (int, error) {
				calls++
				switch {
				case calls <= len(tc.inject):
					return -1, tc.inject[calls-1]
				case tc.forever:
					return -1, tc.inject[len(tc.inject)-1]
				}
				// The real open, without openat2 so that the test also
				// runs where the emulation blocks it.
				return unix.Openat(dirfd, path, int(how.Flags), uint32(how.Mode))
			}
			fd, err := openat2Retry(dirfd, tc.path, unix.O_PATH|unix.O_CLOEXEC, 0, 0)
			if fd >= 0 {
				unix.Close(fd)
			}
			if tc.wantErr == nil {
				assert.NoError(t, err)
				assert.GreaterOrEqual(t, fd, 0)
			} else {
				assert.ErrorIs(t, err, tc.wantErr)
				assert.Equal(t, -1, fd)
			}
			assert.Equal(t, tc.wantCalls, calls, "openat2 calls")
		})
	}
}
