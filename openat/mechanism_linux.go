package openat

import (
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/fallback"
	"github.com/landjail/landjail/internal/kernel"
)

const (
	// resolveStrict is what every lookup passes to openat2: stay beneath
	// the directory fd and never follow any symbolic link.
	resolveStrict = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS

	// maxLookupRetries bounds the retries of an openat2 that failed in a
	// way a concurrent rename or mount can cause (see
	// openat2ShouldRetry). Same bound as filepath-securejoin's
	// scopedLookupMaxRetries: a lookup racing a rename loop gets through
	// in a few tries, and an attacker who wins 128 races in a row only
	// gets an error, never a file outside the root.
	maxLookupRetries = 128

	// stackPathMax is the longest name passed to openat2 from a stack
	// buffer; longer names take one allocation.
	stackPathMax = 256
)

// openat2Disabled is a one-way flag: once openat2 failed with ENOSYS, or
// with EPERM while the kernel probe also fails (a seccomp profile), every
// later lookup uses the O_NOFOLLOW walk. It is never reset: a seccomp
// filter can be added while we run, never removed.
var openat2Disabled atomic.Bool

// forceFallback is the test hook behind SetForceFallback.
var forceFallback atomic.Bool

// Mechanism names the lookup mechanism now in force: "openat2" (kernel
// ≥ 5.6, RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) or "o_nofollow-walk"
// (fallback.OpenatBeneath, used when openat2 failed with ENOSYS or EPERM).
// It can change from "openat2" to "o_nofollow-walk" while the process
// runs, never back.
func Mechanism() string {
	if forceFallback.Load() || openat2Disabled.Load() {
		return MechanismWalk
	}
	return MechanismOpenat2
}

// Mechanism names returned by Mechanism.
const (
	MechanismOpenat2 = "openat2"
	MechanismWalk    = "o_nofollow-walk"
)

// SetForceFallback forces (on=true) or stops forcing the O_NOFOLLOW walk
// for every Root in the process, and returns a function restoring the
// previous setting. It exists so tests can run every file operation with
// both mechanisms; it never re-enables openat2 after the kernel refused it.
func SetForceFallback(on bool) (restore func()) {
	old := forceFallback.Swap(on)
	return func() { forceFallback.Store(old) }
}

// openBeneath opens unsafePath beneath dirfd without following any
// symlink: openat2 when it works, else the component walk. It returns a
// bare unix.Errno on failure. O_CLOEXEC is always added.
func openBeneath(dirfd int, unsafePath string, flags int, mode uint32, resolve uint64) (int, error) {
	flags |= unix.O_CLOEXEC
	if !forceFallback.Load() && !openat2Disabled.Load() {
		fd, err := openat2Retry(dirfd, unsafePath, flags, mode, resolve)
		switch err {
		case unix.ENOSYS:
			openat2Disabled.Store(true)
		case unix.EPERM:
			// EPERM is also a real answer (O_NOATIME on another's
			// file...). Only a failing probe makes it "unsupported".
			if kernel.Openat2Supported() {
				return -1, err
			}
			openat2Disabled.Store(true)
		default:
			return fd, err
		}
	}
	return fallback.OpenatBeneath(dirfd, unsafePath, flags, mode, resolve)
}

func openat2Retry(dirfd int, path string, flags int, mode uint32, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveStrict | resolve}
	var err error
	for range maxLookupRetries {
		var fd int
		if fd, err = openat2Syscall(dirfd, path, &how); !openat2ShouldRetry(path, err) {
			return fd, err
		}
	}
	return -1, err
}

// openat2ShouldRetry reports whether an openat2 failure may be a race with
// another process rather than the answer for path, following
// filepath-securejoin's scopedLookupShouldRetry:
//   - EINTR: a signal arrived during the lookup (openat2 on a FIFO or a
//     slow filesystem); nothing was opened.
//   - EAGAIN: with RESOLVE_BENEATH the kernel refuses to trust a ".."
//     resolved while a rename or mount happened anywhere on the system
//     (the rename_lock/mount_lock seqcounts moved), since the ".." may
//     have left the root (fs/namei.c, handle_dots).
//   - EXDEV for a lexically local name (filepath.IsLocal: not absolute,
//     no ".." climbing above the start): without symlinks such a name
//     cannot escape, so EXDEV comes from the safety check at the end of
//     complete_walk (path_is_under(&nd->path, &nd->root)) seeing the
//     directory reached moved out from under the root by a concurrent
//     rename, or (RESOLVE_NO_XDEV) a mount that may come and go. A name
//     that escapes lexically fails with EXDEV every time and is not
//     retried.
//
// After maxLookupRetries failures the last errno is returned.
func openat2ShouldRetry(path string, err error) bool {
	switch err {
	case unix.EINTR, unix.EAGAIN:
		return true
	case unix.EXDEV:
		return filepath.IsLocal(path)
	}
	return false
}

// openat2Syscall is the openat2 that openat2Retry calls; tests replace it
// to inject the errnos of races that cannot be produced on demand.
var openat2Syscall = openat2

// openat2 is unix.Openat2 without its allocation: names shorter than
// stackPathMax are NUL-terminated in a stack buffer.
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	var buf [stackPathMax]byte
	var p *byte
	if len(path) < len(buf) {
		for i := 0; i < len(path); i++ {
			if path[i] == 0 {
				return -1, unix.EINVAL
			}
			buf[i] = path[i]
		}
		p = &buf[0]
	} else {
		var err error
		if p, err = unix.BytePtrFromString(path); err != nil {
			return -1, unix.EINVAL
		}
	}
	r, _, e := unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
