package setid

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// capV2 is a VFS_CAP_REVISION_2 security.capability value granting
// CAP_NET_RAW permitted and effective (linux/capability.h).
func capV2() []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|1) // revision 2, effective
	binary.LittleEndian.PutUint32(b[4:], 1<<unix.CAP_NET_RAW)
	return b
}

// TestProgram: every mode and attribute that makes execve(2) raise
// privileges is found, by path and by descriptor (O_PATH too), and so
// is one its owner's chmod +x would make such (S_ISUID, S_ISGID or
// capabilities without an execute bit: red team round 32, R32a-5); the
// look-alikes are not: a directory with S_ISGID, a symbolic link to a
// set-ID program (its own lstat), plain files.
func TestProgram(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	cases := []struct {
		path string
		want bool
	}{
		{mk("suid", 0o755|os.ModeSetuid), true},
		{mk("suid-owner-x-only", 0o700|os.ModeSetuid), true},
		{mk("suid-group-x-only", 0o610|os.ModeSetuid), true},
		{mk("sgid", 0o755|os.ModeSetgid), true},
		{mk("sgid-no-group-x", 0o745|os.ModeSetgid), true},
		{mk("suid-no-x", 0o644|os.ModeSetuid), true},
		{mk("plain", 0o755), false},
		{mk("plain-no-x", 0o644), false},
	}
	sgidDir := filepath.Join(dir, "sgid-dir")
	require.NoError(t, os.Mkdir(sgidDir, 0o755))
	require.NoError(t, os.Chmod(sgidDir, 0o755|os.ModeSetgid))
	cases = append(cases, struct {
		path string
		want bool
	}{sgidDir, false})
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("suid", link))
	cases = append(cases, struct {
		path string
		want bool
	}{link, false})
	if os.Geteuid() == 0 {
		capped := mk("capped", 0o755)
		require.NoError(t, unix.Setxattr(capped, capXattr, capV2(), 0))
		cappedNoX := mk("capped-no-x", 0o644)
		require.NoError(t, unix.Setxattr(cappedNoX, capXattr, capV2(), 0))
		cases = append(cases, struct {
			path string
			want bool
		}{capped, true}, struct {
			path string
			want bool
		}{cappedNoX, true})
	}
	for _, c := range cases {
		got, err := Path(c.path)
		require.NoError(t, err, c.path)
		assert.Equal(t, c.want, got, "by path: %s", filepath.Base(c.path))
		for _, flag := range []int{unix.O_RDONLY, unix.O_PATH} {
			fd, err := unix.Open(c.path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				require.ErrorIs(t, err, unix.ELOOP, c.path) // the link, O_RDONLY
				continue
			}
			got, err := Fd(fd)
			unix.Close(fd)
			require.NoError(t, err, c.path)
			assert.Equal(t, c.want, got, "by descriptor (flags %#x): %s", flag, filepath.Base(c.path))
		}
	}
	_, err := Path(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
