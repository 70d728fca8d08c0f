package seccomp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestFilterVMAllowUnix: the program of a filter with named UNIX sockets
// (kernel-free, in x/net/bpf's VM). Brokered (Landlock ABI 1-8): stream
// and seqpacket UNIX sockets allowed, datagram and raw ones refused with
// their flags or garbage in the high half, datagram pairs refused, every
// connect to the supervisor, listen supervised. The program installed
// without a broker (Program) refuses UNIX sockets as without AllowUnix
// and lets connect through. ABI 9: no connect rule (Landlock decides);
// AllowUnixSockets: likewise.
func TestFilterVMAllowUnix(t *testing.T) {
	tg := nativeArch(t)
	named := []UnixSocket{{Path: "/run/a.sock", Dev: 1, Ino: 2}}
	const notif = "user notif"
	run := func(t *testing.T, prog []unix.SockFilter, calls []call) {
		raw := make([]bpf.RawInstruction, len(prog))
		for i, r := range prog {
			raw[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}
		}
		ins, ok := bpf.Disassemble(raw)
		require.True(t, ok)
		vm, err := bpf.NewVM(ins)
		require.NoError(t, err)
		for _, c := range calls {
			r, err := vm.Run(seccompData(uint32(tg), c.nr, c.args...))
			require.NoError(t, err)
			got := retName(uint32(r))
			if uint32(r) == unix.SECCOMP_RET_USER_NOTIF {
				got = notif
			}
			assert.Equal(t, c.want, got, "%s", c.name)
		}
	}
	const nb = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	connect := func(want string) call { return sys("connect", unix.SYS_CONNECT, want, 3, 0x1000, 110) }

	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, AllowUnix: named})
	require.NoError(t, err)
	assert.True(t, f.Supervised())
	assert.True(t, f.Brokered())
	run(t, f.prog, []call{
		sock(unix.AF_UNIX, unix.SOCK_STREAM, 0, ok),
		sock(unix.AF_UNIX, unix.SOCK_STREAM|nb, 0, ok),
		sock(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, ok),
		sock(unix.AF_UNIX, unix.SOCK_DGRAM, 0, eperm),
		sock(unix.AF_UNIX, unix.SOCK_DGRAM|nb, 0, eperm),
		sock(unix.AF_UNIX, unix.SOCK_RAW, 0, eperm),
		sock(unix.AF_UNIX|hi32, unix.SOCK_DGRAM|hi32, 0, eperm),
		sys("socketpair(AF_UNIX, SOCK_DGRAM)", unix.SYS_SOCKETPAIR, eperm, unix.AF_UNIX, unix.SOCK_DGRAM, 0, 0),
		sys("socketpair(AF_UNIX, SOCK_STREAM)", unix.SYS_SOCKETPAIR, ok, unix.AF_UNIX, unix.SOCK_STREAM, 0, 0),
		connect(notif),
		sys("listen", unix.SYS_LISTEN, notif, 3, 16),
		sys("sendto", unix.SYS_SENDTO, ok, 3, 0x1000, 1, 0, 0x2000, 110),
		sys("io_uring_setup", unix.SYS_IO_URING_SETUP, eperm, 8, 0),
	})
	run(t, f.Program(), []call{
		sock(unix.AF_UNIX, unix.SOCK_STREAM, 0, eperm),
		sock(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, eperm),
		connect(ok),
	})
	for _, opt := range []Options{
		{LandlockABI: 9, NetRestricted: true, AllowUnix: named},
		{LandlockABI: 7, NetRestricted: true, AllowUnix: named, AllowUnixSockets: true},
	} {
		f, err := Build(opt)
		require.NoError(t, err)
		run(t, f.prog, []call{sock(unix.AF_UNIX, unix.SOCK_DGRAM, 0, ok), connect(ok)})
	}
	// Without Landlock the broker cannot be confined: refused.
	f, err = Build(Options{LandlockABI: 0, AllowUnix: named})
	require.NoError(t, err)
	assert.False(t, f.Brokered())
	run(t, f.prog, []call{sock(unix.AF_UNIX, unix.SOCK_STREAM, 0, eperm), connect(ok)})
}

// TestSunPath: the pathname the broker resolves is the one the kernel
// would (unix_validate_addr, unix_mkname_bsd): up to the first NUL within
// addrlen, the rest ignored; short, long and non-AF_UNIX addresses are
// EINVAL as the kernel answers, abstract ones EPERM (refused).
func TestSunPath(t *testing.T) {
	addr := func(family uint16, path string, n int) []byte {
		b := make([]byte, n)
		b[0], b[1] = byte(family), byte(family>>8) // little-endian, as sa_family_t on amd64 and arm64
		copy(b[2:], path)
		return b
	}
	for _, tc := range []struct {
		name  string
		sa    []byte
		want  string
		errno unix.Errno
	}{
		{"terminated", addr(unix.AF_UNIX, "/run/a.sock\x00", 14), "/run/a.sock", 0},
		{"unterminated, addrlen cuts", addr(unix.AF_UNIX, "/run/a.sock", 2+len("/run/a")), "/run/a", 0},
		{"NUL then more", addr(unix.AF_UNIX, "/run/a\x00/b.sock", 110), "/run/a", 0},
		{"full length, no NUL", addr(unix.AF_UNIX, strings.Repeat("x", 108), 110), strings.Repeat("x", 108), 0},
		{"relative", addr(unix.AF_UNIX, "a.sock", 8), "a.sock", 0},
		{"abstract", addr(unix.AF_UNIX, "\x00docker", 9), "", unix.EPERM},
		{"family only", addr(unix.AF_UNIX, "", 2), "", unix.EINVAL},
		{"empty", nil, "", unix.EINVAL},
		{"too long", addr(unix.AF_UNIX, "/a", 111), "", unix.EINVAL},
		{"AF_INET", addr(unix.AF_INET, "/run/a.sock", 16), "", unix.EINVAL},
		{"AF_UNSPEC", addr(unix.AF_UNSPEC, "/run/a.sock", 16), "", unix.EINVAL},
	} {
		got, errno := sunPath(tc.sa)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, tc.errno, errno, tc.name)
	}
}
