package seccomp

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// Kernel-free tests: the compiled program runs in x/net/bpf's VM on synthetic
// struct seccomp_data.

func vmOf(t *testing.T, f *Filter) *bpf.VM {
	t.Helper()
	raw := make([]bpf.RawInstruction, len(f.prog))
	for i, r := range f.prog {
		raw[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	ins, ok := bpf.Disassemble(raw)
	require.True(t, ok, "program disassembles completely")
	vm, err := bpf.NewVM(ins)
	require.NoError(t, err)
	return vm
}

// seccompData lays out struct seccomp_data as the kernel's filter sees it on
// a little-endian CPU. The kernel loads each 32-bit word in native byte order
// but x/net/bpf's VM loads network (big-endian) order, so every 32-bit word
// is stored big-endian at its native offset: nr at 0, arch at 4, and each
// __u64 argument as its low word at 16+8i followed by its high word.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	binary.BigEndian.PutUint32(b[8:], 0x401000) // instruction_pointer, low word
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[16+8*i+4:], uint32(a>>32))
	}
	return b
}

func nativeArch(t *testing.T) bpfprog.Arch {
	t.Helper()
	tg, err := currentTarget()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no filter for GOARCH %s", runtime.GOARCH)
	}
	require.NoError(t, err)
	return tg
}

