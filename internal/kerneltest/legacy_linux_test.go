package kerneltest

// The emulation filter's own assembler before internal/bpfprog, kept only
// to prove the new program decides the same (deleted next).

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// Offsets in struct seccomp_data (include/uapi/linux/seccomp.h).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	// x32Bit marks x32 system calls on x86_64 (__X32_SYSCALL_BIT); they
	// share AUDIT_ARCH_X86_64, so the filter blocks both numbers.
	x32Bit = 0x40000000
)

// filterProgram assembles the classic-BPF seccomp program for e: a syscall
// of a blocked feature returns SECCOMP_RET_ERRNO|errno, everything else,
// including any syscall made under another architecture's ABI, is allowed
// (killing on an arch mismatch would be right for a sandbox but too harsh
// for a test harness).
func legacyFilterProgram(e emulation, arch uint32) ([]unix.SockFilter, error) {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompDataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		bpf.LoadAbsolute{Off: seccompDataNr, Size: 4},
	}
	for _, feat := range []string{FeatureOpenat2, FeatureLandlock} {
		errno, ok := e[feat]
		if !ok {
			continue
		}
		for _, nr := range syscallsOf[feat] {
			nrs := []uint32{nr}
			if arch == unix.AUDIT_ARCH_X86_64 {
				nrs = append(nrs, nr|x32Bit)
			}
			for _, n := range nrs {
				prog = append(prog,
					bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 1},
					bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | (uint32(errno) & unix.SECCOMP_RET_DATA)},
				)
			}
		}
	}
	prog = append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}

// TestFilterLegacyEquality: every syscall number below 512 (native and
// x32, native and foreign arch) gets the same decision from the old and
// the new emulation filter, for each spec.
func TestFilterLegacyEquality(t *testing.T) {
	for _, spec := range []string{"openat2=ENOSYS", "landlock=ENOSYS", "all=EPERM", "openat2=EACCES,landlock=EPERM"} {
		e, err := parseSpec(spec)
		require.NoError(t, err)
		for _, arch := range []bpfprog.Arch{bpfprog.ArchX86_64, bpfprog.ArchAArch64} {
			old, err := legacyFilterProgram(e, uint32(arch))
			require.NoError(t, err)
			oldVM, err := bpfprog.NewVM(old)
			require.NoError(t, err)
			prog, err := filterProgram(e, arch).Compile()
			require.NoError(t, err)
			newVM, err := bpfprog.NewVM(prog)
			require.NoError(t, err)
			for _, a := range []bpfprog.Arch{bpfprog.ArchX86_64, bpfprog.ArchAArch64, unix.AUDIT_ARCH_I386} {
				for nr := uint32(0); nr < 512; nr++ {
					for _, x32 := range []uint32{0, x32Bit} {
						d := bpfprog.Call(a, nr|x32)
						want, err := oldVM.Run(d)
						require.NoError(t, err)
						got, err := newVM.Run(d)
						require.NoError(t, err)
						assert.Equal(t, want, got, "%s %v %+v", spec, arch, d)
					}
				}
			}
		}
	}
}
