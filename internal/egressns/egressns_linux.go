package egressns

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// loopbackIndex is the interface index of "lo" in every network namespace
// (LOOPBACK_IFINDEX, include/net/net_namespace.h, fixed since Linux 3.19).
const loopbackIndex = 1

// Setup, on a thread in the command's network namespace with loopback up
// and CAP_NET_ADMIN and CAP_NET_BIND_SERVICE (root, before confinement),
// adds a "local" route for allowlist.SyntheticPrefix on loopback (as
// `ip route add local 198.18.0.0/15 dev lo`: every address of the range
// is this namespace's own, so a listener on 0.0.0.0 accepts connections
// to any of them), binds a UDP socket to allowlist.DNSAddr and a TCP
// listener on 0.0.0.0 for each port. The sockets stay in that namespace
// whatever process later serves them. Errors are the syscalls' (an
// *os.SyscallError), for netlink's answer too; on error nothing is left
// open. It does not block (beyond one netlink round trip) and touches no
// file system.
func Setup(ports []uint16) (_ *Sockets, err error) {
	if err := addLocalRoute(); err != nil {
		return nil, err
	}
	s := &Sockets{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	dns := allowlist.DNSAddr.Addr().As4()
	if s.DNS, err = bound(unix.SOCK_DGRAM, dns, allowlist.DNSAddr.Port(), "dns"); err != nil {
		return nil, err
	}
	for _, p := range ports {
		f, err := bound(unix.SOCK_STREAM, [4]byte{}, p, fmt.Sprintf("tcp-%d", p))
		if err != nil {
			return nil, err
		}
		s.TCP = append(s.TCP, f)
		if err := unix.Listen(int(f.Fd()), unix.SOMAXCONN); err != nil {
			return nil, os.NewSyscallError("listen", err)
		}
	}
	return s, nil
}

// bound returns an IPv4 socket of type typ bound to addr:port
// (SO_REUSEADDR for TCP, like Go's listeners).
func bound(typ int, addr [4]byte, port uint16, name string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if typ == unix.SOCK_STREAM {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			unix.Close(fd)
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: addr, Port: int(port)}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", fmt.Errorf("%s port %d: %w", name, port, err))
	}
	return os.NewFile(uintptr(fd), "egress-"+name), nil
}

// addLocalRoute sends RTM_NEWROUTE for allowlist.SyntheticPrefix, type
// RTN_LOCAL in table local on loopback, and waits for the kernel's
// acknowledgement (rtnetlink(7)).
func addLocalRoute() error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return os.NewSyscallError("socket(AF_NETLINK)", err)
	}
	defer unix.Close(fd)
	pfx := allowlist.SyntheticPrefix
	dst := pfx.Addr().As4()
	msg := make([]byte, 0, unix.NLMSG_HDRLEN+unix.SizeofRtMsg+16)
	msg = binary.NativeEndian.AppendUint32(msg, 0) // length, set below
	msg = binary.NativeEndian.AppendUint16(msg, unix.RTM_NEWROUTE)
	msg = binary.NativeEndian.AppendUint16(msg, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	msg = binary.NativeEndian.AppendUint32(msg, 1)          // sequence
	msg = binary.NativeEndian.AppendUint32(msg, 0)          // port id: the kernel's
	msg = append(msg, unix.AF_INET, byte(pfx.Bits()), 0, 0, // family, dst_len, src_len, tos
		unix.RT_TABLE_LOCAL, unix.RTPROT_BOOT, unix.RT_SCOPE_HOST, unix.RTN_LOCAL)
	msg = binary.NativeEndian.AppendUint32(msg, 0) // rtm_flags
	msg = binary.NativeEndian.AppendUint16(msg, 8)
	msg = binary.NativeEndian.AppendUint16(msg, unix.RTA_DST)
	msg = append(msg, dst[:]...)
	msg = binary.NativeEndian.AppendUint16(msg, 8)
	msg = binary.NativeEndian.AppendUint16(msg, unix.RTA_OIF)
	msg = binary.NativeEndian.AppendUint32(msg, loopbackIndex)
	binary.NativeEndian.PutUint32(msg, uint32(len(msg)))
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return os.NewSyscallError("sendto(RTM_NEWROUTE)", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return os.NewSyscallError("recvfrom(RTM_NEWROUTE)", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return os.NewSyscallError("RTM_NEWROUTE", err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
			if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
				return os.NewSyscallError("RTM_NEWROUTE "+pfx.String(), unix.Errno(-e))
			}
			return nil
		}
	}
	return os.NewSyscallError("RTM_NEWROUTE", unix.EPROTO)
}
