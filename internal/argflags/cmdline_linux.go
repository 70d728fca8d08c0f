package argflags

import "syscall"

// Cmdline returns this process's argv, read from /proc/self/cmdline with
// plain system calls, for a package initializer that runs before package
// os (which holds os.Args) is initialized; nil when unreadable or longer
// than 64 KiB. internal/prenet/early and internal/stagestart/early read
// the command line with it.
func Cmdline() []string {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n := 0
	for {
		if n == len(buf) {
			if len(buf) >= 64<<10 {
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
			break
		}
		n += m
	}
	var args []string
	start := 0
	for i := 0; i < n; i++ {
		if buf[i] == 0 {
			args = append(args, string(buf[start:i]))
			start = i + 1
		}
	}
	return args
}
