// Package selfbin finds a companion binary installed next to the running
// executable (landjail-netproxy next to landjail or landjail-mcp) and pins
// it, so that what landjail starts unconfined is what was installed, not
// what a confined command put in its place. PATH is never searched.
//
// Why: the companion runs unconfined (landjail-netproxy dials the allowed
// hosts from the host's network namespace), usually as root. A lookup in
// PATH, or a lookup per start, would let a confined command that can
// write to a directory on PATH, or next to the companion, choose what
// landjail runs. [Open] checks the file and its directory once and keeps
// a descriptor: a rename over the installed file or a symlink swap after
// Open changes nothing. [Binary.Sealed] goes further for long-lived
// callers (landjail-mcp starts a proxy per tool call, while earlier
// calls' processes may still run): a copy in a sealed memfd, which not
// even an in-place write to the installed file changes.
package selfbin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is wrapped (in an *fs.PathError naming the file or
// directory) by Open when the companion, or the directory holding it, is
// owned by a user other than root and the caller, or is writable by its
// group or by others: another user could replace what landjail runs.
var ErrUnsafe = errors.New("writable by another user")

// Binary is a pinned companion binary: a descriptor of the checked
// installed file ([Open]) or of a sealed memfd copy ([Binary.Sealed]).
// It is safe for concurrent use; Close releases it.
type Binary struct {
	f    *os.File
	from string
}

// Path returns the path a process of the caller starts the pinned binary
// with: "/proc/self/fd/N" (needs /proc mounted; the descriptor is
// close-on-exec, which execve(2) of an ELF binary allows, not of a
// "#!" script).
func (b *Binary) Path() string { return "/proc/self/fd/" + strconv.Itoa(int(b.f.Fd())) }

// Source returns the installed file the binary was pinned from.
func (b *Binary) Source() string { return b.from }

// Close releases the descriptor.
func (b *Binary) Close() error { return b.f.Close() }

// Next returns the path name would have next to the running executable
// (os.Executable, symlinks resolved by the kernel).
func Next(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(self), name), nil
}

// Open pins the binary at path (use Next for a companion next to the
// running executable). Checks, in order: path's directory and the file
// itself (symlinks followed, each target checked the same way) are owned
// by root or by the caller's effective uid and are not writable by group
// or others (a sticky directory is not enough): else ErrUnsafe; the file
// is a regular file with an execute bit: else fs.ErrPermission. The file
// is then held open: renames and symlink swaps after Open do not change
// what [Binary.Path] starts; an in-place write to the file does, until a
// process runs from it (execve(2) then makes the kernel refuse writes to
// it, ETXTBSY) — start it before anything hostile can write, or use
// [Binary.Sealed]. Errors wrap *fs.PathError (fs.ErrNotExist for a missing
// file).
func Open(path string) (*Binary, error) {
	f, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	return &Binary{f: f, from: path}, nil
}

// Sealed returns a copy of b in a memfd (MFD_CLOEXEC|MFD_ALLOW_SEALING,
// MFD_EXEC where the kernel has it, Linux 6.3) sealed with F_SEAL_SEAL,
// F_SEAL_SHRINK, F_SEAL_GROW and F_SEAL_WRITE: no later write to the
// installed file, by anyone, changes what the copy's Path starts. It
// costs a copy of the file (about 1 ms per MB, measured by BenchmarkOpen
// and BenchmarkSealed); b stays open. Errors wrap *fs.PathError.
func (b *Binary) Sealed() (*Binary, error) {
	path := b.from
	fd, err := unix.MemfdCreate(filepath.Base(path), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err == unix.EINVAL { // before Linux 6.3: no MFD_EXEC, memfds are executable
		fd, err = unix.MemfdCreate(filepath.Base(path), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "memfd_create", Path: path, Err: err}
	}
	m := os.NewFile(uintptr(fd), "memfd:"+filepath.Base(path))
	if err := copyFile(m, b.f); err != nil {
		m.Close()
		return nil, &fs.PathError{Op: "copy", Path: path, Err: err}
	}
	const seals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(m.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		m.Close()
		return nil, &fs.PathError{Op: "fcntl F_ADD_SEALS", Path: path, Err: err}
	}
	return &Binary{f: m, from: path}, nil
}

// openChecked opens path for reading after checking its directory and,
// through the descriptor, the file itself.
func openChecked(path string) (*os.File, error) {
	for hops := 0; ; hops++ {
		if err := checkOwner(filepath.Dir(path)); err != nil {
			return nil, err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		if hops == 8 {
			return nil, &fs.PathError{Op: "open", Path: path, Err: unix.ELOOP}
		}
		target, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	// O_NOFOLLOW: the last component was checked not to be a symlink;
	// its directory (each hop's) was checked not to be writable by
	// anyone but root and the caller. Directories further up are not
	// checked: a command that can write there (a confined one, running
	// as the caller) is kept out by opening before any command runs.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = ownerOK(path, fi)
	}
	if err == nil && (!fi.Mode().IsRegular() || fi.Mode()&0o111 == 0) {
		err = &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not an executable regular file: %w", fs.ErrPermission)}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkOwner(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	return ownerOK(dir, fi)
}

func ownerOK(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &fs.PathError{Op: "stat", Path: path, Err: errors.ErrUnsupported}
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("owned by uid %d: %w", st.Uid, ErrUnsafe)}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("mode %v: %w", fi.Mode().Perm(), ErrUnsafe)}
	}
	return nil
}

// copyFile copies src into the empty dst with sendfile(2) (1.3× faster
// than io.Copy's 32 KiB writes into a memfd, and than a mapped source),
// sized first, and fails if src shrinks under it.
func copyFile(dst, src *os.File) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	var off int64 // sendfile from offset 0 whatever the descriptor's position
	if err := unix.Ftruncate(int(dst.Fd()), size); err != nil {
		return err
	}
	for done := int64(0); done < size; {
		n, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &off, int(size-done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		done += int64(n)
	}
	return nil
}
