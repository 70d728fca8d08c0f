package jail_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/landjail/landjail/internal/attacktest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

func tempRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestNewErrors(t *testing.T) {
	dir := tempRoot(t)
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))

	_, err := jail.New("relative")
	assert.ErrorIs(t, err, jail.ErrNotAbsolute)
	_, err = jail.New(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = jail.New(file)
	assert.ErrorIs(t, err, jail.ErrNotDirectory)
	_, err = jail.New(dir, jail.WithAllowed("rel", jail.ReadOnly))
	assert.ErrorIs(t, err, jail.ErrNotAbsolute)

	// The root is canonicalised once.
	link := filepath.Join(tempRoot(t), "link")
	require.NoError(t, os.Symlink(dir, link))
	ws, err := jail.New(link)
	require.NoError(t, err)
	defer ws.Close()
	assert.Equal(t, dir, ws.Root())
}

func TestResolveSemantics(t *testing.T) {
	root := tempRoot(t)
	out := tempRoot(t)
	must := func(err error) { t.Helper(); require.NoError(t, err) }
	must(os.MkdirAll(filepath.Join(root, "sub/inner"), 0o755))
	must(os.WriteFile(filepath.Join(root, "sub/x"), nil, 0o644))
	must(os.Symlink("sub/inner", filepath.Join(root, "link")))
	must(os.Symlink(out, filepath.Join(root, "escape")))
	must(os.Symlink(filepath.Join(out, "new"), filepath.Join(root, "dangling-out")))
	must(os.Symlink("sub/created", filepath.Join(root, "dangling-in")))
	must(os.Symlink("loop", filepath.Join(root, "loop")))
	must(os.Mkdir(root+"-evil", 0o755))
	defer os.RemoveAll(root + "-evil")

	ws, err := jail.New(root)
	require.NoError(t, err)
	defer ws.Close()

	for _, tc := range []struct {
		in   string
		want string // relative to root
		err  error
	}{
		{in: "sub/x", want: "sub/x"},
		{in: "link/../x", want: "sub/x"}, // ".." applies to the target (sub/inner/..)
		{in: "new/dir/file", want: "new/dir/file"},
		{in: "dangling-in", want: "sub/created"},
		{in: "dangling-out", err: jail.ErrOutsideWorkspace},
		{in: "escape/x", err: jail.ErrOutsideWorkspace},
		{in: "../x", err: jail.ErrOutsideWorkspace},
		{in: root + "-evil/x", err: jail.ErrOutsideWorkspace},
		{in: root + "/sub/x", want: "sub/x"},
		{in: "loop", err: syscall.ELOOP},
		{in: "missing/../x", err: syscall.ENOENT},
		{in: "sub/x/", err: syscall.ENOTDIR},
		{in: "a\x00b", err: jail.ErrInvalidPath},
		{in: "", err: jail.ErrInvalidPath},
		{in: "/proc/self/root" + root + "/sub/x", want: "sub/x"},                           // the magic link is read as text
		{in: "/etc/passwd/x", err: jail.ErrOutsideWorkspace},                               // not ENOTDIR: says nothing about outside
		{in: "escape/../" + filepath.Base(root) + "/sub/x", err: jail.ErrOutsideWorkspace}, // ".." from outside: would reveal that out exists
		{in: "../" + filepath.Base(root) + "/sub/x", want: "sub/x"},                        // ".." to an ancestor of the root is fine
		// Same answer whether the outside directory exists or not.
		{in: "../" + filepath.Base(out) + "/../" + filepath.Base(root) + "/sub/x", err: jail.ErrOutsideWorkspace},
		{in: "../nothere/../" + filepath.Base(root) + "/sub/x", err: jail.ErrOutsideWorkspace},
	} {
		got, err := ws.Resolve(tc.in)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, tc.in)
			var pe *fs.PathError
			if assert.ErrorAs(t, err, &pe, tc.in) {
				assert.Equal(t, tc.in, pe.Path)
			}
			continue
		}
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, filepath.Join(root, tc.want), got, tc.in)
		}
	}
}

