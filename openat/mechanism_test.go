package openat_test

import (
	"os"
	"path/filepath"
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