func retName(r uint32) string {
	switch {
	case r == unix.SECCOMP_RET_ALLOW:
		return actAllow
	case r == unix.SECCOMP_RET_KILL_PROCESS:
		return actKill
	case r&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "errno " + unix.ErrnoName(unix.Errno(r&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("ret %#x", r)
}

type call struct {
	name string
	nr   uint32
	args []uint64
	want string
}

func sock(domain, typ, proto uint64, want string) call {
	return call{fmt.Sprintf("socket(%d,%#x,%d)", domain, typ, proto), unix.SYS_SOCKET, []uint64{domain, typ, proto}, want}
}

func sys(name string, nr uint32, want string, args ...uint64) call {
	return call{name, nr, args, want}
}

const (
	eperm  = actEPERM
	enosys = actENOSYS
	ok     = actAllow
	hi32   = 1 << 32 // garbage in an argument's high half
)

func TestFilterVM(t *testing.T) {
	nativeArch(t)
	const nb = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	common := []call{
		sys("read", unix.SYS_READ, ok, 0, 0, 0),
		sys("getpid", unix.SYS_GETPID, ok),
		sock(unix.AF_NETLINK, unix.SOCK_RAW, 0, ok),
		sys("socketpair(AF_UNIX)", unix.SYS_SOCKETPAIR, ok, unix.AF_UNIX, unix.SOCK_STREAM, 0, 0),
		sys("ioctl(TIOCSTI)", unix.SYS_IOCTL, eperm, 0, unix.TIOCSTI, 0),
		sys("ioctl(TIOCSTI|high)", unix.SYS_IOCTL, eperm, 0, hi32|unix.TIOCSTI, 0),
		sys("ioctl(TIOCLINUX)", unix.SYS_IOCTL, eperm, 3, unix.TIOCLINUX, 0),
		sys("ioctl(TCGETS)", unix.SYS_IOCTL, ok, 0, unix.TCGETS, 0),
		sys("ioctl(TIOCSCTTY)", unix.SYS_IOCTL, ok, 0, unix.TIOCSCTTY, 0),
		sys("io_uring_setup", unix.SYS_IO_URING_SETUP, eperm, 8, 0),
		sys("io_uring_enter", unix.SYS_IO_URING_ENTER, eperm),
		sys("io_uring_register", unix.SYS_IO_URING_REGISTER, eperm),
		sys("unshare(CLONE_NEWNS)", unix.SYS_UNSHARE, ok, unix.CLONE_NEWNS),
		// Access mode 3 (red team round 25, R25a-1); the other modes,
		// O_PATH and garbage in the high half stay.
		sys("openat(O_ACCMODE 3)", unix.SYS_OPENAT, actEACCES, 3, 0x1000, 3|unix.O_CLOEXEC),
		sys("openat(O_ACCMODE 3|O_NOFOLLOW)", unix.SYS_OPENAT, actEACCES, 3, 0x1000, 3|unix.O_NOFOLLOW),
		sys("openat(O_RDWR)", unix.SYS_OPENAT, ok, 3, 0x1000, unix.O_RDWR|unix.O_CLOEXEC),
		sys("openat(O_WRONLY|high)", unix.SYS_OPENAT, ok, 3, 0x1000, hi32|unix.O_WRONLY),
		sys("openat(O_PATH)", unix.SYS_OPENAT, ok, 3, 0x1000, unix.O_PATH),
		sys("clone(vfork)", unix.SYS_CLONE, ok, unix.CLONE_VM|unix.CLONE_VFORK|uint64(unix.SIGCHLD)),
		// Inode flags by path (red team round 26, R26b-1), under every
		// Options, AllowDangerous included.
		sys("file_setattr", unix.SYS_FILE_SETATTR, enosys, 3, 0x1000, 0x2000, 24, 0),
		sys("file_getattr", unix.SYS_FILE_GETATTR, enosys, 3, 0x1000, 0x2000, 24, 0),
	}
	// The pid rules apply under every Options: pid 0 (the caller) only.
	// pid_t and int arguments are read by the kernel from the low word,
	// so garbage in the high half changes nothing.
	const rlimitCPU, prioPGRP, prioUser, ioprioWhoPGRP, ioprioWhoUser = 0, 1, 2, 2, 3
	pidCalls := []call{
		sys("prlimit64(0, RLIMIT_NOFILE)", unix.SYS_PRLIMIT64, ok, 0, unix.RLIMIT_NOFILE, 0x1000, 0),
		sys("prlimit64(0|high)", unix.SYS_PRLIMIT64, ok, hi32, rlimitCPU, 0x1000, 0),
		sys("prlimit64(1234, RLIMIT_CPU)", unix.SYS_PRLIMIT64, eperm, 1234, rlimitCPU, 0x1000, 0),
		sys("prlimit64(1234, get)", unix.SYS_PRLIMIT64, eperm, 1234, unix.RLIMIT_NOFILE, 0, 0x1000),
		sys("prlimit64(-1)", unix.SYS_PRLIMIT64, eperm, 0xffffffff, rlimitCPU, 0x1000, 0),
		sys("setpriority(PRIO_PROCESS, 0)", unix.SYS_SETPRIORITY, ok, unix.PRIO_PROCESS, 0, 19),
		sys("setpriority(PRIO_PROCESS, 0|high)", unix.SYS_SETPRIORITY, ok, hi32|unix.PRIO_PROCESS, hi32, 19),
		sys("setpriority(PRIO_PROCESS, 1234)", unix.SYS_SETPRIORITY, eperm, unix.PRIO_PROCESS, 1234, 19),
		sys("setpriority(PRIO_PGRP, 0)", unix.SYS_SETPRIORITY, eperm, prioPGRP, 0, 19),
		sys("setpriority(PRIO_USER, 0)", unix.SYS_SETPRIORITY, eperm, prioUser, 0, 19),
		sys("getpriority(PRIO_USER, 1234)", unix.SYS_GETPRIORITY, ok, prioUser, 1234),
		sys("ioprio_set(IOPRIO_WHO_PROCESS, 0)", unix.SYS_IOPRIO_SET, ok, 1, 0, 3<<13),
		sys("ioprio_set(IOPRIO_WHO_PROCESS, 1234)", unix.SYS_IOPRIO_SET, eperm, 1, 1234, 3<<13),
		sys("ioprio_set(IOPRIO_WHO_PGRP, 0)", unix.SYS_IOPRIO_SET, eperm, ioprioWhoPGRP, 0, 3<<13),
		sys("ioprio_set(IOPRIO_WHO_USER, 0)", unix.SYS_IOPRIO_SET, eperm, ioprioWhoUser, 0, 3<<13),
		sys("ioprio_get(IOPRIO_WHO_USER, 1234)", unix.SYS_IOPRIO_GET, ok, ioprioWhoUser, 1234),
		sys("sched_getaffinity(1234)", unix.SYS_SCHED_GETAFFINITY, ok, 1234, 128, 0x1000),
		sys("kill(1234)", unix.SYS_KILL, ok, 1234, 15),
	}
	for _, sc := range []string{"sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "migrate_pages", "move_pages"} {
		pidCalls = append(pidCalls,
			sys(sc+"(0)", syscallNumbers()[sc], ok, 0, 0x80, 0x1000),
			sys(sc+"(1234)", syscallNumbers()[sc], eperm, 1234, 0x80, 0x1000),
			sys(sc+"(1234|high)", syscallNumbers()[sc], eperm, hi32|1234, 0x80, 0x1000))
	}
	common = append(common, pidCalls...)
	dangerousCalls := func(want string) []call {
		var cs []call
		for _, name := range []string{"keyctl", "add_key", "request_key", "bpf", "perf_event_open",
			"userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
			"delete_module", "open_by_handle_at", "fanotify_init", "fanotify_mark", "listmount", "statmount"} {
			cs = append(cs, sys(name, syscallNumbers()[name], want))
		}
		return append(cs,
			sys("unshare(CLONE_NEWUSER)", unix.SYS_UNSHARE, want, unix.CLONE_NEWUSER),
			sys("unshare(CLONE_NEWUSER|CLONE_NEWNS|high)", unix.SYS_UNSHARE, want, hi32|unix.CLONE_NEWUSER|unix.CLONE_NEWNS),
			sys("clone(CLONE_NEWUSER)", unix.SYS_CLONE, want, unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)),
		)
	}
	strictNet := []call{
		sock(unix.AF_INET, unix.SOCK_STREAM, 0, ok),
		sock(unix.AF_INET, unix.SOCK_STREAM|nb, unix.IPPROTO_TCP, ok),
		sock(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, ok),
		sock(unix.AF_INET|hi32, unix.SOCK_STREAM, hi32, ok), // the kernel reads ints: high half ignored
		sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, eperm),
		sock(unix.AF_INET6, unix.SOCK_STREAM|nb, unix.IPPROTO_MPTCP, eperm),
		sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, eperm),
		sock(unix.AF_INET, unix.SOCK_SEQPACKET, 0, eperm),
		sock(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, eperm),
		sock(unix.AF_INET6, unix.SOCK_RAW, unix.IPPROTO_RAW, eperm),
		sock(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP, eperm), // ping socket
		sock(unix.AF_PACKET, unix.SOCK_RAW, 0x0300, eperm),
		sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0, eperm),
		sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0, eperm),
		sock(unix.AF_XDP, unix.SOCK_RAW, 0, eperm),
		sock(unix.AF_BLUETOOTH, unix.SOCK_STREAM, 0, eperm),
		sock(unix.AF_NETLINK, unix.SOCK_DGRAM, 0, ok),
	}
	udp := func(want string) []call {
		return []call{
			sock(unix.AF_INET, unix.SOCK_DGRAM, 0, want),
			sock(unix.AF_INET, unix.SOCK_DGRAM|nb, unix.IPPROTO_UDP, want),
			sock(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0, want),
		}
	}
	hostNet := []call{
		sock(unix.AF_INET, unix.SOCK_DGRAM, 0, ok),
		sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, ok),
		sock(unix.AF_PACKET, unix.SOCK_RAW, 0, ok),
	}
	unixSock := func(want string) []call {
		return []call{
			sock(unix.AF_UNIX, unix.SOCK_STREAM, 0, want),
			sock(unix.AF_UNIX, unix.SOCK_DGRAM|nb, 0, want),
			sock(hi32|unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, want),
		}
	}
	ptraceCalls := func(want string) []call {
		return []call{
			sys("ptrace", unix.SYS_PTRACE, want, unix.PTRACE_ATTACH, 1),
			sys("process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, want),
			sys("process_vm_readv", unix.SYS_PROCESS_VM_READV, want),
			sys("pidfd_getfd", unix.SYS_PIDFD_GETFD, want),
			sys("get_robust_list", unix.SYS_GET_ROBUST_LIST, want, 1234),
			sys("kcmp", unix.SYS_KCMP, want, 1, 1234),
			sys("process_madvise", unix.SYS_PROCESS_MADVISE, want, 3),
		}
	}

	for _, tc := range []struct {
		name  string
		opt   Options
		calls []call
	}{
		{"default ABI 7", Options{LandlockABI: 7},
			slices.Concat(common, unixSock(eperm), hostNet, dangerousCalls(eperm), ptraceCalls(ok),
				[]call{sys("clone3", unix.SYS_CLONE3, enosys)})},
		{"ABI 9 covers unix sockets", Options{LandlockABI: 9}, slices.Concat(common, unixSock(ok))},
		{"AllowUnixSockets", Options{LandlockABI: 7, AllowUnixSockets: true}, slices.Concat(common, unixSock(ok))},
		{"NetRestricted", Options{LandlockABI: 7, NetRestricted: true},
			slices.Concat(common, unixSock(eperm), strictNet, udp(eperm))},
		{"NetRestricted AllowDNS", Options{LandlockABI: 7, NetRestricted: true, AllowDNS: true},
			slices.Concat(common, unixSock(eperm), strictNet, udp(ok))},
		{"NetRestricted UDPPrivateNetwork", Options{LandlockABI: 7, NetRestricted: true, UDPPrivateNetwork: true},
			slices.Concat(common, unixSock(eperm), strictNet, udp(ok))},
		{"NetRestricted AllowUnixSockets", Options{LandlockABI: 7, NetRestricted: true, AllowUnixSockets: true},
			slices.Concat(common, unixSock(ok), strictNet)},
		{"NetRestricted ABI 3 denies TCP too", Options{LandlockABI: 3, NetRestricted: true},
			slices.Concat(common, udp(eperm), []call{
				sock(unix.AF_INET, unix.SOCK_STREAM, 0, eperm),
				sock(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP, eperm),
			})},
		{"AllowDangerous", Options{LandlockABI: 7, AllowDangerous: true},
			slices.Concat(common, dangerousCalls(ok), []call{sys("clone3", unix.SYS_CLONE3, ok)})},
		{"no Landlock", Options{LandlockABI: 0}, slices.Concat(common, unixSock(eperm), ptraceCalls(eperm))},
		{"no Landlock AllowDangerous", Options{LandlockABI: 0, AllowDangerous: true}, slices.Concat(common, ptraceCalls(ok))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Build(tc.opt)
			require.NoError(t, err)
			vm := vmOf(t, f)
			tg := nativeArch(t)
			for _, c := range tc.calls {
				r, err := vm.Run(seccompData(uint32(tg), c.nr, c.args...))
				require.NoError(t, err)
				assert.Equal(t, c.want, retName(uint32(r)), "%s", c.name)
			}
		})
	}
}

