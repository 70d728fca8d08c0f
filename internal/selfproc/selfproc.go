// Package selfproc reads the facts about this process that a landjail
// run reads first (its /proc/self/stat line, the inode of its PID
// namespace, its mount table) and opens the system preset's paths
// (internal/presetpaths, for the Landlock rules: TakePath) on one
// goroutine that a package initializer starts before most of landjail's
// packages are initialized, and lends that goroutine to the first caller
// of Go afterwards.
//
// internal/prenet/early starts it (Start) for a root "landjail run": the
// package initializes 15th of about 80, while internal/limits/early,
// which starts the control-group work (limits.StartEarly) with these
// facts, initializes 58th, ≈0.3 ms later, a time during which the
// machine's other CPU is otherwise idle (BENCHMARKS.md, round 8). The
// limits goroutine then runs on this goroutine (Go) instead of one more.
//
// The facts and descriptors are what the callers would have read or
// opened themselves, only earlier: the start time and the PID namespace
// never change for a process; the mount table is the one of the
// process's first instants instead of a few hundred microseconds later,
// which limits' probe (a once-per-process snapshot already) cannot tell
// apart; a preset path's descriptor and type are taken together, as
// package landlock's own open and fstat would be, ≈0.5 ms earlier (a
// path swapped meanwhile is one swapped before the compile). Without
// Start (another program, a non-root run, a stage process) every
// accessor reports nothing and the callers read /proc and open the paths
// as before. Only the syscall package (and two leaf packages of
// landjail's) is used: this package must initialize before os.
package selfproc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/landjail/landjail/internal/argflags"
	"github.com/landjail/landjail/internal/presetpaths"
	"github.com/landjail/landjail/internal/rawread"
)

var (
	started atomic.Bool
	read    sync.WaitGroup // the facts are read
	work    = make(chan func(), 1)
	lent    atomic.Bool // Go handed the goroutine its work

	stat      []byte
	pidNSIno  uint64
	mountInfo []byte

	pathsMu sync.Mutex
	paths   map[string]pathFact // the system preset's paths, opened; see TakePath
)

// pathFact is one path of the system preset as Start's goroutine opened
// it: its descriptor (O_PATH|O_CLOEXEC, symlinks followed) and whether
// it is a directory, or the error of the open or fstat.
type pathFact struct {
	fd    int
	isDir bool
	err   error
}

// Start starts the goroutine, once: it reads the facts, then waits for
// the function Go hands it, runs it and ends. Safe to call more than once
// (later calls do nothing).
func Start() {
	if !started.CompareAndSwap(false, true) {
		return
	}
	read.Add(1)
	go func() {
		// The runtime's template thread, which the first LockOSThread
		// starts (package exec locks the thread that execve's): made
		// here, off that thread.
		runtime.LockOSThread()
		runtime.UnlockOSThread()
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
	paths = openPaths(presetpaths.All())
}

// openPaths opens each path O_PATH|O_CLOEXEC (following symlinks, as
// package landlock's rules do) and fstat's it.
func openPaths(list []string) map[string]pathFact {
	m := make(map[string]pathFact, len(list))
	for _, p := range list {
		fd, err := openPath(p)
		if err != nil {
			m[p] = pathFact{fd: -1, err: err}
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			m[p] = pathFact{fd: -1, err: err}
			continue
		}
		m[p] = pathFact{fd: fd, isDir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR}
	}
	return m
}

// openPath is open(path, O_PATH|O_CLOEXEC), retried on EINTR.
func openPath(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// TakePath returns what Start's goroutine found at path, one of the
// system preset's (internal/presetpaths): a descriptor (O_PATH|O_CLOEXEC,
// symlinks followed, now the caller's) and whether it is a directory, or
// the errno of its open or fstat; ok is false without Start, for another
// path, or once taken or released. It waits for the goroutine's reads.
// Package landlock adds its rule on that descriptor: the rule is on the
// inode whose type decided its rights, opened ≈0.5 ms before the
// compile would have opened it, on the CPU that is idle then.
func TakePath(path string) (fd int, isDir bool, err error, ok bool) {
	if !started.Load() {
		return -1, false, nil, false
	}
	read.Wait()
	pathsMu.Lock()
	defer pathsMu.Unlock()
	f, ok := paths[path]
	if !ok {
		return -1, false, nil, false
	}
	delete(paths, path)
	return f.fd, f.isDir, f.err, true
}

// ReleasePaths closes the descriptors TakePath did not hand out (package
// landlock calls it once its compile is done). It waits for the
// goroutine's reads; without Start it does nothing.
func ReleasePaths() {
	if !started.Load() {
		return
	}
	read.Wait()
	pathsMu.Lock()
	defer pathsMu.Unlock()
	for p, f := range paths {
		if f.fd >= 0 {
			syscall.Close(f.fd)
		}
		delete(paths, p)
	}
}

// Started reports whether Start was called.
func Started() bool { return started.Load() }

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
func readFile(path string, size int) []byte { return rawread.File(path, size, 1<<20) }

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
