package exec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// TestGuard installs the spawner guard on a throwaway thread: calls that
// target that thread by id fail with EPERM, the same calls aimed at
// another thread of the process do not. (ptrace cannot be checked this
// way: attaching to one's own thread group always fails with EPERM.)
func TestGuard(t *testing.T) {
	type result struct{ tgkill, kill, pidfd, other error }
	var r result
	require.NoError(t, onFreshThread(func() error {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
		if err := installGuard(); err != nil {
			return err
		}
		me, pid := unix.Gettid(), unix.Getpid()
		r.tgkill = unix.Tgkill(pid, me, 0)
		r.kill = unix.Kill(me, 0)
		fd, err := unix.PidfdOpen(me, unix.PIDFD_THREAD)
		if err == nil {
			unix.Close(fd)
		}
		r.pidfd = err
		r.other = unix.Tgkill(pid, pid, 0) // the main thread
		return nil
	}))
	assert.ErrorIs(t, r.tgkill, unix.EPERM)
	assert.ErrorIs(t, r.kill, unix.EPERM)
	assert.ErrorIs(t, r.pidfd, unix.EPERM)
	assert.NoError(t, r.other)
}

// TestGuardProgramVM: the guard's decisions in x/net/bpf's VM, without a
// kernel: syscall and arguments → action, for both architectures.
func TestGuardProgramVM(t *testing.T) {
	const tid, other = 4242, 4243
	eperm, allow := bpfprog.Errno(unix.EPERM), bpfprog.Allow
	for _, arch := range []bpfprog.Arch{bpfprog.ArchX86_64, bpfprog.ArchAArch64} {
		prog, err := guardProgram(arch, tid).Compile()
		require.NoError(t, err)
		vm, err := bpfprog.NewVM(prog)
		require.NoError(t, err)
		foreign := bpfprog.Arch(unix.AUDIT_ARCH_I386)
		x32 := allow // on arm64 bit 30 is part of an unknown number
		if arch.HasX32() {
			x32 = eperm
		}
		for _, tc := range []struct {
			name string
			in   bpfprog.Data
			want bpfprog.Action
		}{
			{"tgkill(pid, tid)", bpfprog.Call(arch, unix.SYS_TGKILL, 1, tid, 9), eperm},
			{"tgkill(pid, other)", bpfprog.Call(arch, unix.SYS_TGKILL, 1, other, 9), allow},
			{"tgkill(tid, other): arg 0 is the tgid", bpfprog.Call(arch, unix.SYS_TGKILL, tid, other, 9), allow},
			{"kill(tid)", bpfprog.Call(arch, unix.SYS_KILL, tid, 9), eperm},
			{"kill(tid | high word)", bpfprog.Call(arch, unix.SYS_KILL, 7<<32|tid, 9), eperm},
			{"kill(tid << 32)", bpfprog.Call(arch, unix.SYS_KILL, tid<<32, 9), allow},
			{"tkill(tid)", bpfprog.Call(arch, unix.SYS_TKILL, tid, 9), eperm},
			{"rt_sigqueueinfo(tid)", bpfprog.Call(arch, unix.SYS_RT_SIGQUEUEINFO, tid), eperm},
			{"rt_tgsigqueueinfo(pid, tid)", bpfprog.Call(arch, unix.SYS_RT_TGSIGQUEUEINFO, 1, tid), eperm},
			{"ptrace(SEIZE, tid)", bpfprog.Call(arch, unix.SYS_PTRACE, unix.PTRACE_SEIZE, tid), eperm},
			{"ptrace(SEIZE, other)", bpfprog.Call(arch, unix.SYS_PTRACE, unix.PTRACE_SEIZE, other), allow},
			{"process_vm_writev(tid)", bpfprog.Call(arch, unix.SYS_PROCESS_VM_WRITEV, tid), eperm},
			{"process_vm_readv(tid)", bpfprog.Call(arch, unix.SYS_PROCESS_VM_READV, tid), eperm},
			{"pidfd_open(tid)", bpfprog.Call(arch, unix.SYS_PIDFD_OPEN, tid, 0), eperm},
			{"kcmp(tid, other)", bpfprog.Call(arch, unix.SYS_KCMP, tid, other), eperm},
			{"kcmp(other, tid)", bpfprog.Call(arch, unix.SYS_KCMP, other, tid), eperm},
			{"kcmp(other, other)", bpfprog.Call(arch, unix.SYS_KCMP, other, other), allow},
			{"get_robust_list(tid)", bpfprog.Call(arch, unix.SYS_GET_ROBUST_LIST, tid), eperm},
			{"move_pages(tid)", bpfprog.Call(arch, unix.SYS_MOVE_PAGES, tid), eperm},
			{"migrate_pages(tid)", bpfprog.Call(arch, unix.SYS_MIGRATE_PAGES, tid), eperm},
			{"getpid", bpfprog.Call(arch, unix.SYS_GETPID), allow},
			{"read(tid): not a pid argument", bpfprog.Call(arch, unix.SYS_READ, tid), allow},
			{"foreign arch", bpfprog.Call(foreign, unix.SYS_GETPID), eperm},
			{"x32", bpfprog.Call(arch, bpfprog.X32SyscallBit|unix.SYS_GETPID), x32},
		} {
			got, err := vm.Run(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want.String(), got.String(), "%v %s", arch, tc.name)
		}
	}
}
