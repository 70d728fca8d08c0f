package openat_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/openat"
)

// TestMechanismSwitchesUnderSeccomp runs in a re-executed test process
// whose seccomp filter makes openat2 fail (ENOSYS as on Linux < 5.6, EPERM
// as under container seccomp profiles): Root must switch to the
// O_NOFOLLOW walk by itself, keep working, and keep refusing escapes.
func TestMechanismSwitchesUnderSeccomp(t *testing.T) {
	for _, errno := range []string{"ENOSYS", "EPERM"} {
		t.Run(errno, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t, "LANDJAIL_EMULATE=openat2="+errno) {
				return
			}
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("ok"), 0o644))
			require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "a/etc")))
			r, err := openat.OpenRoot(dir)
			require.NoError(t, err)
			defer r.Close()

			b, err := r.ReadFile("a/b/f")
			require.NoError(t, err)
			assert.Equal(t, "ok", string(b))
			assert.Equal(t, openat.MechanismWalk, openat.Mechanism(), "the first failing openat2 switches for good")

			_, err = r.Open("a/etc/passwd")
			assert.ErrorIs(t, err, openat.ErrSymlink)
			_, err = r.Open("../x")
			assert.ErrorIs(t, err, openat.ErrEscapes)
			_, err = r.Open("/etc/passwd")
			assert.ErrorIs(t, err, openat.ErrEscapes)
		})
	}
}

// TestNativeMechanism: on a kernel with openat2, Root uses it, and the
// test hook forces the walk and restores it.
func TestNativeMechanism(t *testing.T) {
	kerneltest.RequireOpenat2(t)
	if _, blocked := kerneltest.Blocked("openat2"); blocked {
		t.Skip("openat2 blocked by the emulation")
	}
	r, err := openat.OpenRoot(t.TempDir())
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.WriteFile("f", nil, 0o644))
	_, err = r.Stat("f")
	require.NoError(t, err)
	assert.Equal(t, openat.MechanismOpenat2, openat.Mechanism())
	restore := openat.SetForceFallback(true)
	assert.Equal(t, openat.MechanismWalk, openat.Mechanism())
	restore()
	assert.Equal(t, openat.MechanismOpenat2, openat.Mechanism())
}

// TestUnsupportedFileMode: as os.Root, the permission bits of a creating
// call must fit in 0o777; setuid, setgid and sticky fail with
// ErrUnsupportedMode before anything is created. Chmod takes them, as
// os.Root.Chmod does.
func TestUnsupportedFileMode(t *testing.T) {
	dir := t.TempDir()
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	osr, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer osr.Close()

	for _, mode := range []os.FileMode{os.ModeSetuid | 0o755, os.ModeSetgid | 0o755, os.ModeSticky | 0o777, os.ModeDir | 0o755} {
		ops := []struct {
			name   string
			ours   func() error
			osRoot func() error
		}{
			{"OpenFile", func() error { _, err := r.OpenFile("f", os.O_CREATE|os.O_WRONLY, mode); return err },
				func() error { _, err := osr.OpenFile("f", os.O_CREATE|os.O_WRONLY, mode); return err }},
			{"Mkdir", func() error { return r.Mkdir("d", mode) }, func() error { return osr.Mkdir("d", mode) }},
			{"MkdirAll", func() error { return r.MkdirAll("p/q", mode) }, func() error { return osr.MkdirAll("p/q", mode) }},
			{"WriteFile", func() error { return r.WriteFile("w", []byte("x"), mode) }, func() error { return osr.WriteFile("w", []byte("x"), mode) }},
		}
		for _, op := range ops {
			t.Run(op.name+"/"+mode.String(), func(t *testing.T) {
				osErr := op.osRoot()
				require.Error(t, osErr, "os.Root refuses it (the oracle)")
				err := op.ours()
				assert.ErrorIs(t, err, openat.ErrUnsupportedMode)
				var pe *fs.PathError
				if assert.ErrorAs(t, err, &pe) {
					assert.Equal(t, osErr.Error()[strings.LastIndex(osErr.Error(), ": ")+2:], pe.Err.Error(), "same message as os.Root")
				}
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				assert.Empty(t, entries, "nothing created")
			})
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s"), nil, 0o644))
	require.NoError(t, r.Chmod("s", os.ModeSticky|0o644), "Chmod takes the bits, as os.Root.Chmod")
	fi, err := os.Stat(filepath.Join(dir, "s"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSticky|0o644, fi.Mode())
}
