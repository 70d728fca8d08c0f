package seccomp

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// unixBrokered reports whether opt's named UNIX sockets (Options.AllowUnix)
// are enforced by the supervisor: Landlock below ABI 9 cannot restrict
// connecting to a pathname UNIX socket, and the broker that resolves the
// child's name needs a Landlock domain of its own (ABI >= 1, as for
// inotify). AllowUnixSockets allows every socket instead.
func unixBrokered(opt Options) bool {
	return len(opt.AllowUnix) > 0 && !opt.AllowUnixSockets &&
		opt.LandlockABI >= 1 && opt.LandlockABI < landlockABIUnixSockets
}

// unixConnectRules: the child may create stream and seqpacket UNIX
// sockets, never datagram ones, and every connect(2) goes to the
// supervisor, which connects a UNIX socket only to a named socket's inode
// (connect_linux.go). A filter cannot read connect's address nor tell
// which socket an fd is, so TCP and netlink connects go to the supervisor
// too (performed on the broker thread, under the child's Landlock rules).
//
// Datagram sockets stay refused because a datagram address is also taken
// by sendto, sendmsg and sendmmsg (sendmsg's msg_name is behind two
// pointers, next to SCM_RIGHTS and SCM_CREDENTIALS control data the
// supervisor could not replay as the child), and brokering every send of
// the child would tax all its socket I/O. A stream socket refuses a send
// address (EISCONN, EOPNOTSUPP: unix_stream_sendmsg), a seqpacket one
// ignores it (unix_seqpacket_sendmsg), so connect is their only way to a
// socket. Abstract addresses are refused by the supervisor: it would
// connect outside the child's Landlock scope.
func unixConnectRules(opt Options) []rule {
	names := make([]string, len(opt.AllowUnix))
	for i, u := range opt.AllowUnix {
		names[i] = u.Path
	}
	named := "{" + strings.Join(names, ", ") + "}"
	return []rule{
		allow("unix-socket", "socket", "domain == AF_UNIX, type&SOCK_TYPE_MASK ∈ {SOCK_STREAM, SOCK_SEQPACKET}",
			fmt.Sprintf("named UNIX sockets (AllowUnix %s): stream and seqpacket sockets reach a socket only through connect(2), which the supervisor checks (unix-connect); Landlock ABI %d < 9 cannot", named, opt.LandlockABI),
			in(0, 0, unix.AF_UNIX), in(1, sockTypeMask, unix.SOCK_STREAM, unix.SOCK_SEQPACKET)),
		deny("unix-socket-dgram", "socket", "domain == AF_UNIX, type&SOCK_TYPE_MASK ∉ {SOCK_STREAM, SOCK_SEQPACKET}", unix.EPERM,
			"a datagram UNIX socket reaches any pathname socket through sendto/sendmsg addresses, which a filter cannot read and the supervisor does not broker",
			in(0, 0, unix.AF_UNIX)),
		{
			Rule: Rule{Name: "unix-connect", Syscall: "connect", Action: actNotify,
				Args:   "named sockets " + named,
				Reason: "Landlock ABI < 9 does not mediate connecting to pathname UNIX sockets: the supervisor copies the address once, opens the name as the child would (its root or working directory, symbolic links followed below its root; a named path also in landjail's view) and connects the child's socket to that opened inode (/proc/self/fd/N) only when it is a named socket (device and inode), else EACCES; abstract addresses EPERM; other families are connected on the broker thread under the child's Landlock rules; where no broker runs (execve in place, the non-root user-namespace stage) UNIX sockets are refused (EPERM) instead"},
			entries: []entry{{syscall: "connect", ret: bpfprog.UserNotif}},
		},
	}
}
