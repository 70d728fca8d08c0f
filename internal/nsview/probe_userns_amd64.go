package nsview

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// userNSProbe is what the probe child (cloneUserNSProbe, in assembly)
// reads and writes: the caller is suspended while it runs (CLONE_VFORK)
// and it shares the caller's memory (CLONE_VM).
type userNSProbe struct {
	flags uintptr // clone(2) flags
	stack uintptr // top of stk, 16-byte aligned
	root  *byte   // "/"
	tmpfs *byte   // "tmpfs"
	step  uint32  // 0: success; else the failing step (stepNames)
	errno uint32  // the failing step's errno
	stk   [1024]byte
}

// cloneUserNSProbe is in probe_userns_amd64.s. It is not marked
// noescape, so p is on the heap, which does not move: p.stack stays valid
// whatever happens to this goroutine's stack.
func cloneUserNSProbe(p *userNSProbe) (pid uintptr, errno uintptr)

// tryUserNS clones a child with flags (the stage's CLONE_NEW* flags)
// sharing this process's memory on a stack of its own (no copy of the
// address space, no execve: ≈0.1 ms where a fork of a Go process and a
// failed execve took ≈1 ms) and returns the failing step (0 for the
// clone itself) and its errno, or errno 0. Every signal is blocked on
// this thread across the clone, so the child, which has no Go runtime,
// never runs a signal handler. The child, which signals nothing at its
// exit (exit signal 0), is reaped in the background with __WALL.
func tryUserNS(flags uintptr) (step uint32, errno unix.Errno) {
	p := &userNSProbe{flags: flags | unix.CLONE_VM | unix.CLONE_VFORK, step: stepNoAnswer}
	p.stack = (uintptr(unsafe.Pointer(&p.stk[len(p.stk)-1])) + 1) &^ 15
	p.root, _ = unix.BytePtrFromString("/")
	p.tmpfs, _ = unix.BytePtrFromString("tmpfs")

	runtime.LockOSThread()
	full, old := ^uint64(0), uint64(0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&full)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, e := cloneUserNSProbe(p)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	runtime.UnlockOSThread()
	if e != 0 {
		return 0, unix.Errno(e)
	}
	go func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(int(pid), &ws, unix.WALL, nil); err != unix.EINTR {
				return
			}
		}
	}()
	step, errno = p.step, unix.Errno(p.errno)
	runtime.KeepAlive(p)
	return step, errno
}
