// Package setid tells whether a file is a program that runs with more
// than its caller's privileges outside a sandbox: a set-user-ID or
// set-group-ID executable, or one with file capabilities
// (security.capability, capabilities(7)).
//
// The kernel strips these (file_remove_privs) when a process without
// CAP_FSETID writes the file with write(2), truncates it or changes its
// owner, but not when it stores through a shared writable mapping
// (mmap MAP_SHARED: page_mkwrite updates the times only). A confined
// command that may open such a program for writing can put its own code
// in it and keep the bits, so that whoever runs it on the host later runs
// that code as the program's owner (red team round 31, R31a-5). The
// planners make the programs this package finds read-only.
package setid

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// capXattr is the extended attribute holding file capabilities
// (VFS_CAP_REVISION_2/3, linux/capability.h).
const capXattr = "security.capability"

// modeProgram reports whether a regular file's mode makes it a set-ID
// program, or one its owner makes such with chmod +x, which keeps the
// bits: S_ISUID or S_ISGID, whatever the execute bits (red team round
// 32, R32a-5: a 4644 file rewritten through a mapping, then made
// executable, was a root set-user-ID program with the command's code).
func modeProgram(mode uint32) bool {
	return mode&unix.S_IFMT == unix.S_IFREG && mode&(unix.S_ISUID|unix.S_ISGID) != 0
}

// mayHoldCaps reports whether file capabilities could matter: any
// regular file (one without an execute bit gets one from chmod +x, which
// keeps security.capability).
func mayHoldCaps(mode uint32) bool {
	return mode&unix.S_IFMT == unix.S_IFREG
}

// hasCaps reads the security.capability attribute with get: false when
// the file has none (ENODATA) or the file system has no extended
// attributes (ENOTSUP, EOPNOTSUPP); any other error is returned.
func hasCaps(get func(buf []byte) (int, error)) (bool, error) {
	var buf [24]byte // VFS_CAP_U32_3 + 1: the size of a revision 3 attribute
	_, err := get(buf[:])
	switch {
	case err == nil, errors.Is(err, unix.ERANGE):
		return true, nil
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EOPNOTSUPP):
		return false, nil
	}
	return false, err
}

// Path reports whether the file at path (not followed when it is a
// symbolic link: lstat(2)) is a set-ID or file-capability program. A
// symbolic link, directory or other non-regular file is not. Errors are
// lstat's and getxattr's (the callers fail closed on them, except
// fs.ErrNotExist: a name removed meanwhile).
func Path(path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false, err
	}
	if modeProgram(st.Mode) {
		return true, nil
	}
	if !mayHoldCaps(st.Mode) {
		return false, nil
	}
	return hasCaps(func(b []byte) (int, error) { return unix.Lgetxattr(path, capXattr, b) })
}

// Fd is Path for the file open as fd, which may be an O_PATH descriptor
// (its attribute is then read through /proc/thread-self/fd, as
// fgetxattr(2) refuses O_PATH descriptors before Linux 6.12).
func Fd(fd int) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if modeProgram(st.Mode) {
		return true, nil
	}
	if !mayHoldCaps(st.Mode) {
		return false, nil
	}
	return hasCaps(func(b []byte) (int, error) {
		n, err := unix.Fgetxattr(fd, capXattr, b)
		if errors.Is(err, unix.EBADF) {
			return unix.Getxattr("/proc/thread-self/fd/"+strconv.Itoa(fd), capXattr, b)
		}
		return n, err
	})
}
