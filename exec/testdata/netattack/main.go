// Command netattack is the child side of exec's tests of the network routes
// around Landlock. One attack per invocation; exit status 0 if the
// syscalls succeeded, 1 (with the error on stderr) if one was refused. The
// test decides from what reached its own listener, not from the status.
//
//	netattack tfo-sendto HOST:PORT    sendto(MSG_FASTOPEN) on a fresh TCP socket
//	netattack tfo-sendmsg HOST:PORT   sendmsg(MSG_FASTOPEN)
//	netattack tfo-sendmmsg HOST:PORT  sendmmsg(MSG_FASTOPEN)
//	netattack tfo-connect HOST:PORT   TCP_FASTOPEN_CONNECT, connect, write
//	netattack listen 4|6 [PORT]       listen (after bind to loopback:PORT if
//	                                  given), print "port N", accept one
//	                                  connection within 5 s, print "accepted"
//	netattack listen-unix PATH        bind and listen on a pathname UNIX socket
//	netattack dgrampair PATH TYPE     socketpair(AF_UNIX, TYPE: dgram, raw,
//	                                  stream, seqpacket), then sendto PATH
//	netattack dgrampair-connect PATH TYPE  same, connect PATH then write
//	netattack sockdiag PORT           NETLINK_SOCK_DIAG dump of listening TCP
//	                                  sockets: succeeds if PORT is among them
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: netattack ACTION ARG...")
		os.Exit(2)
	}
	var err error
	switch a := os.Args[2:]; os.Args[1] {
	case "tfo-sendto", "tfo-sendmsg", "tfo-sendmmsg", "tfo-connect":
		err = fastOpen(os.Args[1], a[0])
	case "listen":
		port := 0
		if len(a) > 1 {
			port, _ = strconv.Atoi(a[1])
		}
		err = listen(a[0], port, len(a) > 1)
	case "listen-unix":
		err = listenUnix(a[0])
	case "dgrampair", "dgrampair-connect":
		err = dgramPair(a[0], a[1], os.Args[1] == "dgrampair-connect")
	case "sockdiag":
		err = sockDiag(a[0])
	default:
		err = fmt.Errorf("unknown action %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func sockaddr(hostport string) (unix.Sockaddr, int, error) {
	ap, err := net.ResolveTCPAddr("tcp", hostport)
	if err != nil {
		return nil, 0, err
	}
	if ip4 := ap.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ap.Port}
		copy(sa.Addr[:], ip4)
		return sa, unix.AF_INET, nil
	}
	sa := &unix.SockaddrInet6{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To16())
	return sa, unix.AF_INET6, nil
}

func fastOpen(how, hostport string) error {
	sa, family, err := sockaddr(hostport)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	data := []byte("tfo")
	switch how {
	case "tfo-sendto":
		err = unix.Sendto(fd, data, unix.MSG_FASTOPEN, sa)
	case "tfo-sendmsg":
		_, err = unix.SendmsgN(fd, data, nil, sa, unix.MSG_FASTOPEN)
	case "tfo-sendmmsg":
		err = sendmmsg(fd, data, hostport)
	case "tfo-connect":
		if err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, 1); err != nil {
			return fmt.Errorf("setsockopt(TCP_FASTOPEN_CONNECT): %w", err)
		}
		if err = unix.Connect(fd, sa); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		_, err = unix.Write(fd, data)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", how, err)
	}
	return nil
}

