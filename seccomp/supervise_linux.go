package seccomp

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/cpushare"
)

// The supervisor answers the listen(2) calls that a Supervised filter hands
// to user space (SECCOMP_RET_USER_NOTIF; seccomp_unotify(2)). One
// goroutine per installed filter instance waits on the instance's listener
// descriptor through the Go netpoller (no thread is blocked while idle) and
// exits, closing the descriptor, when the listener reports EPOLLHUP: every
// task using the instance (the thread that installed it and all the
// children forked from it) has exited and been reaped. A pooled spawner
// thread that is recreated installs a new instance; the old instance's
// supervisor lives exactly as long as the old thread's children.
//
// For each notification it takes the socket itself, never the descriptor
// number: pidfd_open on the notifying thread, SECCOMP_IOCTL_NOTIF_ID_VALID
// (the thread id was not recycled in between: the notification is still
// pending, so the thread is still blocked in listen), pidfd_getfd (Linux
// 5.6) for a duplicate of the socket, checks on the duplicate, then
// listen(duplicate, backlog) in this process and that result as the answer.
// It never answers SECCOMP_USER_NOTIF_FLAG_CONTINUE: the child could dup2
// another socket onto the descriptor number between the check and the
// kernel's listen. Anything it cannot check (pidfd_getfd refused, for
// example because the child made itself non-dumpable) is answered EACCES.

// seccompNotif is struct seccomp_notif (include/uapi/linux/seccomp.h).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// pidfdThread is PIDFD_THREAD (include/uapi/linux/pidfd.h, Linux 6.9): a
// pidfd for a thread that is not a thread-group leader.
const pidfdThread = unix.O_EXCL

// liveSupervisors counts running supervisor goroutines (and so open
// listener descriptors); tests read it.
var liveSupervisors atomic.Int64

// startSupervisor serves listener fd (owned from now on) for f.
func startSupervisor(fd int, f *Filter, b Broker) error {
	closeBroker := func() {
		if b != nil {
			b.Close()
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		closeBroker()
		unix.Close(fd)
		return fmt.Errorf("seccomp: supervisor: %w", err)
	}
	file := os.NewFile(uintptr(fd), "seccomp-notify")
	rc, err := file.SyscallConn()
	if err != nil {
		closeBroker()
		file.Close()
		return fmt.Errorf("seccomp: supervisor: %w", err)
	}
	liveSupervisors.Add(1)
	go func() {
		defer liveSupervisors.Add(-1)
		defer closeBroker()
		defer file.Close()
		// Read calls the function again each time the netpoller sees
		// the descriptor ready; returning true ends the supervisor. If
		// the descriptor cannot be polled, Read fails at once and the
		// descriptor is closed: listen then fails with ENOSYS.
		th := cpushare.New(f.supervisorCPU)
		rc.Read(func(fd uintptr) bool { return serve(int(fd), f, b, th) })
	}()
	return nil
}

// serve answers every pending notification on listener fd and reports
// whether the supervisor is done (no task uses the filter any more, or the
// listener failed).
func serve(fd int, f *Filter, b Broker, th *cpushare.Share) bool {
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return true
		case n == 0:
			return false // wait for the netpoller
		case pfd[0].Revents&unix.POLLIN != 0:
			// Filter.LimitSupervisorCPU: the next answer waits.
			th.Do(func() { answer(fd, f, b) }, time.Sleep)
		case pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
			return true
		default:
			return false
		}
	}
}

// answer receives one notification and sends its answer. A notification
// withdrawn in between (the thread was killed) makes RECV or SEND fail
// with ENOENT, which needs nothing more.
func answer(fd int, f *Filter, b Broker) {
	var req seccompNotif
	if err := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
		return
	}
	resp := seccompNotifResp{id: req.id}
	if f.explain && f.explainAnswer(&req, &resp, b) {
		ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return
	}
	var errno unix.Errno
	switch req.nr {
	case unix.SYS_INOTIFY_ADD_WATCH:
		if b == nil {
			errno = unix.EPERM // Explain without a broker: as the plain program
			break
		}
		resp.val, errno = inotifyAddWatch(fd, &req, b)
	case unix.SYS_CONNECT:
		var p *pendingConnect
		if errno, p = f.connectNotif(fd, &req, b); p != nil {
			p.start(req.id, f.connects) // answers
			return
		}
	default:
		errno = f.listen(fd, &req)
	}
	if errno != 0 {
		resp.error = -int32(errno)
	}
	ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// listen decides a listen(2) notification and returns the errno to answer
