package bpfprog_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

var eperm = bpfprog.Errno(unix.EPERM)

type decision struct {
	name string
	in   bpfprog.Data
	want bpfprog.Action
}

func vmOf(t *testing.T, p bpfprog.Program) *bpfprog.VM {
	t.Helper()
	prog, err := p.Compile()
	require.NoError(t, err)
	vm, err := bpfprog.NewVM(prog)
	require.NoError(t, err)
	return vm
}

func check(t *testing.T, vm *bpfprog.VM, ds []decision) {
	t.Helper()
	for _, d := range ds {
		got, err := vm.Run(d.in)
		require.NoError(t, err, d.name)
		assert.Equal(t, d.want.String(), got.String(), d.name)
	}
}

// TestProgramDecisions: the decision list semantics, table-driven, on
// both architectures.
func TestProgramDecisions(t *testing.T) {
	x86, arm := bpfprog.ArchX86_64, bpfprog.ArchAArch64
	rules := []bpfprog.Rule{
		{Nr: 10, Conds: []bpfprog.Cond{bpfprog.ArgIn(0, 1, 2)}, Action: bpfprog.Errno(unix.EACCES)},
		{Nr: 11, Action: bpfprog.UserNotif},
		// First match wins: the allow-exception before the deny.
		{Nr: 10, Conds: []bpfprog.Cond{bpfprog.ArgIn(1, 5).Masked(0xf)}, Action: bpfprog.Allow},
		{Nr: 10, Action: eperm},
		{Nr: 12, Conds: []bpfprog.Cond{bpfprog.ArgNotIn(2, 7, 8)}, Action: eperm},
		{Nr: 13, Conds: []bpfprog.Cond{bpfprog.ArgAnyBits(0, 0x30)}, Action: eperm},
		{Nr: 14, Conds: []bpfprog.Cond{bpfprog.ArgIn(5, 9).HighWord(), bpfprog.ArgIn(5, 3)}, Action: eperm},
	}
	common := func(arch bpfprog.Arch) []decision {
		return []decision{
			{"unlisted", bpfprog.Call(arch, 0), bpfprog.Allow},
			{"in first", bpfprog.Call(arch, 10, 1), bpfprog.Errno(unix.EACCES)},
			{"in second", bpfprog.Call(arch, 10, 2, 5), bpfprog.Errno(unix.EACCES)},
			{"in: high word ignored", bpfprog.Call(arch, 10, 1<<32|2), bpfprog.Errno(unix.EACCES)},
			{"masked exception", bpfprog.Call(arch, 10, 3, 0xf5), bpfprog.Allow},
			{"masked exception, mask drops bits", bpfprog.Call(arch, 10, 3, 0x1235), bpfprog.Allow},
			{"catch-all after exception", bpfprog.Call(arch, 10, 3, 6), eperm},
			{"no conds", bpfprog.Call(arch, 11), bpfprog.UserNotif},
			{"not in", bpfprog.Call(arch, 12, 0, 0, 9), eperm},
			{"not in: listed", bpfprog.Call(arch, 12, 0, 0, 8), bpfprog.Allow},
			{"any bits: one", bpfprog.Call(arch, 13, 0x10), eperm},
			{"any bits: other", bpfprog.Call(arch, 13, 0x20), eperm},
			{"any bits: none", bpfprog.Call(arch, 13, 0x4f), bpfprog.Allow},
			{"any bits: high word only", bpfprog.Call(arch, 13, 0x30<<32), bpfprog.Allow},
			{"high and low words", bpfprog.Call(arch, 14, 0, 0, 0, 0, 0, 9<<32|3), eperm},
			{"high word differs", bpfprog.Call(arch, 14, 0, 0, 0, 0, 0, 8<<32|3), bpfprog.Allow},
			{"low word differs", bpfprog.Call(arch, 14, 0, 0, 0, 0, 0, 9<<32|4), bpfprog.Allow},
		}
	}
	t.Run("x86_64", func(t *testing.T) {
		vm := vmOf(t, bpfprog.Program{Arch: x86, ForeignArch: bpfprog.KillProcess, X32: eperm, Rules: rules, Default: bpfprog.Allow})
		check(t, vm, append(common(x86),
			decision{"foreign arch", bpfprog.Call(arm, 10, 1), bpfprog.KillProcess},
			decision{"i386", bpfprog.Call(unix.AUDIT_ARCH_I386, 0), bpfprog.KillProcess},
			decision{"x32", bpfprog.Call(x86, bpfprog.X32SyscallBit), eperm},
			decision{"x32 of a listed number", bpfprog.Call(x86, bpfprog.X32SyscallBit|11), eperm},
		))
	})
	t.Run("aarch64", func(t *testing.T) {
		vm := vmOf(t, bpfprog.Program{Arch: arm, ForeignArch: eperm, X32: bpfprog.KillProcess, Rules: rules, Default: bpfprog.Allow})
		check(t, vm, append(common(arm),
			decision{"foreign arch", bpfprog.Call(x86, 10, 1), eperm},
			decision{"no x32 on arm64: bit 30 is just a number", bpfprog.Call(arm, bpfprog.X32SyscallBit), bpfprog.Allow},
		))
	})
	t.Run("PassX32", func(t *testing.T) {
		vm := vmOf(t, bpfprog.Program{Arch: x86, ForeignArch: bpfprog.Allow, PassX32: true, Default: bpfprog.Allow,
			Rules: []bpfprog.Rule{{Nr: 11 | bpfprog.X32SyscallBit, Action: eperm}}})
		check(t, vm, []decision{
			{"x32 named by a rule", bpfprog.Call(x86, bpfprog.X32SyscallBit|11), eperm},
			{"other x32", bpfprog.Call(x86, bpfprog.X32SyscallBit|12), bpfprog.Allow},
			{"foreign allowed", bpfprog.Call(arm, bpfprog.X32SyscallBit|11), bpfprog.Allow},
		})
	})
	t.Run("default deny", func(t *testing.T) {
		vm := vmOf(t, bpfprog.Program{Arch: x86, ForeignArch: bpfprog.KillProcess, X32: bpfprog.KillProcess, Default: eperm,
			Rules: []bpfprog.Rule{{Nr: 1, Action: bpfprog.Allow}}})
		check(t, vm, []decision{
			{"listed", bpfprog.Call(x86, 1), bpfprog.Allow},
			{"unlisted", bpfprog.Call(x86, 2), eperm},
			{"x32", bpfprog.Call(x86, bpfprog.X32SyscallBit|1), bpfprog.KillProcess},
		})
	})
}

