// Package regfile opens a regular file by a path someone else chose
// without opening anything else: an O_PATH open (which opens no FIFO,
// device or socket: open(2), "O_PATH"), fstat(2), and only for a regular
// file the real open, through /proc/self/fd (non-blocking, no
// controlling terminal). A plain open(2) of a name a confined command
// wrote into a configuration file released a host process blocked on a
// FIFO's write end (SIGPIPE) and could reach a device's open side
// effects (red team round 31, R31c-5: landjail's sweep read what a new
// nested repository's .git/config named).
package regfile

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error (wrapped in *fs.PathError) for a name that
// is not a regular file (after symbolic links, when followed).
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file name for reading (O_RDONLY|O_NONBLOCK|
// O_NOCTTY|O_CLOEXEC), following symbolic links when follow is true
// (O_NOFOLLOW otherwise: a link is ErrNotRegular). Errors, each a
// *fs.PathError: the O_PATH open's (fs.ErrNotExist, fs.ErrPermission for
// a directory on the way the caller cannot search), ErrNotRegular, the
// reopen's (fs.ErrPermission for a file the caller cannot read).
func Open(name string, follow bool) (*os.File, error) {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	pfd, err := unix.Open(name, flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
