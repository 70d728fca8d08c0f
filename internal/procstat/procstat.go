// Package procstat reads the small files of the kernel's pseudo file
// systems (proc(5), cgroup control files) with plain system calls, and
// the start time of a process, which with its pid names it for good.
package procstat

import (
	"errors"
	"fmt"
	"github.com/landjail/landjail/internal/selfproc"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ReadFile is os.ReadFile for a small file of a pseudo file system
// (procfs, cgroupfs, sysfs): open(O_RDONLY|O_CLOEXEC), read until end of
// file, close — three system calls and no *os.File, whose set-up tries to
// register every descriptor with the runtime's poller (two fcntl and an
// epoll_ctl, and two more fcntl to undo it where the kernel refuses; a
// cgroup file is accepted and must be unregistered at close). Reads are
// retried on EINTR. Errors are *fs.PathError wrapping the errno
// (errors.Is(err, fs.ErrNotExist) for ENOENT). Not for a file that may
// block (a FIFO, a device): there is no poller to wait in.
func ReadFile(path string) ([]byte, error) { return ReadFileSize(path, 512) }

// ReadFileSize is ReadFile reading size bytes at a time at first: for a
// file of a few kilobytes whose kernel side renders it again for every
// read (/proc/self/mountinfo: 36 µs in one read of 8 KB, 59 µs in reads
// of 512 bytes here).
func ReadFileSize(path string, size int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, max(size, 1))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// StartTime returns field 22 of /proc/PID/stat, starttime: clock ticks
// after boot. With the pid it names one process, whatever it execve'd
// since; a reused pid has another. Errors: ReadFile's (fs.ErrNotExist
// when there is no such process), or a malformed line.
func StartTime(pid int) (uint64, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseStartTime(path, b)
}

// parseStartTime is StartTime's parse of the stat line b read from path.
func parseStartTime(path string, b []byte) (uint64, error) {
	// comm may hold spaces and parentheses: the fields start after the
	// last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: no comm field", path)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 { // starttime is field 22: the 20th after comm
		return 0, fmt.Errorf("%s: too few fields", path)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// SelfStartTime is StartTime of this process, read once: it never
// changes.
var SelfStartTime = sync.OnceValues(func() (uint64, error) {
	if b := selfproc.Stat(); b != nil {
		return parseStartTime("/proc/self/stat", b) // read by internal/prenet/early's goroutine
	}
	return StartTime(os.Getpid())
})
