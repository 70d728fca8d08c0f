package cliopts

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAllowUnixConfig: allow_unix in a --config file is relative to the
// file, like ro; validate resolves each entry to the socket's identity
// and refuses (wrapping *fs.PathError) a path that is missing, a
// directory, a datagram socket, and the combination with --user.
// --allow-domain is accepted with it.
func TestAllowUnixConfig(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	l, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	require.NoError(t, err)
	defer l.Close()
	d, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "d.sock"), Net: "unixgram"})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, os.Symlink("s.sock", filepath.Join(dir, "link")))

	o, err := ReadConfig(writeConfigIn(t, dir, `allow_unix = ["link"]`+"\n"+`allow_domain = ["example.com"]`))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "link")}, o.AllowUnix, "relative to the file")
	require.NoError(t, o.validate())
	socks, err := o.NamedUnixSockets()
	require.NoError(t, err)
	require.Len(t, socks, 1)
	assert.Equal(t, filepath.Join(dir, "s.sock"), socks[0].Path, "symbolic links resolved")
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(dir, "s.sock"), &st))
	assert.Equal(t, [2]uint64{st.Dev, st.Ino}, [2]uint64{socks[0].Dev, socks[0].Ino}, "the socket's identity")

	for _, p := range []string{filepath.Join(dir, "d.sock"), dir, filepath.Join(dir, "missing")} {
		o := &Options{AllowUnix: []string{p}}
		err := o.validate()
		var pe *fs.PathError
		assert.True(t, errors.As(err, &pe), "%s: %v", p, err)
	}
	o = &Options{AllowUnix: []string{filepath.Join(dir, "d.sock")}}
	assert.ErrorIs(t, o.validate(), ErrNotSocket, "a datagram socket")
	o = &Options{AllowUnix: []string{filepath.Join(dir, "s.sock")}, User: "65534"}
	assert.ErrorContains(t, o.validate(), "--allow-unix with --user")
}

func writeConfigIn(t *testing.T, dir, data string) string {
	t.Helper()
	p := filepath.Join(dir, "landjail.toml")
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}
