package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/cliopts"
)

// privateTmp is the command's private TMPDIR: a directory made by
// landjail (mode 0700, owned by the user the command runs as), and the
// descriptor of its parent, through which it is removed.
type privateTmp struct {
	dir    string
	parent *os.Root // nil: kept (per-workspace directory)
}

// path is the directory ("" for a nil privateTmp).
func (t *privateTmp) path() string {
	if t == nil {
		return ""
	}
	return t.dir
}

// remove removes a per-run directory through its parent's descriptor
// (os.Root.RemoveAll: no symlink followed, nothing outside the parent
// reached) and closes it; nil or per-workspace: nothing.
func (t *privateTmp) remove() {
	if t == nil || t.parent == nil {
		return
	}
	t.parent.RemoveAll(filepath.Base(t.dir))
	t.parent.Close()
	t.parent = nil
}

// newPrivateTmp makes the command's TMPDIR in os.TempDir(): per run
// (landjail-XXXX, removed by remove) when perRun, else the workspace's
// (see workspaceTmp). With cred (--user), the directory is handed to that
// user by fchown on a descriptor opened O_NOFOLLOW, never by path.
func newPrivateTmp(wsRoot string, perRun bool, cred *syscall.Credential) (*privateTmp, error) {
	uid, gid := os.Geteuid(), os.Getegid()
	if cred != nil {
		uid, gid = int(cred.Uid), int(cred.Gid)
	}
	parent := os.TempDir()
	if !perRun {
		if dir, ok := workspaceTmp(parent, wsRoot, uid, gid); ok {
			return &privateTmp{dir: dir}, nil
		}
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "landjail-")
	if err != nil {
		root.Close()
		return nil, err
	}
	t := &privateTmp{dir: dir, parent: root}
	if err := cliopts.HandDirTo(root, filepath.Base(dir), uid, gid); err != nil {
		t.remove()
		return nil, err
	}
	if !perRun {
		// A fresh per-run directory in place of a workspace one that
		// could not be used: nothing is left to remove it.
		root.Close()
		t.parent = nil
	}
	return t, nil
}

// workspaceTmp returns the private temporary directory of the workspace
// root for runs that execve (and so cannot remove a per-run directory):
// parent/landjail-UID-HASH, UID the user the command runs as, HASH from
// the canonical root, created 0700 and owned by that user. An existing
// one is used only if it is a real directory (not a symlink) owned by
// that user with mode 0700, which nobody else can arrange in a sticky
// /tmp; ok is false when the caller should make a fresh per-run
// directory instead.
func workspaceTmp(parent, root string, uid, gid int) (dir string, ok bool) {
	sum := sha256.Sum256([]byte(root))
	name := fmt.Sprintf("landjail-%d-%x", uid, sum[:6])
	dir = filepath.Join(parent, name)
	r, err := os.OpenRoot(parent)
	if err != nil {
		return "", false
	}
	defer r.Close()
	err = r.Mkdir(name, 0o700)
	if err == nil {
		if cliopts.HandDirTo(r, name, uid, gid) != nil {
			r.Remove(name) // not left behind under another user's name
			return "", false
		}
		return dir, true
	}
	if errors.Is(err, fs.ErrExist) {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			int(st.Uid) == uid && st.Mode&0o7777 == 0o700 {
			return dir, true
		}
	}
	return "", false
}
