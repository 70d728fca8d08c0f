package landlock

import (
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/selfproc"
)

// pathFDs opens each path plan stats once, O_PATH|O_CLOEXEC following
// symlinks (as addPathRule does), and keeps the descriptor for the rule:
// one lookup per path instead of a stat and an open, and the rule is
// added on the very inode whose type decided its rights (before, a path
// swapped between the stat and the open got the rights of the old one,
// which landlock_add_rule refused for a file given directory rights).
// At most maxPathFDs are kept (a policy with thousands of paths must not
// run out of descriptors); the paths past them are stat'd as before. Not
// safe for concurrent use; close releases what take did not.
type pathFDs struct {
	fds map[string]int
}

// maxPathFDs bounds the descriptors pathFDs keeps: far above the system
// preset's ≈40 paths, far below RLIMIT_NOFILE's usual soft limit (1024).
const maxPathFDs = 256

// stat is a statFunc: it reports whether path is a directory, through a
// descriptor it keeps.
func (p *pathFDs) stat(path string) (bool, error) {
	if fd, ok := p.fds[path]; ok {
		return fdIsDir(fd, path)
	}
	if len(p.fds) >= maxPathFDs {
		return statPath(path) // bounded: the rule opens it again
	}
	if p.fds == nil {
		p.fds = map[string]int{}
	}
	// A path of the system preset that internal/selfproc opened before
	// most of the program initialized (a root run without the view):
	// the same open and fstat, made earlier on the other CPU.
	if fd, isDir, err, ok := selfproc.TakePath(path); ok {
		if err != nil {
			return false, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		p.fds[path] = fd
		return isDir, nil
	}
	fd, err := openPathFD(path)
	if err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	p.fds[path] = fd
	return fdIsDir(fd, path)
}

// openPathFD is pathFDs' open of a path (a variable for tests).
var openPathFD = func(path string) (int, error) {
	return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
}

func fdIsDir(fd int, path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// take returns the descriptor stat kept for path and forgets it (the
// caller owns it now), or -1.
func (p *pathFDs) take(path string) int {
	fd, ok := p.fds[path]
	if !ok {
		return -1
	}
	delete(p.fds, path)
	return fd
}

// close closes every descriptor not taken, and those internal/selfproc
// opened that stat did not ask for.
func (p *pathFDs) close() {
	for _, fd := range p.fds {
		unix.Close(fd)
	}
	p.fds = nil
	selfproc.ReleasePaths()
}