// sendmmsg sends data in one message with MSG_FASTOPEN (x/sys/unix has no
// wrapper): struct mmsghdr is a msghdr and an unsigned int.
func sendmmsg(fd int, data []byte, hostport string) error {
	ap, err := net.ResolveTCPAddr("tcp", hostport)
	if err != nil {
		return err
	}
	var name []byte
	if ip4 := ap.IP.To4(); ip4 != nil {
		var rsa unix.RawSockaddrInet4
		rsa.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&rsa.Port))[:], uint16(ap.Port))
		copy(rsa.Addr[:], ip4)
		name = (*[unix.SizeofSockaddrInet4]byte)(unsafe.Pointer(&rsa))[:]
	} else {
		var rsa unix.RawSockaddrInet6
		rsa.Family = unix.AF_INET6
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&rsa.Port))[:], uint16(ap.Port))
		copy(rsa.Addr[:], ap.IP.To16())
		name = (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(&rsa))[:]
	}
	iov := unix.Iovec{Base: &data[0]}
	iov.SetLen(len(data))
	var msgs [1]struct {
		hdr unix.Msghdr
		n   uint32
	}
	msgs[0].hdr.Name = &name[0]
	msgs[0].hdr.Namelen = uint32(len(name))
	msgs[0].hdr.Iov = &iov
	msgs[0].hdr.SetIovlen(1)
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), 1, unix.MSG_FASTOPEN, 0, 0)
	if e != 0 {
		return e
	}
	if n != 1 {
		return fmt.Errorf("sendmmsg sent %d messages", n)
	}
	return nil
}

func listen(family string, port int, bind bool) error {
	dom := unix.AF_INET
	if family == "6" {
		dom = unix.AF_INET6
	}
	fd, err := unix.Socket(dom, unix.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if bind {
		// The previous run's accepted connection may linger in
		// TIME_WAIT on this port.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return err
		}
		var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
		if dom == unix.AF_INET6 {
			sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
		}
		if err := unix.Bind(fd, sa); err != nil {
			return fmt.Errorf("bind: %w", err)
		}
	}
	if err := unix.Listen(fd, 4); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		port = sa.Port
	case *unix.SockaddrInet6:
		port = sa.Port
	}
	fmt.Printf("port %d\n", port)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(pfd, 5000); err != nil || n == 0 {
		return fmt.Errorf("no connection within 5 s (%v)", err)
	}
	c, _, err := unix.Accept(fd)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	unix.Close(c)
	fmt.Println("accepted")
	return nil
}

func listenUnix(path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, 4); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return nil
}

func dgramPair(path, typ string, connect bool) error {
	t := map[string]int{"dgram": unix.SOCK_DGRAM, "raw": unix.SOCK_RAW, "stream": unix.SOCK_STREAM, "seqpacket": unix.SOCK_SEQPACKET}[typ]
	fds, err := unix.Socketpair(unix.AF_UNIX, t, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	to := &unix.SockaddrUnix{Name: path}
	if connect {
		if err := unix.Connect(fds[0], to); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		_, err = unix.Write(fds[0], []byte("pair"))
	} else {
		err = unix.Sendto(fds[0], []byte("pair"), unix.MSG_DONTWAIT, to)
	}
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// sockDiag dumps listening IPv4 and IPv6 TCP sockets through
// NETLINK_SOCK_DIAG (inet_diag, include/uapi/linux/inet_diag.h), as ss
// does, and looks for port.
func sockDiag(portArg string) error {
	want, err := strconv.Atoi(portArg)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("socket(NETLINK_SOCK_DIAG): %w", err)
	}
	defer unix.Close(fd)
	for _, family := range []byte{unix.AF_INET, unix.AF_INET6} {
		// nlmsghdr (16) + inet_diag_req_v2 (56).
		req := make([]byte, 16+56)
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
		binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		req[16] = family
		req[17] = unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(req[20:], 1<<10) // TCP_LISTEN
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return fmt.Errorf("sendto: %w", err)
		}
		buf := make([]byte, 1<<16)
	recv:
		for {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				return fmt.Errorf("recvfrom: %w", err)
			}
			msgs, err := syscall.ParseNetlinkMessage(buf[:n])
			if err != nil {
				return err
			}
			for _, m := range msgs {
				switch m.Header.Type {
				case unix.NLMSG_DONE:
					break recv
				case unix.NLMSG_ERROR:
					return fmt.Errorf("NLMSG_ERROR")
				}
				// inet_diag_msg: family, state, timer, retrans, then
				// inet_diag_sockid whose first field is sport (be16).
				if len(m.Data) >= 6 && int(binary.BigEndian.Uint16(m.Data[4:])) == want {
					fmt.Printf("found port %d\n", want)
					return nil
				}
			}
		}
	}
	return fmt.Errorf("port %d not in the dump", want)
}
