// Command unixprobe connects to each target and prints one line per
// target: "TARGET ok REPLY" (the first bytes the peer sent) or
// "TARGET ERRNO-TEXT". "@FILE" reads the targets from FILE. Targets: a path (a stream UNIX socket), "dgram:PATH"
// (a datagram UNIX socket sending "x" to PATH with sendto) or
// "tcp:PORT" (127.0.0.1:PORT) or "proxy:HOST" (an HTTP GET of
// http://HOST/ through $HTTP_PROXY: the reply's status line).
package main

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	targets := os.Args[1:]
	if len(targets) == 1 && strings.HasPrefix(targets[0], "@") {
		// Targets in a file, one a line: arguments naming paths
		// outside the policy would make the path-check fallback (no
		// Landlock) refuse the command before it runs.
		b, err := os.ReadFile(targets[0][1:])
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		targets = strings.Fields(string(b))
	}
	for _, t := range targets {
		reply, err := probe(t)
		if err != nil {
			fmt.Printf("%s %v\n", t, err)
			continue
		}
		fmt.Printf("%s ok %s\n", t, reply)
	}
}

func probe(t string) (string, error) {
	switch {
	case strings.HasPrefix(t, "dgram:"):
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		return "sent", unix.Sendto(fd, []byte("x"), 0, &unix.SockaddrUnix{Name: strings.TrimPrefix(t, "dgram:")})
	case strings.HasPrefix(t, "proxy:"):
		u, err := url.Parse(os.Getenv("HTTP_PROXY"))
		if err != nil {
			return "", err
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			return "", err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return "", err
		}
		host := strings.TrimPrefix(t, "proxy:")
		if _, err := unix.Write(fd, []byte("GET http://"+host+"/ HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")); err != nil {
			return "", err
		}
		return read(fd)
	case strings.HasPrefix(t, "tcp:"):
		port, err := strconv.Atoi(strings.TrimPrefix(t, "tcp:"))
		if err != nil {
			return "", err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return "", err
		}
		return read(fd)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: t}); err != nil {
		return "", err
	}
	return read(fd)
}

func read(fd int) (string, error) {
	buf := make([]byte, 16)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
