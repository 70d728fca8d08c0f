package exec

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Why a pooled worker needs a guard: a child shares its worker thread's
// Landlock domain, and Landlock lets a task signal and ptrace tasks of its
// own domain. The worker thread is a thread of the caller's process, so
// without this guard a child could tgkill(ppid, workerTID, SIGKILL) (or
// kill(workerTID, ...): the signal goes to the whole process) and kill the
// caller, or, for a caller without capabilities, PTRACE_SEIZE the worker
// thread and take over the caller's memory. (A fresh thread dies right
// after the fork, so only a race remained there.) The guard is a seccomp
// filter installed on the worker thread only (no TSYNC) and inherited by
// every child it forks; it refuses with EPERM each system call that
// targets a task by id when that id is the worker's thread id.

// seccomp_data offsets (include/uapi/linux/seccomp.h); args are 64-bit,
// and the kernel reads pid arguments as int, i.e. the low 32 bits, which
// come first on the little-endian architectures supported here.
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16
	// x32SyscallBit marks x32 system calls on x86_64
	// (__X32_SYSCALL_BIT); they share AUDIT_ARCH_X86_64 but use other
	// numbers, so the guard refuses them all.
	x32SyscallBit = 0x40000000
)

// guardTargets maps each system call that names a target task to the
// indexes of its arguments that hold a pid or tid.
var guardTargets = []struct {
	nr   uint32
	args []int
}{
	{unix.SYS_KILL, []int{0}},
	{unix.SYS_TKILL, []int{0}},
	{unix.SYS_TGKILL, []int{1}},
	{unix.SYS_RT_SIGQUEUEINFO, []int{0}},
	{unix.SYS_RT_TGSIGQUEUEINFO, []int{1}},
	{unix.SYS_PTRACE, []int{1}},
	{unix.SYS_PROCESS_VM_READV, []int{0}},
	{unix.SYS_PROCESS_VM_WRITEV, []int{0}},
	{unix.SYS_PIDFD_OPEN, []int{0}}, // then pidfd_send_signal, pidfd_getfd
	{unix.SYS_KCMP, []int{0, 1}},
	{unix.SYS_GET_ROBUST_LIST, []int{0}},
	{unix.SYS_MOVE_PAGES, []int{0}},
	{unix.SYS_MIGRATE_PAGES, []int{0}},
}

// guardUnavailable is set once installing the guard failed (seccomp
// refused, unsupported architecture): from then on every spawn takes the
// fresh-thread path. One-way, never reset: a filter can remove seccomp
// from under us, never give it back.
var guardUnavailable atomic.Bool

func guardArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("exec: spawner guard on GOARCH %s: %w", runtime.GOARCH, errors.ErrUnsupported)
}

// guardProgram assembles the filter for worker thread tid. System calls
// under another architecture's ABI (i386 or arm32 compat, x32) are
// refused with EPERM: their numbers differ and would bypass the checks.
// So a child of a pooled worker cannot run 32-bit programs; FreshThread
// can.
func guardProgram(arch, tid uint32) ([]unix.SockFilter, error) {
	deny := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	allow := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipTrue: 1},
		deny,
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
	}
	if arch == unix.AUDIT_ARCH_X86_64 {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32SyscallBit, SkipFalse: 1}, deny)
	}
	for _, t := range guardTargets {
		// if nr == t.nr { for each arg: if low32(arg) == tid { deny } ; allow }
		block := make([]bpf.Instruction, 0, 3*len(t.args)+1)
		for _, a := range t.args {
			block = append(block,
				bpf.LoadAbsolute{Off: uint32(seccompDataArg0 + 8*a), Size: 4},
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: tid, SkipFalse: 1},
				deny,
			)
		}
		block = append(block, allow)
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: t.nr, SkipFalse: uint8(len(block))})
		prog = append(prog, block...)
	}
	prog = append(prog, allow)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("exec: assembling the spawner guard (cannot happen): %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}

// installGuard installs the guard for the calling thread on the calling
// thread only. The thread must be locked and carry no_new_privs.
func installGuard() error {
	arch, err := guardArch()
	if err != nil {
		return err
	}
	filter, err := guardProgram(arch, uint32(unix.Gettid()))
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("exec: seccomp(SECCOMP_SET_MODE_FILTER) for the spawner guard: %w", errno)
	}
	return nil
}
