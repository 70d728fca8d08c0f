// Command mmapwrite is a test probe (red team round 31, R31a-5): it
// opens each argument O_RDWR, maps its first page MAP_SHARED and
// stores "PWNED" at its start through the mapping (msync), the way a
// command would put its own code into a set-ID program without
// write(2), which strips the set-ID bits. It prints, per file,
// "NAME ok" or "NAME open:ERRNO" / "NAME mmap:ERRNO", and exits 0.
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func errno(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func main() {
	for _, p := range os.Args[1:] {
		fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Printf("%s open:%s\n", p, errno(err))
			continue
		}
		m, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		unix.Close(fd)
		if err != nil {
			fmt.Printf("%s mmap:%s\n", p, errno(err))
			continue
		}
		copy(m, "PWNED")
		if err := unix.Msync(m, unix.MS_SYNC); err != nil {
			fmt.Printf("%s msync:%s\n", p, errno(err))
		} else {
			fmt.Printf("%s ok\n", p)
		}
		unix.Munmap(m)
	}
}
