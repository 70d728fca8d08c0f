package seccomp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
	"github.com/landjail/landjail/internal/kerneltest"
)

// TestExplainDecideMatchesProgram: the supervisor's walk over the
// decisions gives, for each call, the action the plain compiled program
// returns (run in bpfprog's VM): the explained filter answers what the
// plain one would.
func TestExplainDecideMatchesProgram(t *testing.T) {
	opt := Options{LandlockABI: 7, NetRestricted: true}
	plain, err := Build(opt)
	require.NoError(t, err)
	opt.Explain = true
	f, err := Build(opt)
	require.NoError(t, err)
	vm, err := bpfprog.NewVM(plain.prog)
	require.NoError(t, err)
	arch, err := bpfprog.NativeArch()
	require.NoError(t, err)
	calls := [][]uint64{
		{unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0},
		{unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0},
		{unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0},
		{unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP},
		{unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0},
		{unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW, 0},
		{unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
		{unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT},
		{unix.SYS_IOCTL, 0, unix.TIOCSTI},
		{unix.SYS_OPENAT, 0, 0, unix.O_CREAT, 0o4755},
		{unix.SYS_OPENAT, 0, 0, unix.O_RDONLY, 0o4755},
		{unix.SYS_FCHMODAT, 0, 0, 0o2755},
		{unix.SYS_BPF, 0},
		{unix.SYS_CLONE3, 0},
		{unix.SYS_GETPID},
	}
	for _, c := range calls {
		want, err := vm.Run(bpfprog.Call(arch, uint32(c[0]), c[1:]...))
		require.NoError(t, err)
		_, got := f.decide(uint32(c[0]), bpfprog.Call(arch, 0, c[1:]...).Args)
		assert.Equal(t, want, got, "syscall %d args %v", c[0], c[1:])
	}
}

// TestExplainLive: under Explain a refused call gets the same errno as
// under the plain filter (the control, which records nothing) and is
// recorded with its rule; an open for writing on a read-only mount and a
// read of a mode-0000 file by a thread without capabilities are recorded
// as the view's, and still decided by the kernel (EROFS, EACCES); an open
// the kernel allows is not recorded.
func TestExplainLive(t *testing.T) {
	requireSeccomp(t)
	if os.Geteuid() != 0 {
		kerneltest.Missing(t, "needs root: a private mount namespace on the test's thread")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("x"), 0))
	require.NoError(t, os.Chmod(secret, 0))
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ro, "f"), nil, 0o644))

	run := func(explain bool) (map[string]string, *Filter) {
		f, err := Build(Options{LandlockABI: 7, NetRestricted: true, Explain: explain})
		require.NoError(t, err)
		got := map[string]string{}
		onFilteredThread(t, f, func() {
			// unix.Socket is a raw syscall: see sysSocket.
			fd, err := sysSocket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
			got["udp"] = errName(err)
			unix.Close(fd)
			fd, err = sysSocket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			got["tcp"] = errName(err)
			unix.Close(fd)
			// This thread only: a mount namespace with dir/ro read-only.
			if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
				got["unshare"] = errName(err)
				return
			}
			unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
			if err := unix.Mount(ro, ro, "", unix.MS_BIND, ""); err == nil {
				err = unix.Mount("", ro, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
				got["mount"] = errName(err)
			}
			fd, err = unix.Open(filepath.Join(ro, "f"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
			got["write ro"] = errName(err)
			unix.Close(fd)
			fd, err = unix.Open(filepath.Join(ro, "new"), unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			got["create ro"] = errName(err)
			unix.Close(fd)
			fd, err = unix.Open(filepath.Join(dir, "rw"), unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			got["create rw"] = errName(err)
			unix.Close(fd)
			// Without capabilities, as the command runs.
			var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			var data [2]unix.CapUserData
			got["capset"] = errName(unix.Capset(&hdr, &data[0]))
			fd, err = unix.Open(secret, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			got["read 0000"] = errName(err)
			unix.Close(fd)
		})
		return got, f
	}
	plainGot, plain := run(false)
	got, f := run(true)
	assert.Equal(t, plainGot, got, "the same answers with and without Explain")
	if got["unshare"] != "" && strings.Contains(kerneltest.Emulated(), "ns=") {
		// No mount namespace (emulated): the filter's part only.
		assert.Equal(t, map[string]string{"udp": "EPERM", "tcp": "ok", "unshare": got["unshare"]}, got)
		require.Len(t, f.Events(), 1)
		assert.Equal(t, "inet-non-tcp", f.Events()[0].Rule)
		return
	}
	assert.Equal(t, map[string]string{"udp": "EPERM", "tcp": "ok", "mount": "ok", "write ro": "EROFS",
		"create ro": "EROFS", "create rw": "ok", "capset": "ok", "read 0000": "EACCES"}, got)
	assert.Nil(t, plain.Events(), "control: the plain filter records nothing")

	type ev struct{ syscall, rule, errno, path, access, why string }
	var evs []ev
	for _, e := range f.Events() {
		evs = append(evs, ev{e.Syscall, e.Rule, unix.ErrnoName(e.Errno), e.Path, e.Access, e.Why})
		if e.Rule == "inet-non-tcp" {
			assert.Equal(t, [3]uint64{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0}, e.Args)
		}
	}
	assert.Equal(t, []ev{
		{"socket", "inet-non-tcp", "EPERM", "", "", ""},
		{"openat", "", "EROFS", filepath.Join(ro, "f"), "write", ViewReadOnly},
		{"openat", "", "EROFS", filepath.Join(ro, "new"), "create", ViewReadOnly},
		{"openat", "", "EACCES", secret, "read", ViewNoPerm},
	}, evs)
}

// sysSocket is socket(2) through unix.Syscall, which tells the Go
// runtime the thread is in a syscall: x/sys/unix.Socket uses RawSyscall,
// and a thread of this process blocked there on the supervisor (another
// goroutine of this process) would hold up a garbage collection forever.
func sysSocket(domain, typ, proto int) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_SOCKET, uintptr(domain), uintptr(typ), uintptr(proto))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
