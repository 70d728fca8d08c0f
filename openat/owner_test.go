package openat_test

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/threadcaps"
	"github.com/landjail/landjail/openat"
)

// TestWriteFileKeepsOwner: WriteFile over a file of another user, as
// root, keeps its owner, group and mode (red team round 25, R25b-5:
// landjail-mcp as root turned a user's 0600 file into root's, and its
// owner could no longer read it). Control: a new file is the writer's.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("old"), 0o600))
	require.NoError(t, os.Chown(f, 65534, 65533))
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.WriteFile("f", []byte("new"), 0o644))
	fi, err := os.Stat(f)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65533}, [2]uint32{st.Uid, st.Gid}, "owner and group kept")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode kept")
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))

	require.NoError(t, r.WriteFile("g", []byte("x"), 0o644))
	fi, err = os.Stat(filepath.Join(dir, "g"))
	require.NoError(t, err)
	assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "control: a new file is the writer's")
}

// TestLchown: Lchown gives a file away through its parent's fd and
// changes a symbolic link itself, never what it names (a link to a file
// outside the root stays pointing at a file that keeps its owner).
func TestLchown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir, out := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "victim"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(out, "victim"), filepath.Join(dir, "l")))
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Lchown("f", 65534, 65533))
	require.NoError(t, r.Lchown("l", 65534, 65533))
	uid := func(p string) uint32 {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	assert.Equal(t, uint32(65534), uid(filepath.Join(dir, "f")))
	assert.Equal(t, uint32(65534), uid(filepath.Join(dir, "l")), "the link itself")
	assert.Equal(t, uint32(0), uid(filepath.Join(out, "victim")), "not what it names")
	assert.Error(t, r.Lchown("../x", 0, 0), "outside the root")
}

// TestWriteFileProvesWritable: red team round 30, R30a-1. On a thread
// holding CAP_CHOWN alone (landjail-mcp's file tools as root), WriteFile
// replaces a file only if it could be written in place, and the owner it
// keeps is that file's: an attacker exchanging the name with another
// user's 0444 file (RENAME_EXCHANGE in a loop) must never get the new
// content under that user's uid. Controls: the writer's own 0644 file is
// replaced; the 0444 file alone is refused (EACCES).
func TestWriteFileProvesWritable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: another user's file, and capabilities to drop")
	}
	dir := t.TempDir()
	f, victim := filepath.Join(dir, "f"), filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(f, []byte("same\n"), 0o644))
	require.NoError(t, os.WriteFile(victim, []byte("same\n"), 0o444))
	require.NoError(t, os.Chown(victim, 65534, 65534))
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	capless := func(fn func() error) error { return threadcaps.Run([]int{unix.CAP_CHOWN}, fn) }

	require.NoError(t, capless(func() error { return r.WriteFile("f", []byte("same\n"), 0o644) }), "control: the writer's own file")
	err = capless(func() error { return r.WriteFile("victim", []byte("PWNED\n"), 0o644) })
	assert.ErrorIs(t, err, unix.EACCES, "another user's 0444 file")

	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, victim, unix.RENAME_EXCHANGE)
		}
	}()
	leaked := 0
	for range 500 {
		capless(func() error { return r.WriteFile("f", []byte("PWNED\n"), 0o644) })
		for _, p := range []string{f, victim} {
			// Content and owner from one open file: the names move
			// under the exchanger (a read by name then a stat by name
			// took one file's content for the other's owner: a false
			// leak in CI's landlock=ENOSYS pass).
			h, err := os.Open(p)
			if err != nil {
				continue
			}
			b, rerr := io.ReadAll(h)
			fi, serr := h.Stat()
			h.Close()
			if rerr == nil && serr == nil && string(b) == "PWNED\n" && fi.Sys().(*syscall.Stat_t).Uid == 65534 {
				leaked++
			}
		}
	}
	stop.Store(true)
	<-done
	assert.Zero(t, leaked, "the agent's content under the other user's uid")
}

// TestWriteFileKeepsACL: red team round 30, R30a-2. A file with an access
// ACL keeps it when WriteFile replaces it: without it, the group bits
// (the ACL's mask) gave the owning group write and named users lost
// theirs. Skipped where the file system refuses ACLs.
func TestWriteFileKeepsACL(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "shared.txt")
	require.NoError(t, os.WriteFile(f, []byte("old"), 0o640))
	// user::rw- user:65534:r-- group::r-- mask::r-- other::---
	// (acl(5)'s xattr form: a version, then tag, perm, id entries).
	acl := []byte{2, 0, 0, 0,
		1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
		2, 0, 4, 0, 0xfe, 0xff, 0, 0,
		4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	if err := unix.Setxattr(f, "system.posix_acl_access", acl, 0); err != nil {
		t.Skipf("no ACLs here: %v", err)
	}
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.WriteFile("shared.txt", []byte("new"), 0o644))
	buf := make([]byte, 256)
	n, err := unix.Getxattr(f, "system.posix_acl_access", buf)
	require.NoError(t, err, "the ACL kept")
	assert.Equal(t, acl, buf[:n])
}

// TestWriteFileOwnedBeforeRename: red team round 30, R30a-4. patch gave a
// renamed file its old owner by name after the rename, and a concurrent
// exchange of that name made landjail give another root file away.
// WriteFileOwned sets mode and owner on the new file before it takes the
// name: however the names are exchanged meanwhile, the root file keeps
// its owner. Control: the written file has the owner and mode asked.
func TestWriteFileOwnedBeforeRename(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	dir := t.TempDir()
	r, err := openat.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.WriteFileOwned("g", []byte("moved"), 0o600, 65534, 65533))
	fi, err := os.Stat(filepath.Join(dir, "g"))
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65533}, [2]uint32{st.Uid, st.Gid}, "control: the owner asked")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	root := filepath.Join(dir, "root-owned")
	require.NoError(t, os.WriteFile(root, []byte("ROOT"), 0o600))
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "g"), unix.AT_FDCWD, root, unix.RENAME_EXCHANGE)
		}
	}()
	for range 300 {
		r.WriteFileOwned("g", []byte("moved"), 0o600, 65534, 65533)
	}
	stop.Store(true)
	<-done
	for _, n := range []string{"g", "root-owned"} {
		p := filepath.Join(dir, n)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		if string(b) == "ROOT" {
			assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "the root file given away")
		}
	}
}