func TestFilterVMArch(t *testing.T) {
	tg := nativeArch(t)
	f, err := Build(Options{LandlockABI: 7, AllowUnixSockets: true, AllowDangerous: true})
	require.NoError(t, err)
	vm := vmOf(t, f)
	run := func(arch, nr uint32, args ...uint64) string {
		r, err := vm.Run(seccompData(arch, nr, args...))
		require.NoError(t, err)
		return retName(uint32(r))
	}
	assert.Equal(t, ok, run(uint32(tg), unix.SYS_READ))
	for _, other := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64, 0} {
		if other == uint32(tg) {
			continue
		}
		// Number 0 (read on x86_64) and the i386 socketcall (102).
		assert.Equal(t, actKill, run(other, 0), "arch %#x", other)
		assert.Equal(t, actKill, run(other, 102, 1), "arch %#x socketcall", other)
	}
	if tg.HasX32() {
		assert.Equal(t, actKill, run(uint32(tg), bpfprog.X32SyscallBit|unix.SYS_READ))
		// x32's socket number is 41 as on x86_64: without the x32 rule an
		// x32 socket(AF_UNIX) would dodge the unix-socket rule's number.
		assert.Equal(t, actKill, run(uint32(tg), bpfprog.X32SyscallBit|unix.SYS_SOCKET, unix.AF_UNIX))
	}
}

