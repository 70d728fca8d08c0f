package fallback

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flag sets from the kernel's fs/open.c build_open_flags, which openat2
// enforces strictly (openat silently drops unknown bits).
const (
	// oTmpfileBit is __O_TMPFILE: O_TMPFILE without O_DIRECTORY.
	oTmpfileBit = unix.O_TMPFILE &^ unix.O_DIRECTORY
	// oTmpfileMask is O_TMPFILE_MASK.
	oTmpfileMask = oTmpfileBit | unix.O_DIRECTORY | unix.O_CREAT
	// oPathFlags is O_PATH_FLAGS: the only flags allowed with O_PATH.
	oPathFlags = unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_PATH | unix.O_CLOEXEC
	// sIALLUGO is S_IALLUGO: the mode bits openat2 accepts.
	sIALLUGO = 0o7777
)

// validOpenFlags is VALID_OPEN_FLAGS. O_LARGEFILE is 0 in x/sys (the kernel
// forces it on 64-bit), so its per-architecture kernel value is added here
// (include/uapi/asm-generic/fcntl.h and the arch overrides).
var validOpenFlags = unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_NOCTTY |
	unix.O_TRUNC | unix.O_APPEND | unix.O_NONBLOCK | unix.O_SYNC | unix.O_DSYNC |
	unix.O_ASYNC | unix.O_DIRECT | oLargefile() | unix.O_DIRECTORY | unix.O_NOFOLLOW |
	unix.O_NOATIME | unix.O_CLOEXEC | unix.O_PATH | unix.O_TMPFILE

func oLargefile() int {
	switch runtime.GOARCH {
	case "arm", "arm64":
		return 0o400000
	case "ppc64", "ppc64le":
		return 0o200000
	case "mips", "mipsle", "mips64", "mips64le":
		return 0x2000
	}
	return 0o100000
}

// validateHow returns EINVAL for the flags and mode openat2 rejects before
// it looks at the path.
func validateHow(flags int, mode uint32) error {
	if flags&^validOpenFlags != 0 {
		return unix.EINVAL
	}
	if flags&(unix.O_CREAT|oTmpfileBit) != 0 {
		if mode&^sIALLUGO != 0 {
			return unix.EINVAL
		}
	} else if mode != 0 {
		return unix.EINVAL
	}
	// Linux >= 6.4 rejects O_DIRECTORY|O_CREAT (older kernels created a
	// regular file); reject it on every kernel.
	if flags&(unix.O_DIRECTORY|unix.O_CREAT) == unix.O_DIRECTORY|unix.O_CREAT {
		return unix.EINVAL
	}
	if flags&oTmpfileBit != 0 {
		if flags&oTmpfileMask != unix.O_TMPFILE || flags&unix.O_ACCMODE == unix.O_RDONLY {
			return unix.EINVAL
		}
	}
	if flags&unix.O_PATH != 0 && flags&^oPathFlags != 0 {
		return unix.EINVAL
	}
	return nil
}

// maxStackFds is how many opened directories the walk keeps without
// allocating; deeper paths grow the slice.
const maxStackFds = 32

