package seccomp

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/threadcaps"
)

// The supervisor's side of the unix-connect rule (Options.AllowUnix): a
// connect(fd, addr, addrlen) notification is answered by connecting the
// child's socket itself, never with SECCOMP_USER_NOTIF_FLAG_CONTINUE (the
// child could change the address or dup2 another socket onto fd between
// the check and the kernel's connect). In order:
//
//  1. pidfd of the notifying thread, the address copied once from its
//     memory (process_vm_readv), and for a pathname address its
//     credentials (/proc/TID/status) and its root or working directory
//     (/proc/TID/root, /proc/TID/cwd): everything named by the thread id
//     is taken before
//  2. SECCOMP_IOCTL_NOTIF_ID_VALID (the thread id was not recycled);
//  3. pidfd_getfd for the socket (argument 0), and its family
//     (SO_DOMAIN, on the duplicate);
//  4. not AF_UNIX (TCP, netlink): connect on the broker thread, whose
//     Landlock domain has the child's rules (its TCP ports);
//  5. AF_UNIX: an abstract address is refused (EPERM: the supervisor's
//     connect would not be under the child's Landlock scope); a pathname
//     is opened O_PATH by the broker as the child's own lookup would go
//     (absolute names below the child's root with RESOLVE_IN_ROOT,
//     relative ones from its working directory, symbolic links
//     followed), and, when the name is one the caller listed, also in
//     landjail's own view (a socket the namespace view hides, such as
//     one in the host's /tmp); the opened inode must be a socket whose
//     (st_dev, st_ino) is a named one, else EACCES;
//  6. the child's credentials must be this process's (the peer sees the
//     connecting task's: SO_PEERCRED), then connect(socket,
//     "/proc/self/fd/N") of that O_PATH descriptor: the magic link names
//     the checked inode, whatever the path names by now. That connect
//     runs on a goroutine of its own, which answers the notification
//     (pendingConnect): it waits as long as the daemon does not accept,
//     and must not hold the supervisor meanwhile.

// sockaddrStorage is sizeof(struct sockaddr_storage): the kernel refuses
// a longer address with EINVAL (move_addr_to_kernel).
const sockaddrStorage = 128

// sunPathOffset is offsetof(struct sockaddr_un, sun_path), and
// sockaddrUnLen sizeof(struct sockaddr_un) (unix_validate_addr).
const (
	sunPathOffset = 2
	sockaddrUnLen = 110
)

// connectNotif decides one connect notification: the errno to answer,
// or (for a UNIX socket to a named one) the connect to make, which
// answers itself (pendingConnect.start).
func (f *Filter) connectNotif(lfd int, req *seccompNotif, b Broker) (unix.Errno, *pendingConnect) {
	if b == nil {
		return unix.EPERM, nil // Explain without a broker (the brokered program needs one): fail closed
	}
	tid := int(req.pid)
	pidfd, err := pidfdOf(tid)
	if err != nil {
		return unix.EACCES, nil
	}
	defer unix.Close(pidfd)
	// connect(int fd, struct sockaddr *addr, int addrlen).
	alen := int32(req.args[2])
	if alen < 0 || alen > sockaddrStorage {
		return unix.EINVAL, nil
	}
	sa := make([]byte, alen)
	if alen > 0 {
		got, err := unix.ProcessVMReadv(tid, []unix.Iovec{{Base: &sa[0], Len: uint64(alen)}},
			[]unix.RemoteIovec{{Base: uintptr(req.args[1]), Len: int(alen)}}, 0)
		if err != nil || got != int(alen) {
			return unix.EFAULT, nil
		}
	}
	unsafePath, pathErr := sunPath(sa)
	dirfd, sameCreds := -1, false
	if pathErr == 0 {
		// Read by thread id, so before NOTIF_ID_VALID proves it.
		sameCreds = sameCredentials(tid)
		dir := "cwd"
		if strings.HasPrefix(unsafePath, "/") {
			dir = "root"
		}
		dirfd, err = unix.Open("/proc/"+strconv.Itoa(tid)+"/"+dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return unix.EACCES, nil
		}
		defer unix.Close(dirfd)
	}
	id := req.id
	if ioctlPtr(lfd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return unix.EACCES, nil // withdrawn: nobody reads this answer
	}
	sock, err := unix.PidfdGetfd(pidfd, int(int32(req.args[0])), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return unix.EBADF, nil
		}
		return unix.EACCES, nil
	}
	defer unix.Close(sock)
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		if errors.Is(err, unix.ENOTSOCK) {
			return unix.ENOTSOCK, nil
		}
		return unix.EACCES, nil
	}
	if domain != unix.AF_UNIX {
		return connectErrno(b.Connect(sock, sa)), nil
	}
	if pathErr != 0 {
		return pathErr, nil
	}
	target, errno := f.unixTarget(dirfd, unsafePath, b)
	if errno != 0 {
		return errno, nil
	}
	defer unix.Close(target)
	if !sameCreds {
		return unix.EACCES, nil
	}
	// The connect itself may wait (a blocking socket, the daemon's
	// backlog full) for as long as the daemon does not accept: it runs
	// apart (pendingConnect) so that it cannot hold the supervisor.
	p, err := newPendingConnect(lfd, sock, target)
	if err != nil {
		return unix.EACCES, nil
	}
	return 0, p
}