func TestRules(t *testing.T) {
	nativeArch(t)
	f, err := Build(Options{LandlockABI: 7})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range f.Rules() {
		assert.NotEmpty(t, r.Name)
		assert.NotEmpty(t, r.Syscall, r.Name)
		assert.NotEmpty(t, r.Reason, r.Name)
		assert.Contains(t, []string{actEPERM, actENOSYS, actENOTSUP, actEACCES, actKill, actAllow, actNotify}, r.Action, r.Name)
		assert.False(t, seen[r.Name], "rule name %q is unique", r.Name)
		seen[r.Name] = true
	}
	for _, name := range []string{"arch", "unix-socket", "socketpair", "tiocsti", "tioclinux",
		"io_uring_setup", "keyctl", "bpf", "open_by_handle_at", "fanotify_init", "fanotify_mark", "unshare-newuser", "clone-newuser", "clone3", "ptrace"} {
		assert.True(t, seen[name], "rule %q reported", name)
	}

	// Rules is a copy.
	rs := f.Rules()
	rs[0].Name = "changed"
	assert.Equal(t, "arch", f.Rules()[0].Name)

	// JSON round trip with the documented tags.
	b, err := json.Marshal(f.Rules()[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"action":"kill process"`)
	var back Rule
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, f.Rules()[0], back)

	m := rulesByName(t, Options{LandlockABI: 7, AllowUnixSockets: true, NetRestricted: true, AllowDNS: true})
	assert.Equal(t, actAllow, m["unix-socket"].Action)
	assert.Contains(t, m["unix-socket"].Reason, "UNCONFINED")
	assert.Equal(t, actAllow, m["inet-udp"].Action)
	assert.Contains(t, m["inet-udp"].Reason, "all UDP")
	assert.Equal(t, actEPERM, m["inet-non-tcp"].Action)
	assert.Contains(t, m["inet-non-tcp"].Args, "MPTCP")
	assert.Equal(t, actEPERM, m["net-family"].Action)

	// UDPPrivateNetwork: the same rule, reported as held by the
	// namespace, not unconfined.
	m = rulesByName(t, Options{LandlockABI: 7, NetRestricted: true, UDPPrivateNetwork: true})
	assert.Equal(t, actAllow, m["inet-udp"].Action)
	assert.NotContains(t, m["inet-udp"].Reason, "UNCONFINED")
	assert.Contains(t, m["inet-udp"].Reason, "network namespace")

	m = rulesByName(t, Options{LandlockABI: 7})
	assert.Equal(t, actEPERM, m["unix-socket"].Action)
	assert.Equal(t, actAllow, m["network"].Action)
	assert.Equal(t, actAllow, m["ptrace"].Action)
	assert.True(t, strings.Contains(m["ptrace"].Reason, "Landlock"))

	m = rulesByName(t, Options{LandlockABI: 0})
	assert.Equal(t, actEPERM, m["ptrace"].Action)
	assert.Equal(t, actEPERM, m["pidfd_getfd"].Action)
	assert.Equal(t, actEPERM, m["get_robust_list"].Action)
	assert.Equal(t, actEPERM, m["kcmp"].Action)
}

// TestRulesPID: the pid rules are reported under every Options, each
// with its condition, and the signal rule says whether Landlock scopes
// signals on this ABI.
func TestRulesPID(t *testing.T) {
	for _, opt := range []Options{{LandlockABI: 7}, {LandlockABI: 0, AllowDangerous: true}, {LandlockABI: 7, NetRestricted: true}} {
		m := rulesByName(t, opt)
		for _, name := range []string{"pid-prlimit64", "pid-setpriority-which", "pid-setpriority-who",
			"pid-ioprio_set-which", "pid-ioprio_set-who", "pid-sched_setaffinity", "pid-sched_setscheduler",
			"pid-sched_setparam", "pid-sched_setattr", "pid-migrate_pages", "pid-move_pages"} {
			if assert.Contains(t, m, name, "%+v", opt) {
				assert.Equal(t, actEPERM, m[name].Action, name)
				assert.Contains(t, m[name].Args, "!= ", name)
			}
		}
	}
	assert.NotContains(t, rulesByName(t, Options{LandlockABI: 6})["pid-signals"].Reason, "UNCONFINED")
	assert.Contains(t, rulesByName(t, Options{LandlockABI: 5})["pid-signals"].Reason, "UNCONFINED")
}

// BenchmarkBuild: Build for Landlock ABI 7 with the network restricted
// (landjail run's default): "precompiled" is what a run pays (the
// generated table), "compiled" what any other option set pays (rules
// made, both programs compiled by bpfprog, never the table).
func BenchmarkBuild(b *testing.B) {
	opt := Options{LandlockABI: 7, NetRestricted: true}
	tg, err := currentTarget()
	if err != nil {
		b.Skip(err)
	}
	b.Run("precompiled", func(b *testing.B) {
		var f *Filter
		for b.Loop() {
			var err error
			if f, err = Build(opt); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(f.prog)), "insns")
	})
	b.Run("compiled", func(b *testing.B) {
		var prog []sockFilter
		for b.Loop() {
			rs := rulesFor(opt, tg.String(), tg.HasX32())
			plain, _ := plainRules(rs)
			for _, set := range [][]rule{rs, plain} {
				p, err := program(set, tg)
				if err != nil {
					b.Fatal(err)
				}
				if prog, err = p.Compile(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(prog)), "insns")
	})
}

// TestFilterVMNetBypasses covers the rules for the network routes around
// Landlock: MSG_FASTOPEN, listen's autobind, datagram
// socketpairs and netlink families.
func TestFilterVMNetBypasses(t *testing.T) {
	tg := nativeArch(t)
	const (
		fo     = unix.MSG_FASTOPEN
		notify = actNotify
	)
	pair := func(domain, typ uint64, want string) call {
		return call{fmt.Sprintf("socketpair(%d,%#x)", domain, typ), unix.SYS_SOCKETPAIR, []uint64{domain, typ, 0, 0}, want}
	}
	nl := func(proto uint64, want string) call {
		return sock(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto, want)
	}
	fastOpen := func(want string) []call {
		return []call{
			sys("sendto(MSG_FASTOPEN)", unix.SYS_SENDTO, want, 3, 0, 1, fo, 0x1000, 16),
			sys("sendto(MSG_FASTOPEN|MSG_NOSIGNAL)", unix.SYS_SENDTO, want, 3, 0, 1, fo|unix.MSG_NOSIGNAL, 0x1000, 16),
			sys("sendto(MSG_FASTOPEN|high)", unix.SYS_SENDTO, want, 3, 0, 1, hi32|fo, 0x1000, 16),
			sys("sendmsg(MSG_FASTOPEN)", unix.SYS_SENDMSG, want, 3, 0x1000, fo),
			sys("sendmmsg(MSG_FASTOPEN)", unix.SYS_SENDMMSG, want, 3, 0x1000, 1, fo),
		}
	}
	plainSend := []call{
		sys("sendto(0)", unix.SYS_SENDTO, ok, 3, 0, 1, 0, 0, 0),
		sys("sendto(MSG_NOSIGNAL|MSG_DONTWAIT)", unix.SYS_SENDTO, ok, 3, 0, 1, unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0),
		sys("sendto(flags in high half only)", unix.SYS_SENDTO, ok, 3, 0, 1, hi32, 0, 0),
		// MSG_FASTOPEN's bit in another argument does not matter.
		sys("sendto(len == MSG_FASTOPEN)", unix.SYS_SENDTO, ok, 3, 0, fo, 0, 0, 0),
		sys("sendmsg(0)", unix.SYS_SENDMSG, ok, 3, 0x1000, 0),
		sys("sendmmsg(vlen == MSG_FASTOPEN)", unix.SYS_SENDMMSG, ok, 3, 0x1000, fo, 0),
	}
	pairs := func(dgram string) []call {
		return []call{
			pair(unix.AF_UNIX, unix.SOCK_STREAM, ok),
			pair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, ok),
			pair(unix.AF_UNIX, unix.SOCK_SEQPACKET, ok),
			pair(hi32|unix.AF_UNIX, hi32|unix.SOCK_SEQPACKET, ok),
			pair(unix.AF_UNIX, unix.SOCK_DGRAM, dgram),
			pair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, dgram),
			pair(unix.AF_UNIX, unix.SOCK_RAW, dgram), // AF_UNIX makes it SOCK_DGRAM
			pair(unix.AF_UNIX, unix.SOCK_RDM, dgram),
		}
	}
	netlink := func(other string) []call {
		return []call{
			nl(unix.NETLINK_ROUTE, ok),
			sock(unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_ROUTE, ok),
			nl(hi32|unix.NETLINK_ROUTE, ok),
			nl(unix.NETLINK_SOCK_DIAG, other),
			sock(unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_SOCK_DIAG, other),
			nl(unix.NETLINK_NETFILTER, other),
			nl(unix.NETLINK_GENERIC, other),
			nl(unix.NETLINK_KOBJECT_UEVENT, other),
			nl(unix.NETLINK_AUDIT, other),
			nl(unix.NETLINK_CONNECTOR, other),
			nl(unix.NETLINK_XFRM, other),
			nl(unix.NETLINK_CRYPTO, other),
			nl(hi32|unix.NETLINK_SOCK_DIAG, other),
		}
	}
	listen := func(want string) []call {
		return []call{sys("listen", unix.SYS_LISTEN, want, 3, 128)}
	}
	for _, tc := range []struct {
		name       string
		opt        Options
		supervised bool
		calls      []call
	}{
		{"NetRestricted", Options{LandlockABI: 7, NetRestricted: true}, false,
			slices.Concat(fastOpen(eperm), plainSend, pairs(eperm), netlink(eperm), listen(eperm),
				[]call{pair(unix.AF_TIPC, unix.SOCK_SEQPACKET, eperm), pair(unix.AF_INET, unix.SOCK_STREAM, eperm)})},
		{"NetRestricted BindTCP", Options{LandlockABI: 7, NetRestricted: true, BindTCP: []uint16{8080}}, true,
			slices.Concat(fastOpen(eperm), plainSend, pairs(eperm), netlink(eperm), listen(notify))},
		{"NetRestricted AllowUnixSockets", Options{LandlockABI: 7, NetRestricted: true, AllowUnixSockets: true}, true,
			slices.Concat(fastOpen(eperm), pairs(ok), netlink(eperm), listen(notify),
				[]call{pair(unix.AF_TIPC, unix.SOCK_SEQPACKET, eperm)})},
		{"NetRestricted ABI 9", Options{LandlockABI: 9, NetRestricted: true}, true,
			slices.Concat(fastOpen(eperm), pairs(ok), netlink(eperm), listen(notify))},
		{"NetRestricted ABI 3", Options{LandlockABI: 3, NetRestricted: true}, false,
			slices.Concat(fastOpen(eperm), pairs(eperm), netlink(eperm), listen(ok))},
		{"host network", Options{LandlockABI: 7}, false,
			slices.Concat(fastOpen(ok), plainSend, pairs(eperm), netlink(ok), listen(ok),
				[]call{pair(unix.AF_TIPC, unix.SOCK_SEQPACKET, ok)})},
		{"host network AllowUnixSockets", Options{LandlockABI: 7, AllowUnixSockets: true, BindTCP: []uint16{80}}, false,
			slices.Concat(fastOpen(ok), pairs(ok), listen(ok))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Build(tc.opt)
			require.NoError(t, err)
			assert.Equal(t, tc.supervised, f.Supervised())
			vm := vmOf(t, f)
			for _, c := range tc.calls {
				r, err := vm.Run(seccompData(uint32(tg), c.nr, c.args...))
				require.NoError(t, err)
				got := retName(uint32(r))
				if uint32(r) == unix.SECCOMP_RET_USER_NOTIF {
					got = actNotify
				}
				assert.Equal(t, c.want, got, "%s", c.name)
			}
		})
	}
}

func TestRulesNetBypasses(t *testing.T) {
	nativeArch(t)
	m := rulesByName(t, Options{LandlockABI: 7, NetRestricted: true})
	for _, name := range []string{"fastopen-sendto", "fastopen-sendmsg", "fastopen-sendmmsg"} {
		assert.Equal(t, actEPERM, m[name].Action, name)
		assert.Contains(t, m[name].Reason, "landlock-lsm/linux#41", name)
	}
	assert.Equal(t, actEPERM, m["listen"].Action)
	assert.Contains(t, m["listen"].Reason, "landlock-lsm/linux#15")
	assert.Equal(t, actEPERM, m["socketpair-dgram"].Action)
	assert.Contains(t, m["socketpair-dgram"].Reason, "sendto")
	assert.NotContains(t, m["socketpair"].Reason, "connects only its two ends")
	assert.Equal(t, actEPERM, m["netlink"].Action)
	assert.Contains(t, m["netlink"].Reason, "NETLINK_SOCK_DIAG")
	assert.Equal(t, actAllow, m["netlink-route"].Action)

	m = rulesByName(t, Options{LandlockABI: 7, NetRestricted: true, BindTCP: []uint16{8443, 0}})
	assert.Equal(t, actNotify, m["listen"].Action)
	assert.Contains(t, m["listen"].Reason, "{8443, 0 (any port)}")
	assert.Contains(t, m["listen"].Reason, "ENOSYS")

	m = rulesByName(t, Options{LandlockABI: 7, AllowUnixSockets: true})
	assert.Equal(t, actAllow, m["socketpair"].Action)
	assert.Contains(t, m["socketpair"].Reason, "datagram pair")
	_, ok := m["socketpair-dgram"]
	assert.False(t, ok)
}

// rulesByName builds the filter for opt and returns its rules by name.
func rulesByName(t *testing.T, opt Options) map[string]Rule {
	t.Helper()
	f, err := Build(opt)
	require.NoError(t, err)
	m := map[string]Rule{}
	for _, r := range f.Rules() {
		m[r.Name] = r
	}
	return m
}
