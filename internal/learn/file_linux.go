package learn

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// File is a --learn FILE opened before the command runs: its directory
// held by descriptor, and its text as it was then. Writing goes through
// that descriptor (a temporary file and renameat(2) in the same
// directory), so a command that replaces the directory, or rewrites the
// file, during the run changes neither what is merged nor where it goes.
type File struct {
	path string
	dir  *os.File // O_PATH|O_DIRECTORY of filepath.Dir(path)
	name string
	text []byte      // the file as it was at Open; nil when it did not exist
	mode fs.FileMode // its permission bits, 0o644 for a new file
	ino  [2]uint64   // dev, ino of dir
}

// Open opens path's directory and reads path, which need not exist. A
// symbolic link, or anything but a regular file, is an error (wrapped in
// *fs.PathError: fs.ErrInvalid), as is a missing directory.
func Open(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dirPath, name := filepath.Split(abs)
	fd, err := unix.Open(dirPath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dirPath, Err: err}
	}
	f := &File{path: abs, dir: os.NewFile(uintptr(fd), dirPath), name: name, mode: 0o644}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "fstat", Path: dirPath, Err: err}
	}
	f.ino = [2]uint64{st.Dev, st.Ino}
	rfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return f, nil
	case errors.Is(err, unix.ELOOP):
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: fmt.Errorf("%w: a symbolic link", fs.ErrInvalid)}
	case err != nil:
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	rf := os.NewFile(uintptr(rfd), abs)
	defer rf.Close()
	fi, err := rf.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: abs, Err: fmt.Errorf("%w: not a regular file", fs.ErrInvalid)}
	}
	if f.text, err = io.ReadAll(io.LimitReader(rf, maxFile+1)); err != nil {
		f.Close()
		return nil, err
	}
	if len(f.text) > maxFile {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: abs, Err: fmt.Errorf("%w: larger than %d bytes", fs.ErrInvalid, maxFile)}
	}
	if f.text == nil {
		f.text = []byte{}
	}
	f.mode = fi.Mode().Perm()
	return f, nil
}

// maxFile bounds the config file read (1 MiB: a config is a few KiB).
const maxFile = 1 << 20

// Path is the absolute path given to Open.
func (f *File) Path() string { return f.path }

// Dir is the directory the file is in, absolute: relative paths in it are
// relative to it.
func (f *File) Dir() string { return filepath.Dir(f.path) }

// Text is the file's content at Open (nil when it did not exist).
func (f *File) Text() []byte { return f.text }

// Write replaces the file with data: a new file (O_EXCL, mode of the old
// file or 0644, fsync'd) in the directory opened by Open, renamed over the
// old name with renameat(2), the directory fsync'd. When the directory's
// path no longer names that directory (it was moved or replaced during
// the run) the file is still written there, and the error says where
// (ErrMoved).
func (f *File) Write(data []byte) error {
	var tmp string
	var fd int
	for i := 0; ; i++ {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return err
		}
		tmp = "." + f.name + ".learn-" + hex.EncodeToString(rnd[:])
		var err error
		fd, err = unix.Openat(int(f.dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(f.mode))
		if err == nil {
			break
		}
		// EEXIST: a name taken by chance, or planted: draw another, a
		// few times.
		if !errors.Is(err, unix.EEXIST) || i == 8 {
			return &fs.PathError{Op: "openat", Path: filepath.Join(f.Dir(), tmp), Err: err}
		}
	}
	w := os.NewFile(uintptr(fd), tmp)
	_, err := w.Write(data)
	if err == nil {
		err = unix.Fchmod(fd, uint32(f.mode)) // umask
	}
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(int(f.dir.Fd()), tmp, int(f.dir.Fd()), f.name)
	}
	if err != nil {
		unix.Unlinkat(int(f.dir.Fd()), tmp, 0)
		return &fs.PathError{Op: "write", Path: f.path, Err: err}
	}
	if d, err := unix.Openat(int(f.dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		unix.Fsync(d)
		unix.Close(d)
	}
	var st unix.Stat_t
	if err := unix.Stat(f.Dir(), &st); err != nil || st.Dev != f.ino[0] || st.Ino != f.ino[1] {
		return &fs.PathError{Op: "write", Path: f.path, Err: ErrMoved}
	}
	return nil
}

// ErrMoved: the --learn file's directory was moved or replaced while the
// command ran; the file was written into the directory as opened, which
// its path no longer names.
var ErrMoved = errors.New("the directory was moved or replaced during the run; the learned file went to the directory as it was opened")

// Close releases the directory descriptor.
func (f *File) Close() error { return f.dir.Close() }