func openatBeneath(dirfd int, unsafePath string, flags int, mode uint32, resolve uint64) (int, error) {
	if strings.IndexByte(unsafePath, 0) >= 0 {
		return -1, unix.EINVAL // as unix.Openat2 (BytePtrFromString)
	}
	if err := validateHow(flags, mode); err != nil {
		return -1, err
	}
	if unsafePath == "" {
		return -1, unix.ENOENT
	}
	if len(unsafePath) >= unix.PathMax {
		return -1, unix.ENAMETOOLONG
	}
	if unsafePath[0] == '/' {
		return -1, unix.EXDEV
	}

	var fdbuf [maxStackFds]int
	w := walker{base: dirfd, stack: fdbuf[:0], noXdev: resolve&unix.RESOLVE_NO_XDEV != 0}
	defer w.closeAll()
	if dirfd == unix.AT_FDCWD {
		// Pin the working directory: a concurrent chdir must not change
		// where ".." pops back to.
		fd, err := unix.Openat(unix.AT_FDCWD, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		w.base = fd
		w.ownBase = true
	}
	if w.noXdev {
		m, err := mountOf(w.base, "")
		if err != nil {
			return -1, err
		}
		w.mnt = m
	}

	// cpath holds the path with every '/' turned into a NUL, so that each
	// component is a C string for the raw openat without an allocation.
	var cpath [unix.PathMax]byte
	copy(cpath[:], unsafePath)
	for i := range len(unsafePath) {
		if cpath[i] == '/' {
			cpath[i] = 0
		}
	}
	cpath[len(unsafePath)] = 0

	end := len(strings.TrimRight(unsafePath, "/"))
	trailingSlash := end < len(unsafePath)
	for i := 0; ; {
		j := end
		if k := strings.IndexByte(unsafePath[i:end], '/'); k >= 0 {
			j = i + k
		}
		name, cname := unsafePath[i:j], &cpath[i]
		for i = j; i < end && unsafePath[i] == '/'; i++ {
		}
		last := i >= end
		switch name {
		case ".":
			// Nothing to do: the kernel re-checks search permission only.
		case "..":
			if len(w.stack) == 0 {
				return -1, unix.EXDEV
			}
			unix.Close(w.stack[len(w.stack)-1])
			w.stack = w.stack[:len(w.stack)-1]
		default:
			if last {
				return w.openLast(name, cname, flags, mode, trailingSlash)
			}
			fd, err := w.descend(name, cname)
			if err != nil {
				return -1, err
			}
			w.stack = append(w.stack, fd) // here, not in descend: keeps fdbuf on the stack
			continue
		}
		if last {
			// A final "." or "..": re-open the directory itself.
			return unix.Openat(w.cur(), ".", flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		}
	}
}

// openat is unix.Openat for a name that is already a C string (no
// allocation). It blocks like openat(2) (entersyscall), so a FIFO or a
// slow filesystem does not stall other goroutines.
func openat(dirfd int, cname *byte, flags int, mode uint32) (int, error) {
	r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(cname)),
		uintptr(flags), uintptr(mode), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

type walker struct {
	base    int   // dirfd, or the pinned working directory
	ownBase bool  // base was opened by this walk
	stack   []int // directories opened below base, innermost last
	noXdev  bool
	mnt     mountKey // base's mount, with noXdev
}

func (w *walker) cur() int {
	if len(w.stack) == 0 {
		return w.base
	}
	return w.stack[len(w.stack)-1]
}

func (w *walker) closeAll() {
	for _, fd := range w.stack {
		unix.Close(fd)
	}
	w.stack = w.stack[:0]
	if w.ownBase {
		unix.Close(w.base)
	}
}

// descend opens the intermediate directory name (cname: the same as a C
// string) below cur; the caller pushes it.
func (w *walker) descend(name string, cname *byte) (int, error) {
	parent := w.cur()
	fd, err := openat(parent, cname, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOTDIR {
		// O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a symlink too; the
		// kernel's walk says ELOOP (RESOLVE_NO_SYMLINKS), or EXDEV for a
		// file mounted over with RESOLVE_NO_XDEV.
		if w.noXdev {
			if m, merr := mountOf(parent, name); merr == nil && !sameMount(m, w.mnt) {
				return -1, unix.EXDEV
			}
		}
		if isSymlink(parent, name) {
			return -1, unix.ELOOP
		}
		return -1, err
	}
	if err != nil {
		return -1, err
	}
	if w.noXdev {
		if err := w.checkMount(fd); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func (w *walker) checkMount(fd int) error {
	m, err := mountOf(fd, "")
	if err != nil {
		return err
	}
	if !sameMount(m, w.mnt) {
		return unix.EXDEV
	}
	return nil
}

// openLast opens the final, normal component.
func (w *walker) openLast(name string, cname *byte, flags int, mode uint32, trailingSlash bool) (int, error) {
	parent := w.cur()
	if trailingSlash && flags&unix.O_CREAT != 0 {
		return -1, unix.EISDIR // fs/namei.c open_last_lookups: "trailing slashes?"
	}
	// Would the kernel follow a final symlink (and so fail ELOOP under
	// RESOLVE_NO_SYMLINKS)? Yes without O_NOFOLLOW (O_CREAT|O_EXCL
	// implies it), and always with a trailing slash.
	follow := trailingSlash ||
		(flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL)
	oflags := flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if trailingSlash {
		oflags |= unix.O_DIRECTORY
	}
	if w.noXdev {
		// The kernel fails EXDEV when it steps onto the mount, before
		// any open-time check; and opening first would run O_TRUNC on a
		// file of another mount.
		m, err := mountOf(parent, name)
		if err == nil && !sameMount(m, w.mnt) {
			return -1, unix.EXDEV
		}
	}
	fd, err := openat(parent, cname, oflags, mode)
	if err == unix.ENOTDIR && follow && isSymlink(parent, name) {
		return -1, unix.ELOOP
	}
	if err != nil {
		return -1, err
	}
	if follow && flags&unix.O_PATH != 0 {
		// O_PATH|O_NOFOLLOW opens a symlink itself; the kernel, following
		// it, would have said ELOOP.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, unix.ELOOP
		}
	}
	if w.noXdev {
		if err := w.checkMount(fd); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func isSymlink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// mountKey identifies a mount: by mount ID when the kernel told us, else
// only by the filesystem's st_dev.
type mountKey struct {
	id    uint64
	dev   uint64
	hasID bool
}

func sameMount(a, b mountKey) bool {
	if a.hasID && b.hasID {
		return a.id == b.id
	}
	return a.dev == b.dev
}

// noStatxMntID makes mountOf ignore STATX_MNT_ID, to test the fallbacks.
var noStatxMntID = false

// mountOf returns the mount of name below dirfd (of dirfd itself when name
// is ""), not following a final symlink. Mount ID from statx (Linux 5.8),
// else from /proc/self/fdinfo (Linux 3.15), else only st_dev.
func mountOf(dirfd int, name string) (mountKey, error) {
	var k mountKey
	flags := unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var stx unix.Statx_t
	err := unix.Statx(dirfd, name, flags, unix.STATX_MNT_ID, &stx)
	switch err {
	case nil:
		k.dev = unix.Mkdev(stx.Dev_major, stx.Dev_minor)
		if stx.Mask&unix.STATX_MNT_ID != 0 && !noStatxMntID {
			return mountKey{id: stx.Mnt_id, dev: k.dev, hasID: true}, nil
		}
	case unix.ENOSYS: // Linux < 4.11
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, flags); err != nil {
			return k, err
		}
		k.dev = st.Dev
	default:
		return k, err
	}
	fd := dirfd
	if name != "" {
		// Pin the name to read its fdinfo; O_PATH|O_NOFOLLOW opens
		// anything (a symlink, a device, a FIFO) without side effects.
		var err error
		fd, err = unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return k, nil // st_dev only: the caller's open reports the error
		}
		defer unix.Close(fd)
	}
	if fd >= 0 {
		if id, ok := fdinfoMntID(fd); ok {
			k.id, k.hasID = id, true
		}
	}
	return k, nil
}

func fdinfoMntID(fd int) (uint64, bool) {
	data, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("mnt_id:")); ok {
			id, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return id, err == nil
		}
	}
	return 0, false
}