// manyRules is a program whose far jumps exceed 255 instructions: n rules
// on distinct syscall numbers, each with a condition, then rules on the
// numbers 1 and 2 behind them, and an In list of n values.
func manyRules(n int) bpfprog.Program {
	var rs []bpfprog.Rule
	var vals []uint32
	for i := range n {
		rs = append(rs, bpfprog.Rule{Nr: uint32(1000 + i), Conds: []bpfprog.Cond{bpfprog.ArgIn(0, uint32(i))}, Action: bpfprog.Errno(unix.Errno(1 + i%100))})
		vals = append(vals, uint32(100+i))
	}
	rs = append(rs,
		bpfprog.Rule{Nr: 1, Conds: []bpfprog.Cond{bpfprog.ArgIn(1, vals...)}, Action: bpfprog.Errno(unix.EXDEV)},
		bpfprog.Rule{Nr: 2, Action: bpfprog.Errno(unix.ENOTTY)},
	)
	return bpfprog.Program{Arch: bpfprog.ArchX86_64, ForeignArch: bpfprog.KillProcess, X32: eperm, Rules: rs, Default: bpfprog.Allow}
}

// TestLongJumps: with more than 300 rules the arch check's jump to the
// final return, the In list's jumps and the per-syscall skips span more
// than 255 instructions; they go through BPF_JA and decide as the short
// program does. (The old assemblers wrapped silently (exec, kerneltest)
// or refused (seccomp).)
func TestLongJumps(t *testing.T) {
	const n = 320
	p := manyRules(n)
	ins, err := p.Assemble()
	require.NoError(t, err)
	require.Greater(t, len(ins), 3*n)
	var ja, far int
	for _, in := range ins {
		if j, ok := in.(bpf.Jump); ok {
			ja++
			if j.Skip > 255 {
				far++
			}
		}
	}
	assert.Positive(t, far, "some BPF_JA reaches beyond 255 instructions")
	t.Logf("%d instructions, %d BPF_JA, %d of them beyond 255", len(ins), ja, far)

	x86 := bpfprog.ArchX86_64
	vm := vmOf(t, p)
	ds := []decision{
		{"foreign arch (jump to the end)", bpfprog.Call(bpfprog.ArchAArch64, 1), bpfprog.KillProcess},
		{"x32 (jump to the end)", bpfprog.Call(x86, bpfprog.X32SyscallBit|2), eperm},
		{"behind 320 rules", bpfprog.Call(x86, 2), bpfprog.Errno(unix.ENOTTY)},
		{"first of a long In", bpfprog.Call(x86, 1, 0, 100), bpfprog.Errno(unix.EXDEV)},
		{"last of a long In", bpfprog.Call(x86, 1, 0, 100+n-1), bpfprog.Errno(unix.EXDEV)},
		{"not in the long In", bpfprog.Call(x86, 1, 0, 99), bpfprog.Allow},
		{"unlisted", bpfprog.Call(x86, 3), bpfprog.Allow},
	}
	for i := range n {
		ds = append(ds,
			decision{"rule match", bpfprog.Call(x86, uint32(1000+i), uint64(i)), bpfprog.Errno(unix.Errno(1 + i%100))},
			decision{"rule miss", bpfprog.Call(x86, uint32(1000+i), uint64(i+1)), bpfprog.Allow})
	}
	check(t, vm, ds)
}

