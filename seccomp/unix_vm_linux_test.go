package seccomp

import (
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
