package kerneltest

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// syscallsOf lists the syscall numbers of each feature that fail
// whatever their arguments.
var syscallsOf = map[string][]uint32{
	FeatureOpenat2: {unix.SYS_OPENAT2},
	FeatureLandlock: {
		unix.SYS_LANDLOCK_CREATE_RULESET,
		unix.SYS_LANDLOCK_ADD_RULE,
		unix.SYS_LANDLOCK_RESTRICT_SELF,
	},
	FeatureNamespaces: {
		unix.SYS_SETNS,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	},
}

const (
	// cloneNewFlags are the CLONE_NEW* flags clone(2) takes (Docker's
	// default profile refuses the same set, 0x7E020000).
	cloneNewFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
)

// nsRules returns the rules of FeatureNamespaces with errno. unshare(2)
// fails whatever its flags, as in Docker's default profile, which allows
// it only with CAP_SYS_ADMIN (so unshare(CLONE_FS) alone fails too);
// clone(2) only with a CLONE_NEW* flag, since every fork uses it, and with
// userNS (FeatureNSCaps) only with one other than CLONE_NEWUSER: a user
// namespace alone can be made, nothing in it.
func nsRules(errno unix.Errno, userNS bool) []bpfprog.Rule {
	flags := uint32(cloneNewFlags)
	if userNS {
		flags &^= unix.CLONE_NEWUSER
	}
	rs := []bpfprog.Rule{
		{Nr: unix.SYS_UNSHARE, Action: bpfprog.Errno(errno)},
		{Nr: unix.SYS_CLONE, Conds: []bpfprog.Cond{bpfprog.ArgAnyBits(0, flags)}, Action: bpfprog.Errno(errno)},
		{Nr: unix.SYS_CLONE3, Action: bpfprog.Errno(unix.ENOSYS)},
	}
	for _, nr := range syscallsOf[FeatureNamespaces] {
		rs = append(rs, bpfprog.Rule{Nr: nr, Action: bpfprog.Errno(errno)})
	}
	return rs
}

// filterProgram builds the seccomp program for e: a syscall of a blocked
// feature, under its native or (x86_64) x32 number, returns its errno;
// everything else, including any syscall made under another
// architecture's ABI, is allowed (killing on an arch mismatch would be
// right for a sandbox but too harsh for a test harness).
func filterProgram(e emulation, arch bpfprog.Arch) bpfprog.Program {
	p := bpfprog.Program{Arch: arch, ForeignArch: bpfprog.Allow, PassX32: true, Default: bpfprog.Allow}
	for _, feat := range []string{FeatureOpenat2, FeatureLandlock, FeatureNamespaces} {
		errno, ok := e[feat]
		if !ok {
			continue
		}
		var rs []bpfprog.Rule
		if feat == FeatureNamespaces {
			_, userNS := e[FeatureNSCaps]
			rs = nsRules(errno, userNS)
		} else {
			for _, nr := range syscallsOf[feat] {
				rs = append(rs, bpfprog.Rule{Nr: nr, Action: bpfprog.Errno(errno)})
			}
		}
		for _, r := range rs {
			p.Rules = append(p.Rules, r)
			if arch.HasX32() {
				r.Nr |= bpfprog.X32SyscallBit
				p.Rules = append(p.Rules, r)
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
	if want, ok := e[FeatureNamespaces]; ok {
		// Each probe is harmless if the filter did not bite: invalid
		// arguments make the kernel refuse before doing anything.
		if err := rawSetns(); !errors.Is(err, want) {
			return fmt.Errorf("after installing the filter setns returned %v, want %v", err, want)
		}
		if err := rawUnshareInvalid(); !errors.Is(err, want) {
			return fmt.Errorf("after installing the filter unshare(CLONE_NEWNS|invalid) returned %v, want %v", err, want)
		}
		if err := rawFsopenInvalid(); !errors.Is(err, want) {
			return fmt.Errorf("after installing the filter fsopen returned %v, want %v", err, want)
		}
		if err := rawClone3Invalid(); !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("after installing the filter clone3 returned %v, want ENOSYS", err)
		}
	}
	return nil
}

// rawSetns calls setns(-1, 0): EBADF natively.
func rawSetns() error { return errnoErr(unix.Syscall(unix.SYS_SETNS, ^uintptr(0), 0, 0)) }

// rawUnshareInvalid calls unshare(CLONE_NEWNS|CSIGNAL bit): EINVAL
// natively, before any namespace is made.
func rawUnshareInvalid() error {
	return errnoErr(unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWNS|0x1, 0, 0))
}

// rawFsopenInvalid calls fsopen("tmpfs", invalid flags): EINVAL natively.
func rawFsopenInvalid() error {
	name, _ := unix.BytePtrFromString("tmpfs")
	return errnoErr(unix.Syscall(unix.SYS_FSOPEN, uintptr(unsafe.Pointer(name)), 0xffff, 0))
}

// rawClone3Invalid calls clone3(NULL, 0): EINVAL natively (size too
// small), before anything is cloned.
func rawClone3Invalid() error { return errnoErr(unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)) }

func errnoErr(_, _ uintptr, e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
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
