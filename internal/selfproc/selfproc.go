// Package selfproc reads the facts about this process that a landjail
// run reads first (its /proc/self/stat line, the inode of its PID
// namespace, its mount table) on one goroutine that a package
// initializer starts before most of landjail's packages are initialized,
// and lends that goroutine to the first caller of Go afterwards.
//
// internal/prenet/early starts it (Start) for a root "landjail run": the
// package initializes 14th of about 80, while internal/limits/early,
// which starts the control-group work (limits.StartEarly) with these
// facts, initializes 57th, ≈0.3 ms later, a time during which the
// machine's other CPU is otherwise idle (BENCHMARKS.md, round 8). The
// limits goroutine then runs on this goroutine (Go) instead of one more.
//
// The facts are what the caller would have read itself, only read
// earlier: the start time and the PID namespace never change for a
// process; the mount table is the one of the process's first instants
// instead of a few hundred microseconds later, which limits' probe (a
// once-per-process snapshot already) cannot tell apart. Without Start
// (another program, a non-root run, a stage process) every accessor
// reports nothing and the callers read /proc as before. Only the syscall
// package (and argflags) is used: this package must initialize before os.
package selfproc

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/landjail/landjail/internal/argflags"
)

var (
	started atomic.Bool
	read    sync.WaitGroup // the facts are read
	work    = make(chan func(), 1)
	lent    atomic.Bool // Go handed the goroutine its work

	stat      []byte
	pidNSIno  uint64
	mountInfo []byte
)

// Start starts the goroutine, once: it reads the facts, then waits for
// the function Go hands it, runs it and ends. Safe to call more than once
// (later calls do nothing).
func Start() {
	if !started.CompareAndSwap(false, true) {
		return
	}
	read.Add(1)
	go func() {
		readFacts()
		read.Done()
		(<-work)()
	}()
}

// readFacts reads the three facts, each left empty when unreadable.
func readFacts() {
	stat = readFile("/proc/self/stat", 512)
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/ns/pid", &st) == nil {
		pidNSIno = st.Ino
	}
	mountInfo = readFile("/proc/self/mountinfo", 8192)
}

// Go hands f to the goroutine Start started, which runs it once it has
// read the facts, and reports true; false when Start was not called or
// the goroutine was lent already (the caller then runs f itself, on a
// goroutine of its own).
func Go(f func()) bool {
	if !started.Load() || !lent.CompareAndSwap(false, true) {
		return false
	}
	work <- f
	return true
}

// Stat is /proc/self/stat as Start's goroutine read it (waiting for the
// read), or nil without Start or when it was unreadable.
func Stat() []byte {
	if !started.Load() {
		return nil
	}
	read.Wait()
	return stat
}

// PIDNamespace is the inode number of this process's PID namespace
// (stat(2) of /proc/self/ns/pid) as Start's goroutine read it, or 0
// without Start or when it was unreadable.
func PIDNamespace() uint64 {
	if !started.Load() {
		return 0
	}
	read.Wait()
	return pidNSIno
}

// MountInfo is /proc/self/mountinfo as Start's goroutine read it, or nil
// without Start or when it was unreadable. The caller must not modify it.
func MountInfo() []byte {
	if !started.Load() {
		return nil
	}
	read.Wait()
	return mountInfo
}

// readFile reads path whole, starting with a buffer of size bytes, or
// returns nil (an error, or more than 1 MiB).
func readFile(path string, size int) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	buf := make([]byte, size)
	n := 0
	for {
		if n == len(buf) {
			if len(buf) >= 1<<20 {
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

// IsRun reports whether args (args[0] the program) is a "landjail run"
// as far as a glance at its flags shows: neither help nor --print-rules
// before "--" (internal/argflags.Run). A guess: a wrong one costs time,
// never behaviour.
func IsRun(args []string) bool {
	run := true
	return argflags.Run(args, func(name string) bool {
		switch name {
		case "help", "h", "print-rules":
			run = false
		}
		return run
	}) && run
}