func TestPolicyOptions(t *testing.T) {
	root := tempRoot(t)
	ro := tempRoot(t)
	rox := tempRoot(t)
	require.NoError(t, os.WriteFile(filepath.Join(ro, "f"), []byte("ro"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("SECRET"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "secrets/deep"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secrets/deep/k"), nil, 0o600))
	require.NoError(t, os.Symlink(".env", filepath.Join(root, "innocent")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))

	ws, err := jail.New(root,
		jail.WithAllowed(ro, jail.ReadOnly),
		jail.WithAllowed(rox, jail.ReadExec),
		jail.WithDeny(".env", "secrets/deep/k", "vault/**", ".git/", "/etc/shadow"))
	require.NoError(t, err)
	defer ws.Close()

	_, err = ws.Check(filepath.Join(ro, "f"), jail.Read)
	assert.NoError(t, err)
	_, err = ws.Check(filepath.Join(ro, "f"), jail.Write)
	assert.ErrorIs(t, err, jail.ErrReadOnly)
	_, err = ws.Check(filepath.Join(ro, "f"), jail.Execute)
	assert.ErrorIs(t, err, jail.ErrNotExecutable)
	_, err = ws.Check(filepath.Join(rox, "tool"), jail.Execute)
	assert.NoError(t, err)
	_, err = ws.Check(filepath.Join(rox, "tool"), jail.Write)
	assert.ErrorIs(t, err, jail.ErrReadOnly)

	for _, p := range []string{".env", "innocent", "secrets/deep/k", ".git/config", ".git", "sub/.env"} {
		_, err := ws.Resolve(p)
		assert.ErrorIs(t, err, jail.ErrDenied, p)
	}
	_, err = ws.Resolve("secrets")
	assert.NoError(t, err, "a file pattern does not deny its parent")
	_, err = ws.Resolve("vault/x/y")
	assert.ErrorIs(t, err, jail.ErrDenied)

	attacktest.ForEachMechanism(t, func(t *testing.T) {
		_, err := ws.ReadFile("innocent")
		assert.ErrorIs(t, err, jail.ErrDenied)
		err = ws.WriteFile(filepath.Join(ro, "g"), nil, 0o644)
		assert.ErrorIs(t, err, jail.ErrReadOnly)
		_, err = os.Stat(filepath.Join(ro, "g"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
		// A path pattern cannot be evaded by moving the parent.
		assert.ErrorIs(t, ws.Rename("secrets", "public"), jail.ErrDenied)
		assert.ErrorIs(t, ws.RemoveAll("secrets"), jail.ErrDenied)
		ents, err := ws.ReadDir(".")
		require.NoError(t, err)
		for _, e := range ents {
			assert.NotEqual(t, ".env", e.Name())
		}
	})

	abs, err := jail.New(root, jail.RejectAbsolute())
	require.NoError(t, err)
	defer abs.Close()
	_, err = abs.Resolve(filepath.Join(root, "x"))
	assert.ErrorIs(t, err, jail.ErrAbsolutePath)

	un, err := jail.New(root, jail.Unrestricted(), jail.WithDeny("/etc/shadow"))
	require.NoError(t, err)
	defer un.Close()
	_, err = un.Resolve("/etc/hostname")
	assert.NoError(t, err)
	_, err = un.Resolve("/etc/shadow")
	assert.ErrorIs(t, err, jail.ErrDenied)
}

func TestReadTracker(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		root := tempRoot(t)
		require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("v1"), 0o644))
		tr := jail.NewReadTracker()
		ws, err := jail.New(root, jail.WithReadTracker(tr))
		require.NoError(t, err)
		defer ws.Close()

		assert.ErrorIs(t, ws.WriteFile("f", []byte("v2"), 0o644), jail.ErrNotRead)
		assert.NoError(t, ws.WriteFile("new", []byte("n"), 0o644), "new files need no read")
		_, err = ws.ReadFile("f")
		require.NoError(t, err)
		assert.True(t, tr.HasBeenRead(filepath.Join(root, "f")))
		require.NoError(t, ws.WriteFile("f", []byte("v2"), 0o644))
		require.NoError(t, ws.WriteFile("f", []byte("v3"), 0o644), "our own write keeps it fresh")

		// Changed behind our back.
		require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("changed by someone"), 0o644))
		assert.ErrorIs(t, ws.WriteFile("f", []byte("v4"), 0o644), jail.ErrStale)
		_, err = ws.OpenFile("f", os.O_WRONLY|os.O_TRUNC, 0)
		assert.ErrorIs(t, err, jail.ErrStale)
	})
}

