// Command sockprobe tries what the seccomp layer restricts and prints one
// line per probe: "NAME ok" or "NAME ERRNO". Used by cmd/landjail's tests.
package main

import (
	"fmt"
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
}
