package selfbin

import (
	"errors"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// install copies the binary src into dir as name with mode.
func install(t *testing.T, src, dst string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst+".tmp", b, mode))
	require.NoError(t, os.Chmod(dst+".tmp", mode)) // past the umask
	require.NoError(t, os.Rename(dst+".tmp", dst))
}

func lookPath(t *testing.T, name string) string {
	p, err := osexec.LookPath(name)
	if err != nil {
		t.Skipf("%s: %v", name, err)
	}
	p, err = filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return p
}

// TestPinned: what runs is what the file held at Open, whatever is
// renamed over the installed file or swapped in as a symlink afterwards;
// the sealed copy holds against an in-place write too (control each
// time: the installed file itself now runs the replacement).
func TestPinned(t *testing.T) {
	echo, falseBin := lookPath(t, "echo"), lookPath(t, "false")
	dir := t.TempDir()
	bin := filepath.Join(dir, "companion")
	install(t, echo, bin, 0o755)
	opened, err := Open(bin)
	require.NoError(t, err)
	defer opened.Close()
	assert.Equal(t, bin, opened.Source())
	sealed, err := opened.Sealed()
	require.NoError(t, err)
	defer sealed.Close()
	assert.Equal(t, bin, sealed.Source())

	for _, swap := range []struct {
		name     string
		do       func()
		openHeld bool // Open's descriptor holds too
	}{
		{"renamed over", func() { install(t, falseBin, bin, 0o755) }, true},
		{"symlink", func() {
			require.NoError(t, os.Remove(bin))
			require.NoError(t, os.Symlink(falseBin, bin))
		}, true},
		{"written in place", func() {
			src, err := os.ReadFile(falseBin)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(bin, src, 0o755))
		}, false},
	} {
		t.Run(swap.name, func(t *testing.T) {
			swap.do()
			err := osexec.Command(bin).Run()
			var ee *osexec.ExitError
			require.ErrorAs(t, err, &ee, "control: the installed file is now false(1)")
			pinned := []*Binary{sealed}
			if swap.openHeld {
				pinned = append(pinned, opened)
			}
			for _, b := range pinned {
				out, err := osexec.Command(b.Path(), "pinned").Output()
				require.NoError(t, err, b.Path())
				assert.Equal(t, "pinned\n", string(out))
			}
			os.Remove(bin)
			install(t, echo, bin, 0o755)
		})
	}

	// The copy is sealed: not even its owner can change it.
	w, err := os.OpenFile(sealed.Path(), os.O_WRONLY, 0)
	if err == nil {
		_, err = w.Write([]byte("x"))
		w.Close()
	}
	assert.ErrorIs(t, err, unix.EPERM)
}

// TestOpenRefuses: a companion another user could replace is refused
// before anything is copied; so is one that is not an executable file.
func TestOpenRefuses(t *testing.T) {
	echo := lookPath(t, "echo")
	installed := func(mode fs.FileMode) func(dir string) string {
		return func(dir string) string {
			p := filepath.Join(dir, "c")
			install(t, echo, p, mode)
			return p
		}
	}
	for _, tc := range []struct {
		name string
		make func(dir string) string
		want error
	}{
		{"group-writable file", installed(0o775), ErrUnsafe},
		{"world-writable file", installed(0o757), ErrUnsafe},
		{"world-writable directory", func(dir string) string {
			d := filepath.Join(dir, "open")
			require.NoError(t, os.Mkdir(d, 0o755))
			require.NoError(t, os.Chmod(d, 0o1777))
			p := filepath.Join(d, "c")
			install(t, echo, p, 0o755)
			return p
		}, ErrUnsafe},
		{"symlink to a group-writable file", func(dir string) string {
			d := filepath.Join(dir, "gw")
			require.NoError(t, os.Mkdir(d, 0o755))
			install(t, echo, filepath.Join(d, "c"), 0o775)
			p := filepath.Join(dir, "c")
			require.NoError(t, os.Symlink(filepath.Join(d, "c"), p))
			return p
		}, ErrUnsafe},
		{"symlink into a world-writable directory", func(dir string) string {
			d := filepath.Join(dir, "open")
			require.NoError(t, os.Mkdir(d, 0o755))
			require.NoError(t, os.Chmod(d, 0o777))
			install(t, echo, filepath.Join(d, "c"), 0o755)
			p := filepath.Join(dir, "c")
			require.NoError(t, os.Symlink("open/c", p))
			return p
		}, ErrUnsafe},
		{"not executable", installed(0o644), fs.ErrPermission},
		{"directory", func(dir string) string {
			p := filepath.Join(dir, "c")
			require.NoError(t, os.Mkdir(p, 0o755))
			return p
		}, fs.ErrPermission},
		{"missing", func(dir string) string { return filepath.Join(dir, "c") }, fs.ErrNotExist},
		{"symlink loop", func(dir string) string {
			p := filepath.Join(dir, "c")
			require.NoError(t, os.Symlink("c", p))
			return p
		}, unix.ELOOP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Chmod(dir, 0o755))
			b, err := Open(tc.make(dir))
			if b != nil {
				b.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			var pe *fs.PathError
			assert.True(t, errors.As(err, &pe), "%T", err)
		})
	}
	// Control: the same file, safely installed, opens.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	b, err := Open(installed(0o755)(dir))
	require.NoError(t, err)
	b.Close()
}

// TestNext: the companion's place is the running executable's directory.
func TestNext(t *testing.T) {
	p, err := Next("landjail-netproxy")
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(filepath.Dir(self), "landjail-netproxy"), p)
}

// BenchmarkOpen pins the test binary itself (several MB, as
// landjail-netproxy is): what landjail run pays per --allow-domain run.
func BenchmarkOpen(b *testing.B) {
	self, err := os.Executable()
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		bin, err := Open(self)
		if err != nil {
			b.Skip(err) // a build cache writable by group, say
		}
		bin.Close()
	}
}

// BenchmarkSealed copies the test binary into a sealed memfd: what
// landjail-mcp pays once at start with --allow-domain.
func BenchmarkSealed(b *testing.B) {
	self, err := os.Executable()
	require.NoError(b, err)
	fi, err := os.Stat(self)
	require.NoError(b, err)
	bin, err := Open(self)
	if err != nil {
		b.Skip(err)
	}
	defer bin.Close()
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		s, err := bin.Sealed()
		require.NoError(b, err)
		s.Close()
	}
}