// (0 for success, after listening on the child's socket).
func (f *Filter) listen(fd int, req *seccompNotif) unix.Errno {
	if req.nr != unix.SYS_LISTEN {
		return unix.EPERM // cannot happen: only listen is sent here
	}
	pidfd, err := pidfdOf(int(req.pid))
	if err != nil {
		return unix.EACCES
	}
	defer unix.Close(pidfd)
	id := req.id
	if ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return unix.EACCES // withdrawn: nobody reads this answer
	}
	// listen(int sockfd, int backlog): the kernel reads both as int.
	sock, err := unix.PidfdGetfd(pidfd, int(int32(req.args[0])), 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return unix.EBADF // as listen on a closed descriptor
		}
		return unix.EACCES
	}
	defer unix.Close(sock)
	if errno := f.mayListen(sock); errno != 0 {
		return errno
	}
	if err := unix.Listen(sock, int(int32(req.args[1]))); err != nil {
		var e unix.Errno
		if errors.As(err, &e) {
			return e
		}
		return unix.EACCES
	}
	return 0
}

// mayListen checks the socket sock (a duplicate of the child's): a UNIX
// socket may listen (Landlock governs its name: LANDLOCK_ACCESS_FS_MAKE_SOCK
// for a pathname, the ABI 6 scope for an abstract one; the kernel refuses
// an unbound one with EINVAL), a TCP socket only when bound to a granted
// port; anything else gets EACCES, as Landlock answers a denied bind.
func (f *Filter) mayListen(sock int) unix.Errno {
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		if errors.Is(err, unix.ENOTSOCK) {
			return unix.ENOTSOCK // as listen on a file
		}
		return unix.EACCES
	}
	switch domain {
	case unix.AF_UNIX:
		return f.mayListenUnix(sock)
	case unix.AF_INET, unix.AF_INET6:
	default:
		return unix.EACCES
	}
	typ, err1 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err2 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err1 != nil || err2 != nil || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		return unix.EACCES
	}
	if f.anyPort {
		return 0
	}
	sa, err := unix.Getsockname(sock)
	if err != nil {
		return unix.EACCES
	}
	var port int
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		port = sa.Port
	case *unix.SockaddrInet6:
		port = sa.Port // IPv4-mapped addresses included
	}
	// Port 0: never bound, listen would autobind an ephemeral port.
	if port == 0 || !f.bindTCP[uint16(port)] {
		return unix.EACCES
	}
	return 0
}

// mayListenUnix checks a UNIX socket: with named sockets only
// (Options.AllowUnix) one bound to an abstract name gets EACCES. Landlock's
// ABI 6 scope refuses connects out of the domain to abstract names, not
// binds, and under --no-namespaces the name is the host network
// namespace's: the command could squat a well-known one (an X11 display's
// @/tmp/.X11-unix/X1) and be what a host client talks to (red team round
// 17, R17b-4). A pathname socket's name is Landlock's to grant
// (LANDLOCK_ACCESS_FS_MAKE_SOCK); without AllowUnix the socket family is
// either refused or every UNIX socket allowed (AllowUnixSockets).
func (f *Filter) mayListenUnix(sock int) unix.Errno {
	if f.allowUnix == nil {
		return 0
	}
	sa, err := unix.Getsockname(sock)
	if err != nil {
		return unix.EACCES
	}
	if un, ok := sa.(*unix.SockaddrUnix); !ok || un.Name == "" || un.Name[0] == '@' {
		return unix.EACCES
	}
	return 0
}

// pidfdOf opens a pidfd for thread tid; the caller checks afterwards
// that the notification is still pending.
func pidfdOf(tid int) (int, error) {
	pidfd, err := unix.PidfdOpen(tid, pidfdThread)
	if errors.Is(err, unix.EINVAL) {
		// Linux < 6.9 has no PIDFD_THREAD: a leader's pid only.
		pidfd, err = pidfdOfThreadGroup(tid)
	}
	return pidfd, err
}

// pidfdOfThreadGroup opens a pidfd for the thread group of thread tid
// (from /proc/TID/status), for kernels without PIDFD_THREAD. The caller
// checks afterwards that the notification is still pending, so tid was not
// recycled.
func pidfdOfThreadGroup(tid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return -1, err
	}
	var tgid int
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "Tgid:\t%d", &tgid); err == nil {
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, fmt.Errorf("seccomp: no Tgid in /proc/%d/status", tid)
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}
