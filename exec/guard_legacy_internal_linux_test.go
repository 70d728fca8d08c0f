package exec

// The guard's hand-counted assembler before internal/bpfprog, kept only to
// prove the new program decides the same (deleted next).

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

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

// guardProgram assembles the filter for worker thread tid. System calls
// under another architecture's ABI (i386 or arm32 compat, x32) are
// refused with EPERM: their numbers differ and would bypass the checks.
// So a child of a pooled worker cannot run 32-bit programs; FreshThread
// can.
func legacyGuardProgram(arch, tid uint32) ([]unix.SockFilter, error) {
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

// TestGuardLegacyEquality feeds the old and the new guard the same
// syscalls (every number below 512, native, x32 and foreign arch, with
// the worker's tid, another tid and tid in the high word in each pid
// argument) and compares the decisions.
func TestGuardLegacyEquality(t *testing.T) {
	const tid = 4242
	for _, arch := range []bpfprog.Arch{bpfprog.ArchX86_64, bpfprog.ArchAArch64} {
		old, err := legacyGuardProgram(uint32(arch), tid)
		require.NoError(t, err)
		oldVM, err := bpfprog.NewVM(old)
		require.NoError(t, err)
		prog, err := guardProgram(arch, tid).Compile()
		require.NoError(t, err)
		newVM, err := bpfprog.NewVM(prog)
		require.NoError(t, err)
		n := 0
		for _, a := range []bpfprog.Arch{bpfprog.ArchX86_64, bpfprog.ArchAArch64, unix.AUDIT_ARCH_I386} {
			for nr := uint32(0); nr < 512; nr++ {
				for _, x32 := range []uint32{0, bpfprog.X32SyscallBit} {
					for _, args := range [][]uint64{{}, {tid}, {0, tid}, {tid, tid}, {tid + 1, tid + 1}, {tid << 32, tid << 32}, {1<<32 | tid, 1<<32 | tid}} {
						d := bpfprog.Call(a, nr|x32, args...)
						want, err := oldVM.Run(d)
						require.NoError(t, err)
						got, err := newVM.Run(d)
						require.NoError(t, err)
						assert.Equal(t, want, got, "%+v", d)
						n++
					}
				}
			}
		}
		t.Logf("%v: %d inputs, same decisions", arch, n)
	}
	_ = fmt.Sprint
}