func TestWriteFileAtomic(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		root := tempRoot(t)
		out := tempRoot(t)
		secret := filepath.Join(out, "secret")
		require.NoError(t, os.WriteFile(secret, []byte("outside"), 0o644))
		require.NoError(t, os.Link(secret, filepath.Join(root, "hard")))
		ws, err := jail.New(root)
		require.NoError(t, err)
		defer ws.Close()

		// Replacing a hard link never writes through it.
		require.NoError(t, ws.WriteFile("hard", []byte("inside"), 0o644))
		b, _ := os.ReadFile(secret)
		assert.Equal(t, "outside", string(b))

		// A failed write leaves nothing behind.
		require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
		assert.ErrorIs(t, ws.WriteFile("dir", []byte("x"), 0o644), syscall.EISDIR)
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			assert.NotContains(t, e.Name(), ".landjail-tmp-")
		}

		nh, err := jail.New(root, jail.WithNoHardlinkedWrites())
		require.NoError(t, err)
		defer nh.Close()
		require.NoError(t, os.Link(secret, filepath.Join(root, "hard2")))
		_, err = nh.OpenFile("hard2", os.O_WRONLY, 0)
		assert.ErrorIs(t, err, jail.ErrHardlinked)
	})
}

func TestOpsThroughInRootSymlinks(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		root := tempRoot(t)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "real"), 0o755))
		require.NoError(t, os.Symlink("real", filepath.Join(root, "alias")))
		ws, err := jail.New(root)
		require.NoError(t, err)
		defer ws.Close()

		require.NoError(t, ws.WriteFile("alias/f", []byte("x"), 0o644))
		b, err := os.ReadFile(filepath.Join(root, "real/f"))
		require.NoError(t, err)
		assert.Equal(t, "x", string(b))
		require.NoError(t, ws.MkdirAll("alias/a/b", 0o755))
		fi, err := ws.Lstat("alias")
		require.NoError(t, err)
		assert.Equal(t, fs.ModeSymlink, fi.Mode().Type())
		require.NoError(t, ws.Rename("alias/f", "alias/g"))
		require.NoError(t, ws.Remove("alias"))
		_, err = os.Stat(filepath.Join(root, "real/g"))
		assert.NoError(t, err, "Remove of a symlink removes the link only")
		assert.ErrorIs(t, ws.Remove("."), openat.ErrInvalidName)

		// fs.FS stays rooted.
		require.NoError(t, os.Symlink("/etc", filepath.Join(root, "etc")))
		matches, err := fs.Glob(ws.FS(), "etc/*")
		require.NoError(t, err)
		assert.Empty(t, matches)
		_, err = fs.ReadFile(ws.FS(), "etc/passwd")
		assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
	})
}

func TestUseAfterClose(t *testing.T) {
	ws, err := jail.New(tempRoot(t))
	require.NoError(t, err)
	require.NoError(t, ws.Close())
	_, err = ws.Open("x")
	assert.ErrorIs(t, err, fs.ErrClosed)
	require.NoError(t, ws.Close())
}
