package cliopts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// flagAllowUnix is --allow-unix PATH (repeatable; allow_unix in a
// --config file): a host pathname UNIX socket the command may connect
// to, and no other.
const flagAllowUnix = "allow-unix"

// allowUnixFlag is --allow-unix's definition (ChildFlags).
func allowUnixFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: flagAllowUnix, Usage: "let the command connect to the UNIX socket at `PATH` and no other (repeatable; an ssh-agent, a database, a build daemon: the socket is a capability, docker.sock is root). Below Landlock ABI 9 landjail brokers every connect(2), so the run is supervised; not with --user; from a non-root caller's user-namespace stage every UNIX socket is refused (said at start; --no-namespaces brokers). Stream and seqpacket sockets only"}
}

// ErrNotSocket: an --allow-unix path is not a UNIX socket (or a datagram
// one, which --allow-unix does not broker).
var ErrNotSocket = errors.New("not a stream or seqpacket UNIX socket")

// NamedUnixSockets resolves --allow-unix: each path, absolute and with
// symbolic links resolved, with the identity (device, inode) of the socket
// it names now. Errors wrap *fs.PathError: a path that does not exist,
// or ErrNotSocket (not a socket, or a datagram socket).
func (o *Options) NamedUnixSockets() ([]seccomp.UnixSocket, error) {
	var out []seccomp.UnixSocket
	for _, p := range o.AllowUnix {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Stat(abs, &st); err != nil {
			return nil, &os.PathError{Op: "stat", Path: p, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK || isDatagram(abs) {
			return nil, &os.PathError{Op: "--" + flagAllowUnix, Path: p, Err: ErrNotSocket}
		}
		out = append(out, seccomp.UnixSocket{Path: abs, Dev: st.Dev, Ino: st.Ino})
	}
	return out, nil
}

// isDatagram reports whether the socket at path is a datagram one: a
// datagram socket connects to it, without sending anything (to a stream
// or seqpacket socket the connect fails with EPROTOTYPE; to a socket
// nobody serves, with ECONNREFUSED).
func isDatagram(path string) bool {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: path}) == nil
}

// validateAllowUnix checks --allow-unix: every path must name a stream
// or seqpacket socket (a usage error otherwise), and the command must run
// as landjail's own user (the broker connects with landjail's identity,
// which the daemon sees).
func (o *Options) validateAllowUnix() error {
	if len(o.AllowUnix) == 0 {
		return nil
	}
	if _, err := o.NamedUnixSockets(); err != nil {
		return fmt.Errorf("invalid --%s: %w", flagAllowUnix, err)
	}
	if o.User != "" {
		return fmt.Errorf("--%s with --user: landjail connects for the command with its own identity, which the daemon sees (SO_PEERCRED): drop --user, or run landjail as that user", flagAllowUnix)
	}
	return nil
}

// allowUnixRules are the Landlock rules granting connect to the named
// sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) where the kernel has the
// right (ABI 9): there Landlock, not the seccomp broker, enforces
// --allow-unix. None below ABI 9. Not testable on the ABI 7 kernels
// landjail is tested on.
func (o *Options) allowUnixRules() []landlock.Rule {
	if len(o.AllowUnix) == 0 || landlock.ABI() < 9 {
		return nil
	}
	socks, err := o.NamedUnixSockets()
	if err != nil {
		return nil // validate refused it already
	}
	var rules []landlock.Rule
	for _, s := range socks {
		rules = append(rules, landlock.Rule{Path: s.Path, Access: golandlock.AccessFSSet(ll.AccessFSResolveUnix), Source: "--" + flagAllowUnix})
	}
	return rules
}

// UnixEnforcement is how --allow-unix is enforced for a command.
type UnixEnforcement uint8

const (
	// UnixNone: no --allow-unix.
	UnixNone UnixEnforcement = iota
	// UnixLandlock: Landlock ABI >= 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
	UnixLandlock
	// UnixBroker: the seccomp broker connects for the command.
	UnixBroker
	// UnixRefused: nothing can broker, so every UNIX socket is refused,
	// the named ones too (fail closed).
	UnixRefused
	// UnixNotEnforced: every reachable socket is open (--no-seccomp
	// below ABI 9, --allow-unix-sockets).
	UnixNotEnforced
)

// AllowUnixEnforcement says how --allow-unix is enforced for a command
// confined by rs, with the seccomp layer or without it (seccompOn), and
// in words for --print-rules, the report and warnings (UnixNone, "" without
// --allow-unix): by Landlock (ABI >= 9), by landjail's seccomp broker, or
// not at all, and then whether UNIX sockets are refused (fail closed) or
// every reachable socket is open.
func (o *Options) AllowUnixEnforcement(rs *landlock.Ruleset, seccompOn bool) (UnixEnforcement, string) {
	if len(o.AllowUnix) == 0 {
		return UnixNone, ""
	}
	abi := landlock.ABI()
	switch {
	case o.AllowUnixSockets && abi < 9:
		return UnixNotEnforced, "NOT enforced: --allow-unix-sockets allows every UNIX socket"
	case rs == nil || !rs.Enforced():
		if !seccompOn {
			return UnixNotEnforced, "NOT enforced: no Landlock and no seccomp layer: every reachable socket"
		}
		return UnixRefused, "refused: without Landlock no broker can be confined like the command, so UNIX sockets are refused (EPERM), the named ones too"
	case abi >= 9:
		return UnixLandlock, fmt.Sprintf("landlock (LANDLOCK_ACCESS_FS_RESOLVE_UNIX, ABI %d): only the named sockets", abi)
	case !seccompOn:
		return UnixNotEnforced, fmt.Sprintf("NOT enforced: no seccomp layer, and Landlock ABI %d < 9 does not mediate connect: every reachable socket", abi)
	case rs.UserNamespace():
		return UnixRefused, "refused: the command is started by the user-namespace stage (a non-root caller's namespace layer), where no broker runs: UNIX sockets are refused (EPERM), the named ones too (--no-namespaces makes the run brokered)"
	}
	return UnixBroker, fmt.Sprintf("seccomp broker: landjail connects for the command (Landlock ABI %d < 9 cannot), only to the named sockets' inodes; EACCES for any other, datagram and abstract UNIX sockets refused", abi)
}