// sunPath is the pathname of a struct sockaddr_un as the kernel reads
// it (unix_validate_addr, unix_mkname_bsd: up to the first NUL within
// addrlen), or the errno connect answers: EINVAL for a short, long or
// non-AF_UNIX address, EPERM for an abstract one (refused).
func sunPath(sa []byte) (string, unix.Errno) {
	if len(sa) <= sunPathOffset || len(sa) > sockaddrUnLen {
		return "", unix.EINVAL
	}
	if *(*uint16)(unsafe.Pointer(&sa[0])) != unix.AF_UNIX {
		return "", unix.EINVAL
	}
	p := sa[sunPathOffset:]
	if p[0] == 0 {
		return "", unix.EPERM
	}
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p), 0
}

// unixTarget opens (O_PATH) the socket unsafePath names for the child
// and returns the descriptor when it is a named socket: first as the
// child would resolve it (b, from dirfd), then, for a name the caller
// listed, in this process's view. EACCES for any other inode; the
// lookup's errno (ENOENT) when neither finds anything.
func (f *Filter) unixTarget(dirfd int, unsafePath string, b Broker) (int, unix.Errno) {
	fd, err := b.OpenAt(dirfd, unsafePath, unix.O_PATH|unix.O_CLOEXEC, strings.HasPrefix(unsafePath, "/"))
	errno := unix.EACCES
	if err == nil {
		if f.named(fd) {
			return fd, 0
		}
		unix.Close(fd)
	} else if e := connectErrno(err); e == unix.ENOENT || e == unix.ENOTDIR {
		errno = e
	}
	for _, p := range f.allowUnix {
		if p != unsafePath {
			continue
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		if f.named(fd) {
			return fd, 0
		}
		unix.Close(fd)
		break
	}
	return -1, errno
}

// named reports whether fd is a socket the caller listed.
func (f *Filter) named(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false
	}
	_, ok := f.allowUnix[devIno{st.Dev, st.Ino}]
	return ok
}

// connectErrno is err's errno, 0 for nil, EACCES for an error without one.
func connectErrno(err error) unix.Errno {
	if err == nil {
		return 0
	}
	return errnoOrEACCES(err)
}

// maxPendingConnects bounds the brokered UNIX connects of one Filter
// waiting at once: each holds an OS thread of this process for as long as
// its daemon does not accept. Beyond it a connect is answered EAGAIN, as
// a non-blocking connect to a full backlog is.
const maxPendingConnects = 64

// pendingConnect is a checked UNIX connect waiting to be made: duplicates
// of the listener, the child's socket and the O_PATH descriptor of the
// named socket, owned until run closes them.
type pendingConnect struct {
	lfd, sock, target int
}

// newPendingConnect duplicates lfd, sock and target for a pendingConnect.
func newPendingConnect(lfd, sock, target int) (*pendingConnect, error) {
	p := &pendingConnect{lfd: -1, sock: -1, target: -1}
	for _, d := range []struct {
		from int
		to   *int
	}{{lfd, &p.lfd}, {sock, &p.sock}, {target, &p.target}} {
		fd, err := unix.FcntlInt(uintptr(d.from), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			p.close()
			return nil, err
		}
		*d.to = fd
	}
	return p, nil
}

func (p *pendingConnect) close() {
	for _, fd := range []int{p.lfd, p.sock, p.target} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// start makes the connect on a goroutine of its own that answers
// notification id with its result (a withdrawn notification, the child
// killed meanwhile, makes the answer fail with ENOENT: nothing more), or
// answers EAGAIN at once when maxPendingConnects are already waiting.
func (p *pendingConnect) start(id uint64, slots chan struct{}) {
	send := func(errno unix.Errno) {
		resp := seccompNotifResp{id: id}
		if errno != 0 {
			resp.error = -int32(errno)
		}
		ioctlPtr(p.lfd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		p.close()
	}
	select {
	case slots <- struct{}{}:
	default:
		send(unix.EAGAIN)
		return
	}
	go func() {
		defer func() { <-slots }()
		// On a thread with no capability: the connect's permission
		// check (write on the socket, search on nothing: the path is
		// the descriptor's magic link) is the command's, which holds
		// none (a root supervisor connected to another user's 0600
		// socket its command is refused: TestAllowUnixMeetsModeBits).
		send(connectErrno(threadcaps.Run(nil, func() error {
			return unix.Connect(p.sock, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(p.target)})
		})))
	}()
}
