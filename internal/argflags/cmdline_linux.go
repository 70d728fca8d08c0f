package argflags

import "github.com/landjail/landjail/internal/rawread"

// Cmdline returns this process's argv, read from /proc/self/cmdline with
// plain system calls, for a package initializer that runs before package
// os (which holds os.Args) is initialized; nil when unreadable or longer
// than 64 KiB. internal/prenet/early and internal/stagestart/early read
// the command line with it.
func Cmdline() []string {
	buf := rawread.File("/proc/self/cmdline", 4096, 64<<10)
	if buf == nil {
		return nil
	}
	n := len(buf)
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
