// Package rawread reads a whole file with plain system calls (package
// syscall alone), for package initializers that run before package os
// is initialized: internal/argflags' command line and internal/selfproc's
// /proc facts.
package rawread

import "syscall"

// File reads path whole, starting with a buffer of size bytes and
// doubling it, or returns nil: the file cannot be opened or read, or it
// holds more than max bytes. EINTR is retried.
func File(path string, size, max int) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	buf := make([]byte, size)
	n := 0
	for {
		if n == len(buf) {
			if len(buf) >= max {
				return nil
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil
		}
		if m == 0 {
			return buf[:n]
		}
		n += m
	}
}
