package exec

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// Why a pooled worker needs a guard: a child shares its worker thread's
// Landlock domain, and Landlock lets a task signal and ptrace tasks of its
// own domain. The worker thread is a thread of the caller's process, so
// without this guard a child could tgkill(ppid, workerTID, SIGKILL) (or
// kill(workerTID, ...): the signal goes to the whole process) and kill the
// caller, or, for a caller without capabilities, PTRACE_SEIZE the worker
// thread and take over the caller's memory. A fresh spawner thread dies
// right after the fork, but a child wins that race 2 to 5 times in 10
// (red team round 26, R26b-3): it carries the same guard (freshGuard).
// The guard is a seccomp filter installed on the spawner thread only (no
// TSYNC) and inherited by every child it forks; it refuses with EPERM
// each system call that targets a task by id when that id is the
// spawner's thread id.

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

// guardProgram builds the filter for worker thread tid: each call in
// guardTargets whose pid argument (read as an int, the low word) is tid
// fails with EPERM. System calls under another architecture's ABI (i386
// or arm32 compat, x32) are refused with EPERM: their numbers differ and
// would bypass the checks. So a child of a spawner thread with a guard
// cannot run 32-bit programs (landjail's own filter kills them anyway).
func guardProgram(arch bpfprog.Arch, tid uint32) bpfprog.Program {
	deny := bpfprog.Errno(unix.EPERM)
	p := bpfprog.Program{Arch: arch, ForeignArch: deny, X32: deny, Default: bpfprog.Allow}
	for _, t := range guardTargets {
		for _, a := range t.args {
			p.Rules = append(p.Rules, bpfprog.Rule{Nr: t.nr, Conds: []bpfprog.Cond{bpfprog.ArgIn(a, tid)}, Action: deny})
		}
	}
	return p
}

// installGuard installs the guard for the calling thread on the calling
// thread only. The thread must be locked and carry no_new_privs.
func installGuard() error {
	arch, err := bpfprog.NativeArch()
	if err != nil {
		return fmt.Errorf("exec: spawner guard: %w", err)
	}
	prog, err := guardProgram(arch, uint32(unix.Gettid())).Compile()
	if err != nil {
		return fmt.Errorf("exec: building the spawner guard (cannot happen): %w", err)
	}
	if _, err := bpfprog.SetModeFilter(prog, 0); err != nil {
		return fmt.Errorf("exec: seccomp(SECCOMP_SET_MODE_FILTER) for the spawner guard: %w", err)
	}
	return nil
}
