//go:build linux

package seccomp

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMayListenUnixAbstractRound17 (red team round 17, R17b-4): with
// named UNIX sockets only (AllowUnix), the listen broker refuses a UNIX
// socket bound to an abstract name (the host's, under --no-namespaces),
// and keeps a pathname one; control: without AllowUnix an abstract one
// may listen as before. Red before: every UNIX socket was let listen.
func TestMayListenUnixAbstractRound17(t *testing.T) {
	sock := func(t *testing.T, sa unix.Sockaddr) int {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		t.Cleanup(func() { unix.Close(fd) })
		require.NoError(t, unix.Bind(fd, sa))
		return fd
	}
	abstract := sock(t, &unix.SockaddrUnix{Name: "@landjail-test-r17b4-" + filepath.Base(t.TempDir())})
	path := sock(t, &unix.SockaddrUnix{Name: filepath.Join(t.TempDir(), "s.sock")})
	named := &Filter{allowUnix: map[devIno]string{{1, 2}: "/x.sock"}}
	assert.Equal(t, unix.EACCES, named.mayListen(abstract), "an abstract name with AllowUnix")
	assert.Equal(t, unix.Errno(0), named.mayListen(path), "a pathname socket: Landlock's to grant")
	assert.Equal(t, unix.Errno(0), (&Filter{}).mayListen(abstract), "control: without AllowUnix")
}
