package kerneltest

import (
	"errors"
	"fmt"
	"runtime"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
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

// filterProgram builds the seccomp program for e: a syscall of a blocked
// feature, under its native or (x86_64) x32 number, returns its errno;
// everything else, including any syscall made under another
// architecture's ABI, is allowed (killing on an arch mismatch would be
// right for a sandbox but too harsh for a test harness).
func filterProgram(e emulation, arch bpfprog.Arch) bpfprog.Program {
	p := bpfprog.Program{Arch: arch, ForeignArch: bpfprog.Allow, PassX32: true, Default: bpfprog.Allow}
	for _, feat := range []string{FeatureOpenat2, FeatureLandlock} {
		errno, ok := e[feat]
		if !ok {
			continue
		}
		for _, nr := range syscallsOf[feat] {
			p.Rules = append(p.Rules, bpfprog.Rule{Nr: nr, Action: bpfprog.Errno(errno)})
			if arch.HasX32() {
				p.Rules = append(p.Rules, bpfprog.Rule{Nr: nr | bpfprog.X32SyscallBit, Action: bpfprog.Errno(errno)})
			}
		}
	}
	return p
}

// install sets no_new_privs and installs the filter on every thread.
func install(filter []unix.SockFilter) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// no_new_privs is per thread; TSYNC copies it to the other threads.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, err := bpfprog.SetModeFilter(filter, unix.SECCOMP_FILTER_FLAG_TSYNC); err != nil {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", err)
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
	arch, err := bpfprog.NativeArch()
	if err != nil {
		return fmt.Errorf("kernel emulation: %w", err)
	}
	filter, err := filterProgram(e, arch).Compile()
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