func TestCompileErrors(t *testing.T) {
	x86 := bpfprog.ArchX86_64
	prog := func(c bpfprog.Cond) bpfprog.Program {
		return bpfprog.Program{Arch: x86, Rules: []bpfprog.Rule{{Nr: 1, Conds: []bpfprog.Cond{c}, Action: eperm}}}
	}
	for _, tc := range []struct {
		name string
		p    bpfprog.Program
	}{
		{"no arch", bpfprog.Program{}},
		{"i386", bpfprog.Program{Arch: unix.AUDIT_ARCH_I386}},
		{"arg 6", prog(bpfprog.ArgIn(6, 1))},
		{"arg -1", prog(bpfprog.ArgIn(-1, 1))},
		{"no values", prog(bpfprog.ArgIn(0))},
		{"AnyBits 0", prog(bpfprog.ArgAnyBits(0, 0))},
		{"AnyBits two values", prog(bpfprog.Cond{Op: bpfprog.AnyBits, Vals: []uint32{1, 2}})},
		{"no Op", prog(bpfprog.Cond{Vals: []uint32{1}})},
		{"longer than BPF_MAXINSNS", manyRules(1400)},
	} {
		_, err := tc.p.Compile()
		assert.Error(t, err, tc.name)
	}
	_, err := bpfprog.Program{}.Compile()
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

func TestActionString(t *testing.T) {
	for a, want := range map[bpfprog.Action]string{
		bpfprog.Allow:               "allow",
		bpfprog.KillProcess:         "kill process",
		bpfprog.UserNotif:           "user notif",
		bpfprog.Errno(unix.EPERM):   "errno EPERM",
		bpfprog.Errno(unix.ENOSYS):  "errno ENOSYS",
		unix.SECCOMP_RET_TRAP | 0x5: "ret 0x30005",
	} {
		assert.Equal(t, want, a.String())
	}
	assert.Equal(t, "AUDIT_ARCH_X86_64", bpfprog.ArchX86_64.String())
	assert.Equal(t, "AUDIT_ARCH_AARCH64", bpfprog.ArchAArch64.String())
}

// TestLongJumpsLive installs the 320-rule program on a throwaway thread:
// the kernel accepts the BPF_JA trampolines and decides as the VM does.
// getpriority(PRIO_PROCESS, who) stands for a syscall behind 320 rules
// with a 320-value In list: who=150 is in the list (EXDEV), who=0 not.
func TestLongJumpsLive(t *testing.T) {
	arch, err := bpfprog.NativeArch()
	if err != nil {
		t.Skipf("no seccomp programs for GOARCH %s", runtime.GOARCH)
	}
	p := manyRules(320)
	p.Arch = arch
	p.Rules = append(p.Rules[:320:320],
		bpfprog.Rule{Nr: unix.SYS_GETPRIORITY, Conds: p.Rules[320].Conds, Action: bpfprog.Errno(unix.EXDEV)},
		bpfprog.Rule{Nr: unix.SYS_GETPPID, Action: bpfprog.Errno(unix.ENOTTY)})
	prog, err := p.Compile()
	require.NoError(t, err)
	type result struct {
		install              error
		inList, out, getppid error
	}
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the filter
		var r result
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			r.install = err
		} else {
			_, r.install = bpfprog.SetModeFilter(prog, 0)
		}
		if r.install == nil {
			_, _, e := unix.Syscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, 100+150, 0)
			r.inList = errOf(e)
			_, _, e = unix.Syscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, 0, 0)
			r.out = errOf(e)
			_, _, e = unix.Syscall(unix.SYS_GETPPID, 0, 0, 0)
			r.getppid = errOf(e)
		}
		res <- r
	}()
	r := <-res
	if r.install != nil {
		kerneltest.Missing(t, "seccomp filter not installable: %v", r.install)
	}
	assert.ErrorIs(t, r.inList, unix.EXDEV)
	assert.NoError(t, r.out)
	assert.ErrorIs(t, r.getppid, unix.ENOTTY)
}

func errOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
