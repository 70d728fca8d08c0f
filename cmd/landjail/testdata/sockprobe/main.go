// Command sockprobe tries what the seccomp layer restricts and prints one
// line per probe: "NAME ok" or "NAME ERRNO". Used by cmd/landjail's tests.
// With an argument PORT it also binds 127.0.0.1:PORT and listens ("bound").
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	probe := func(name string, domain, typ, proto int) {
		fd, err := syscall.Socket(domain, typ, proto)
		if err != nil {
			fmt.Println(name, err)
			return
		}
		syscall.Close(fd)
		fmt.Println(name, "ok")
	}
	probe("unix", syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	probe("udp", syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	probe("tcp", syscall.AF_INET, syscall.SOCK_STREAM, 0)
	probe("sockdiag", syscall.AF_NETLINK, syscall.SOCK_RAW, 4) // NETLINK_SOCK_DIAG

	report := func(name string, err error) {
		if err != nil {
			fmt.Println(name, err)
			return
		}
		fmt.Println(name, "ok")
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err == nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	}
	report("dgrampair", err)

	// listen without bind: the kernel autobinds an ephemeral port.
	fd, _ := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	report("listen", syscall.Listen(fd, 1))
	syscall.Close(fd)

	// MSG_FASTOPEN to 127.0.0.1:1 (nothing listens: refused if sent).
	fd, _ = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	report("fastopen", syscall.Sendto(fd, []byte("x"), 0x20000000, &syscall.SockaddrInet4{Port: 1, Addr: [4]byte{127, 0, 0, 1}}))
	syscall.Close(fd)

	if len(os.Args) > 1 {
		port, _ := strconv.Atoi(os.Args[1])
		fd, _ = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
		err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		if err == nil {
			err = syscall.Listen(fd, 1)
		}
		report("bound", err)
		syscall.Close(fd)
	}
}
