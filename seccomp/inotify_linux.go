package seccomp

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The broker's side of the supervisor (Filter.InstallBroker): an
// inotify_add_watch(fd, pathname, mask) notification is answered with a
// watch on the inode the child may read under that name, or with the
// errno of opening it as the child would. In order:
//
//  1. pidfd, credentials (/proc/TID/status) of the notifying thread, the
//     path copied once from its memory (process_vm_readv), then its root
//     or working directory (/proc/TID/root, /proc/TID/cwd: an O_PATH
//     descriptor into the child's mount namespace): everything named by
//     the thread id is taken before
//  2. SECCOMP_IOCTL_NOTIF_ID_VALID, which proves the thread id was not
//     recycled (the thread is still blocked in the call);
//  3. pidfd_getfd for the inotify descriptor (argument 0);
//  4. the broker opens the copied path from the child's root (absolute,
//     RESOLVE_IN_ROOT) or working directory (relative): Landlock decides,
//     on a thread confined by the child's ruleset;
//  5. inotify_add_watch on /proc/self/fd/N of that descriptor, here: the
//     magic link names the opened inode, whatever the path names by now.
//
// The child's later changes to its buffer or to symbolic links cannot
// move the watch: the string is read once and the inode is pinned by the
// open.

// inotifyMaxPath is PATH_MAX: the kernel's getname refuses longer
// strings with ENAMETOOLONG.
const inotifyMaxPath = unix.PathMax

// inotifyAddWatch answers one inotify_add_watch notification: the watch
// descriptor, or the errno.
func inotifyAddWatch(lfd int, req *seccompNotif, b Broker) (int64, unix.Errno) {
	if b == nil {
		return 0, unix.EPERM // cannot happen: the brokered program is installed with a broker only
	}
	tid := int(req.pid)
	pidfd, err := pidfdOf(tid)
	if err != nil {
		return 0, unix.EACCES
	}
	defer unix.Close(pidfd)
	if !sameCredentials(tid) {
		return 0, unix.EACCES
	}
	unsafePath, errno := readString(tid, uintptr(req.args[1]))
	if errno != 0 {
		return 0, errno
	}
	// The child's root for an absolute path, its working directory for
	// a relative one (an O_PATH descriptor into its mount namespace).
	dir, inRoot := "cwd", false
	if strings.HasPrefix(unsafePath, "/") {
		dir, inRoot = "root", true
	}
	dirfd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/"+dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, unix.EACCES
	}
	defer unix.Close(dirfd)
	id := req.id
	if ioctlPtr(lfd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return 0, unix.EACCES // withdrawn: nobody reads this answer
	}
	// inotify_add_watch(int fd, const char *pathname, uint32_t mask).
	ifd, err := unix.PidfdGetfd(pidfd, int(int32(req.args[0])), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return 0, unix.EBADF
		}
		return 0, unix.EACCES
	}
	defer unix.Close(ifd)
	mask := uint32(req.args[2])
	if unsafePath == "" {
		return 0, unix.ENOENT
	}
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if mask&unix.IN_ONLYDIR != 0 {
		flags |= unix.O_DIRECTORY
	}
	if mask&unix.IN_DONT_FOLLOW != 0 {
		flags |= unix.O_NOFOLLOW
	}
	file, err := b.OpenAt(dirfd, unsafePath, flags, inRoot)
	if err != nil {
		return 0, errnoOrEACCES(err)
	}
	defer unix.Close(file)
	// The magic link is followed to the opened inode; IN_DONT_FOLLOW
	// was applied by the open (O_NOFOLLOW) and would stop at the link.
	wd, err := unix.InotifyAddWatch(ifd, "/proc/self/fd/"+strconv.Itoa(file), mask&^unix.IN_DONT_FOLLOW)
	if err != nil {
		return 0, errnoOrEACCES(err)
	}
	return int64(wd), 0
}

// errnoOrEACCES is err's errno, or EACCES.
func errnoOrEACCES(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) && e != 0 {
		return e
	}
	return unix.EACCES
}

// readString copies the NUL-terminated string at addr from thread tid's
// memory, page by page (a string may end just before an unmapped page):
// EFAULT as the kernel answers a bad pointer, ENAMETOOLONG beyond
// PATH_MAX.
func readString(tid int, addr uintptr) (string, unix.Errno) {
	page := uintptr(os.Getpagesize())
	buf := make([]byte, 0, inotifyMaxPath)
	for len(buf) < inotifyMaxPath {
		n := int(page - addr%page)
		n = min(n, inotifyMaxPath-len(buf))
		chunk := buf[len(buf) : len(buf)+n]
		got, err := unix.ProcessVMReadv(tid,
			[]unix.Iovec{{Base: &chunk[0], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: addr, Len: n}}, 0)
		if err != nil || got != n {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(chunk, 0); i >= 0 {
			return string(buf[:len(buf)+i]), 0
		}
		buf = buf[:len(buf)+n]
		addr += uintptr(n)
	}
	return "", unix.ENAMETOOLONG
}

// sameCredentials reports whether thread tid's effective and filesystem
// uid and gid and its supplementary groups are this process's: the
// broker opens with this process's identity (capabilities dropped), so a
// child switched to another user (exec.Cmd.Credential) would be checked
// as the wrong one.
func sameCredentials(tid int) bool {
	want, err := ownCredentials()
	if err != nil {
		return false
	}
	f, err := os.Open("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	status := buf[:n]
	for _, w := range want {
		i := bytes.Index(status, []byte(w.key))
		if i < 0 {
			return false
		}
		line := status[i+len(w.key):]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(string(line))
		switch w.key {
		case "\nUid:", "\nGid:": // real effective saved fs
			if len(f) != 4 || f[1] != w.val || f[3] != w.val {
				return false
			}
		default:
			if strings.Join(f, " ") != w.val {
				return false
			}
		}
	}
	return true
}

type credLine struct{ key, val string }

// ownCredentials is what sameCredentials compares: this process's
// effective uid and gid and its groups (which it never changes).
var ownCredentials = sync.OnceValues(func() ([]credLine, error) {
	groups, err := unix.Getgroups()
	if err != nil {
		return nil, err
	}
	g := make([]string, len(groups))
	for i, v := range groups {
		g[i] = strconv.Itoa(v)
	}
	return []credLine{
		{"\nUid:", strconv.Itoa(os.Geteuid())},
		{"\nGid:", strconv.Itoa(os.Getegid())},
		{"\nGroups:", strings.Join(g, " ")},
	}, nil
})
