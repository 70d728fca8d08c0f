package exec

import (
	"syscall"
	"unsafe"
)

// initArgs is everything the init child uses, prepared by the parent
// before the clone: the child runs only the nosplit code below, which
// makes raw system calls on these fields and nothing else (no
// allocation, no lock, no stack growth, no write of a pointer), because
// a forked copy of a Go process has no working runtime.
type initArgs struct {
	flags   uintptr // clone(2) flags
	statusW uintptr // write end of the status pipe
	keepR   uintptr // read end of the keep-alive pipe

	none, root, proc, procDir *byte // "none", "/", "proc", "/proc"
	procData                  *byte // the procfs mount options: "hidepid=4"

	ign      [4]uint64 // struct sigaction: SIG_IGN, no flags, empty mask
	fullMask uint64    // every signal
	oldMask  uint64    // the thread's mask before the clone
	errno    uint32    // the status word (the child's copy)
	step     uint32    // which step failed (the child's copy)
	buf      [8]byte
}

// Steps of the init child, reported with the errno on failure.
const (
	stepSigaction = 1 + iota
	stepPrivate
	stepProc
	stepDumpable
	stepStatus
	stepKeep
)

// initStepNames names the steps for error messages.
var initStepNames = [...]string{
	stepSigaction: "rt_sigaction(SIGCHLD, SIG_IGN)",
	stepPrivate:   "mount(/, MS_REC|MS_PRIVATE)",
	stepProc:      "mount(proc, /proc)",
	stepDumpable:  "prctl(PR_SET_DUMPABLE, 0)",
	stepStatus:    "write(status)",
	stepKeep:      "dup3(keep-alive, 0)",
}

const (
	sigSetmask = 2 // SIG_SETMASK
	sigchld    = 17
)

// cloneInit forks the init: a copy of this process (clone(2) without
// CLONE_VM, so nothing it does touches the parent) in new namespaces
// (a.flags). Every signal is blocked on the calling thread across the
// clone and stays blocked in the child for its whole life: a signal
// handled there would run the Go runtime's handler in a process without
// a runtime. It returns the child's pid in the parent; the child never
// returns (initChild ends in exit_group).
//
//go:nosplit
//go:norace
func cloneInit(a *initArgs) (int, syscall.Errno) {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&a.fullMask)), uintptr(unsafe.Pointer(&a.oldMask)), 8, 0, 0)
	if e != 0 {
		return 0, e
	}
	r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, a.flags, 0, 0, 0, 0, 0)
	if e != 0 || r1 != 0 {
		syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&a.oldMask)), 0, 8, 0, 0)
		return int(r1), e
	}
	initChild(a)
	return 0, 0 // not reached
}

// initChild is PID 1 of the new PID namespace, in its own copy of the
// caller's mount namespace: SIGCHLD ignored (the kernel then reaps every
// child at once, orphans reparented to it included), nothing propagates
// out, a fresh read-only procfs on /proc (it shows this namespace's
// processes; hidepid=4, "ptraceable", hides every process the reader may
// not ptrace-read, the init itself included, whose command line and
// environment are the caller's: hidepid=2 would exempt gid 0, a root
// child), not dumpable; then it reports on the status pipe (errno 0),
// keeps only the keep-alive pipe (as fd 0) and blocks reading it. When
// the parent closes the write end or dies, the read returns and the init
// exits, and the kernel kills everything left in the namespace
// (pid_namespaces(7)). On failure it writes the errno and the step and
// exits 1.
//
//go:nosplit
//go:norace
func initChild(a *initArgs) {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sigchld, uintptr(unsafe.Pointer(&a.ign)), 0, 8, 0, 0)
	if e != 0 {
		initFail(a, stepSigaction, e)
	}
	_, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(a.none)), uintptr(unsafe.Pointer(a.root)), 0, syscall.MS_REC|syscall.MS_PRIVATE, 0, 0)
	if e != 0 {
		initFail(a, stepPrivate, e)
	}
	_, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(a.proc)), uintptr(unsafe.Pointer(a.procDir)), uintptr(unsafe.Pointer(a.proc)),
		syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC|syscall.MS_RDONLY, uintptr(unsafe.Pointer(a.procData)), 0)
	if e != 0 {
		initFail(a, stepProc, e)
	}
	_, _, e = syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0, 0, 0, 0)
	if e != 0 {
		initFail(a, stepDumpable, e)
	}
	a.errno, a.step = 0, 0
	n, _, e := syscall.RawSyscall6(syscall.SYS_WRITE, a.statusW, uintptr(unsafe.Pointer(&a.errno)), 8, 0, 0, 0)
	if e != 0 || n != 8 {
		initExit(1)
	}
	_, _, e = syscall.RawSyscall6(syscall.SYS_DUP3, a.keepR, 0, 0, 0, 0, 0)
	if e != 0 {
		initExit(1)
	}
	// Everything else the copy inherited from the parent goes: its
	// stdio, the status pipe, the parent's other descriptors.
	_, _, e = syscall.RawSyscall6(sysCloseRange, 1, uintptr(^uint32(0)), 0, 0, 0, 0)
	if e != 0 {
		for fd := uintptr(1); fd < 4096; fd++ {
			syscall.RawSyscall6(syscall.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		}
	}
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_READ, 0, uintptr(unsafe.Pointer(&a.buf[0])), 1, 0, 0, 0)
		if e == syscall.EINTR || (e == 0 && n > 0) {
			continue
		}
		initExit(0)
	}
}

// initFail reports step and errno on the status pipe and exits 1.
//
//go:nosplit
//go:norace
func initFail(a *initArgs, step uint32, e syscall.Errno) {
	a.errno, a.step = uint32(e), step
	syscall.RawSyscall6(syscall.SYS_WRITE, a.statusW, uintptr(unsafe.Pointer(&a.errno)), 8, 0, 0, 0)
	initExit(1)
}

// initExit ends the init child.
//
//go:nosplit
//go:norace
func initExit(code uintptr) {
	for {
		syscall.RawSyscall6(syscall.SYS_EXIT_GROUP, code, 0, 0, 0, 0, 0)
	}
}

// sysCloseRange is close_range(2) (Linux 5.9; the same number on every
// architecture).
const sysCloseRange = 436
