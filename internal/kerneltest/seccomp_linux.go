package kerneltest

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data (include/uapi/linux/seccomp.h).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	// x32Bit marks x32 system calls on x86_64 (__X32_SYSCALL_BIT); they
	// share AUDIT_ARCH_X86_64, so the filter blocks both numbers.
	x32Bit = 0x40000000
)

// syscallsOf lists the syscall numbers of each feature.
var syscallsOf = map[string][]uint32{
	FeatureOpenat2: {unix.SYS_OPENAT2},
	FeatureLandlock: {
		unix.SYS_LANDLOCK_CREATE_RULESET,
		unix.SYS_LANDLOCK_ADD_RULE,
		unix.SYS_LANDLOCK_RESTRICT_SELF,
	},
}

func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("kernel emulation on GOARCH %s: %w", runtime.GOARCH, errors.ErrUnsupported)
}

// filterProgram assembles the classic-BPF seccomp program for e: a syscall
// of a blocked feature returns SECCOMP_RET_ERRNO|errno, everything else,
// including any syscall made under another architecture's ABI, is allowed
// (killing on an arch mismatch would be right for a sandbox but too harsh
// for a test harness).
func filterProgram(e emulation, arch uint32) ([]unix.SockFilter, error) {
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

// install sets no_new_privs and installs the filter on every thread.
func install(filter []unix.SockFilter) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// no_new_privs is per thread; TSYNC copies it to the other threads.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", errno)
	}
	return nil
}

// verify checks that every blocked feature now fails with its errno, so a
// matrix mode can never silently run natively.
func verify(e emulation) error {
	if want, ok := e[FeatureOpenat2]; ok {
		fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
		if err == nil {
			unix.Close(fd)
		}
		if !errors.Is(err, want) {
			return fmt.Errorf("after installing the filter openat2 returned %v, want %v", err, want)
		}
	}
	if want, ok := e[FeatureLandlock]; ok {
		if _, err := llsyscall.LandlockGetABIVersion(); !errors.Is(err, want) {
			return fmt.Errorf("after installing the filter landlock_create_ruleset returned %v, want %v", err, want)
		}
	}
	return nil
}

func setup(spec string) error {
	e, err := parseSpec(spec)
	if err != nil {
		return err
	}
	if len(e) == 0 {
		active = e
		return nil
	}
	arch, err := auditArch()
	if err != nil {
		return err
	}
	filter, err := filterProgram(e, arch)
	if err != nil {
		return err
	}
	if err := install(filter); err != nil {
		return err
	}
	if err := verify(e); err != nil {
		return err
	}
	active = e
	return nil
}
