package cliopts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// CommandHome returns the command's HOME (landjail run, and the bash tool
// of landjail-mcp) and whether it lies outside the
// policy and so must be granted read-write (landlock.Options.Extra, like
// the private TMPDIR):
//
//   - --home workspace: the workspace root (no grant);
//   - --home DIR: DIR, made 0700 if missing and handed to the user the
//     command runs as;
//   - default: a private directory per workspace, kept between runs, so
//     caches (go build, npm, pip) and dotfiles stay out of the project:
//     $XDG_CACHE_HOME/landjail/home/HASH (os.UserCacheDir), HASH from the
//     canonical workspace root. With --user another user cannot traverse
//     the caller's cache directory, so it is $TMPDIR/landjail-home-UID-HASH
//     instead.
//
// The directory is created without following a symbolic link in its last
// component and fchowned by descriptor; an existing one is used only if
// it is a directory owned by that user that nobody else can write.
func (o *Options) CommandHome(wsRoot string, cred *syscall.Credential) (dir string, grant bool, err error) {
	uid, gid := os.Geteuid(), os.Getegid()
	if cred != nil {
		uid, gid = int(cred.Uid), int(cred.Gid)
	}
	sum := sha256.Sum256([]byte(wsRoot))
	hash := fmt.Sprintf("%x", sum[:8])
	var parent, name string
	switch {
	case o.Home == HomeWorkspace:
		return wsRoot, false, nil
	case o.Home != "":
		parent, name = filepath.Dir(o.Home), filepath.Base(o.Home)
	default:
		cache, cerr := os.UserCacheDir()
		if cerr == nil && uid == os.Geteuid() {
			parent, name = filepath.Join(cache, "landjail", "home"), hash
			// Fast path, every run after the first: the directory is
			// there (O_NOFOLLOW: not a link in its place; the parents
			// are the caller's own cache directory, which no command
			// is granted).
			dir = filepath.Join(parent, name)
			if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				var st unix.Stat_t
				err := unix.Fstat(fd, &st)
				unix.Close(fd)
				if err == nil && int(st.Uid) == uid && st.Mode&0o022 == 0 {
					return dir, true, nil
				}
			}
			if err := os.MkdirAll(parent, 0o700); err != nil {
				return "", false, fmt.Errorf("--home: %w", err)
			}
		} else {
			parent, name = os.TempDir(), fmt.Sprintf("landjail-home-%d-%s", uid, hash)
		}
	}
	dir = filepath.Join(parent, name)
	if err := ensureOwnDir(parent, name, uid, gid, o.Home != ""); err != nil {
		return "", false, err
	}
	return dir, true, nil
}

// ErrForeignDir is wrapped by CommandHome's error when the private
// HOME's name is taken by an entry that is not a directory of the user
// the command runs as: a symbolic link, a file, or another user's
// directory. With --user that name lies in the shared /tmp, and any
// local user could make it first (red team round 27, R27b-1: root's
// runs of that workspace then refused to start); the caller uses a
// private HOME elsewhere (sandbox: inside the private TMPDIR), never the
// entry.
var ErrForeignDir = errors.New("the name is taken by an entry that is not a private directory of that user")

// EnsureOwnDir makes parent/name (mode 0700, owned by uid:gid) or checks
// an existing one: a directory, not a symbolic link, owned by uid, its
// mode set back to 0700 (a command may have changed it). A directory it
// did not make is never handed to uid (red team round 30, R30d-4).
// Errors: ErrForeignDir for an entry that is not uid's directory, the
// file system's.
func EnsureOwnDir(parent, name string, uid, gid int) error {
	return ensureOwnDir(parent, name, uid, gid, false)
}

// ensureOwnDir is EnsureOwnDir; chosen (--home DIR) accepts any existing
// directory as it is.
func ensureOwnDir(parent, name string, uid, gid int, chosen bool) error {
	r, err := os.OpenRoot(parent)
	if err != nil {
		return fmt.Errorf("--home: %w", err)
	}
	defer r.Close()
	dir := filepath.Join(parent, name)
	if err := r.Mkdir(name, 0o700); err == nil {
		if err := HandDirTo(r, name, uid, gid); err != nil {
			// Not left behind: owned by the caller under another user's
			// name, it would make that user's later runs refuse it.
			r.Remove(name)
			return fmt.Errorf("--home: %w", err)
		}
		return nil
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("--home: %w", err)
	}
	d, err := r.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("--home %s: not a directory, or a symbolic link: %w (%w)", dir, ErrForeignDir, err)
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: dir, Err: err}
	}
	if chosen {
		return nil
	}
	if int(st.Uid) != uid {
		return fmt.Errorf("--home %s: owned by uid %d with mode %#o, want uid %d and not writable by others (remove it, or give --home DIR): %w", dir, st.Uid, st.Mode&0o7777, uid, ErrForeignDir)
	}
	if st.Mode&0o7777 != 0o700 {
		// Ours, but a command (which owns it too) chmod-ed it: made
		// private again rather than refused, or one `chmod 777 $HOME`
		// would stop every later run of the workspace.
		if err := unix.Fchmod(int(d.Fd()), 0o700); err != nil {
			return &fs.PathError{Op: "fchmod", Path: dir, Err: err}
		}
	}
	return nil
}

// HandDirTo fchowns the directory name below root to uid:gid unless it
// already is theirs, through a descriptor opened without following a
// symbolic link.
func HandDirTo(root *os.Root, name string, uid, gid int) error {
	d, err := root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: d.Name(), Err: err}
	}
	if int(st.Uid) == uid && int(st.Gid) == gid {
		return nil
	}
	if err := unix.Fchown(int(d.Fd()), uid, gid); err != nil {
		return &fs.PathError{Op: "fchown", Path: d.Name(), Err: err}
	}
	return nil
}
