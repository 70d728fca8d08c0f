package seccomp

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
)

// Live tests: the filter is installed on a throwaway goroutine locked to its
// OS thread, which exits locked so the Go runtime destroys the thread; the
// rest of the test process stays unfiltered, as exec's spawner thread does.

// envProbe makes the test binary run probeMain instead of the tests: a child
// forked from the filtered thread reports what its own syscalls return.
const envProbe = "LANDJAIL_SECCOMP_PROBE"

// probes are the syscalls both the filtered thread and its children try.
var probes = []struct {
	name string
	fn   func() error
}{
	{"socket(AF_UNIX)", func() error { return closeFd(unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)) }},
	{"socketpair(AF_UNIX)", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}},
	{"socket(AF_INET, SOCK_DGRAM)", func() error { return closeFd(unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0)) }},
	{"socket(AF_INET6, SOCK_DGRAM)", func() error { return closeFd(unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM, 0)) }},
	{"socket(AF_INET, SOCK_STREAM)", func() error { return closeFd(unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)) }},
	{"socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)", func() error {
		return closeFd(unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP))
	}},
	{"socket(AF_PACKET)", func() error { return closeFd(unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)) }},
	{"ioctl(TIOCSTI)", func() error { return ioctlDevNull(unix.TIOCSTI) }},
	{"ioctl(TIOCSTI|1<<32)", func() error { return ioctlDevNull(1<<32 | unix.TIOCSTI) }},
	{"ioctl(TIOCLINUX)", func() error { return ioctlDevNull(unix.TIOCLINUX) }},
	// Red team round 31: a line discipline change (R31c-20) and
	// /dev/userfaultfd's userfaultfd (R31c-18); ENOTTY natively on
	// /dev/null.
	{"ioctl(TIOCSETD)", func() error { return ioctlDevNull(unix.TIOCSETD) }},
	{"ioctl(USERFAULTFD_IOC_NEW)", func() error { return ioctlDevNull(userfaultfdIOCNew) }},
	// Of the test process's parent (another process: the host's, without
	// a PID namespace), at the size of Linux 6.13 and one larger (the
	// request is extensible): granted natively.
	{"ioctl(PIDFD_GET_INFO)", func() error { return pidfdGetInfo(0xc050ff0b) }},
	{"ioctl(PIDFD_GET_INFO, 96 bytes)", func() error { return pidfdGetInfo(0xc060ff0b) }},
	// entries 0 is invalid: EINVAL natively, never a ring.
	{"io_uring_setup", func() error {
		var params [120]byte
		return closeFd(rawFd(unix.Syscall(unix.SYS_IO_URING_SETUP, 0, uintptr(unsafe.Pointer(&params)), 0)))
	}},
	// A read lease on a file of our own opened read-only: granted natively
	// (red team round 9, R9-7), then released.
	{"fcntl(F_SETLEASE)", func() error {
		f, err := os.CreateTemp("", "lease")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		f.Close()
		fd, err := unix.Open(f.Name(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
			return err
		}
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		return err
	}},
	// dnotify on a directory of our own (red team R11b-3): granted
	// natively, then cleared.
	{"fcntl(F_NOTIFY)", func() error {
		fd, err := unix.Open(os.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_NOTIFY, 0x1 /* DN_ACCESS */); err != nil {
			return err
		}
		_, err = unix.FcntlInt(uintptr(fd), unix.F_NOTIFY, 0)
		return err
	}},
	// Kernel AIO (red team round 8, R8-1): 0 events, and a null context,
	// are EINVAL natively.
	{"io_setup", func() error {
		var ctx uint64
		return errnoOf(unix.Syscall(unix.SYS_IO_SETUP, 0, uintptr(unsafe.Pointer(&ctx)), 0))
	}},
	{"io_submit", func() error { return errnoOf(unix.Syscall(unix.SYS_IO_SUBMIT, 0, 0, 0)) }},
	// A multithreaded process gets EINVAL natively.
	{"unshare(CLONE_NEWUSER)", func() error { return unix.Unshare(unix.CLONE_NEWUSER) }},
	// CLONE_NEWUSER|CLONE_FS is always EINVAL natively: nothing is cloned.
	{"clone(CLONE_NEWUSER|CLONE_FS)", func() error {
		return errnoOf(unix.RawSyscall(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS, 0, 0))
	}},
	// A NULL, zero-sized argument is EINVAL natively.
	{"clone3", func() error { return errnoOf(unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)) }},
	// An unknown command: EOPNOTSUPP / EINVAL natively.
	{"keyctl", func() error { return errnoOf(unix.Syscall(unix.SYS_KEYCTL, 9999, 0, 0)) }},
	{"bpf", func() error { return errnoOf(unix.Syscall(unix.SYS_BPF, 9999, 0, 0)) }},
	{"open_by_handle_at", func() error { return errnoOf(unix.Syscall(unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(0), 0, 0)) }},
	// Unprivileged since Linux 5.13 with FAN_REPORT_FID: natively ok.
	{"fanotify_init(FAN_REPORT_DFID_NAME)", func() error {
		return closeFd(unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_CLOEXEC, unix.O_RDONLY))
	}},
	// No request: natively EFAULT (red team round 15, R15b-2: the host's
	// mount table under Landlock alone).
	{"listmount", func() error { return errnoOf(unix.Syscall6(unix.SYS_LISTMOUNT, 0, 0, 0, 0, 0, 0)) }},
	{"statmount", func() error { return errnoOf(unix.Syscall6(unix.SYS_STATMOUNT, 0, 0, 0, 0, 0, 0)) }},
	{"getpid", func() error { unix.Getpid(); return nil }},
	// No address: natively EINVAL (tcp_sendmsg_fastopen needs one), never a SYN.
	{"sendto(MSG_FASTOPEN)", func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN|unix.MSG_NOSIGNAL, nil)
	}},
	{"socketpair(AF_UNIX, SOCK_DGRAM)", func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}},
	{"socket(AF_NETLINK, NETLINK_SOCK_DIAG)", func() error {
		return closeFd(unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG))
	}},
	{"socket(AF_NETLINK, NETLINK_ROUTE)", func() error {
		return closeFd(unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE))
	}},
	// Set-ID bits: natively each succeeds on a file of the prober's own.
	{"fchmodat(04755)", func() error {
		return withProbeFile(func(p string) error { return unix.Fchmodat(unix.AT_FDCWD, p, 0o4755, 0) })
	}},
	{"fchmod(02755)", func() error {
		return withProbeFile(func(p string) error {
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Fchmod(fd, 0o2755)
		})
	}},
	{"fchmodat(0755)", func() error {
		return withProbeFile(func(p string) error { return unix.Fchmodat(unix.AT_FDCWD, p, 0o755, 0) })
	}},
	{"openat(O_CREAT, 04755)", func() error {
		return withProbeFile(func(p string) error {
			return closeFd(unix.Open(p+".new", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755))
		})
	}},
	// Without O_CREAT the mode is not read: a stray set-ID bit there is no
	// reason to refuse an open.
	{"openat(O_RDONLY, mode 04755)", func() error {
		return withProbeFile(func(p string) error {
			b, err := unix.BytePtrFromString(p)
			if err != nil {
				return err
			}
			dirfd := unix.AT_FDCWD
			return closeFd(rawFd(unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(b)), unix.O_RDONLY|unix.O_CLOEXEC, 0o4755, 0, 0)))
		})
	}},
	{"mkdirat(02755)", func() error {
		return withProbeFile(func(p string) error { return unix.Mkdirat(unix.AT_FDCWD, p+".d", 0o2755) })
	}},
	{"openat2", func() error {
		return closeFd(unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC}))
	}},
	// Natively this autobinds an ephemeral port for a moment.
	{"listen(unbound TCP)", func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Listen(fd, 1)
	}},
}

// withProbeFile runs fn on a fresh file of this process (mode 0600) and
// removes it, and what fn may have made next to it, afterwards.
func withProbeFile(fn func(path string) error) error {
	p := filepath.Join(os.TempDir(), fmt.Sprintf("landjail-setid-probe-%d-%d", os.Getpid(), unix.Gettid()))
	defer os.Remove(p)
	defer os.Remove(p + ".new")
	defer os.Remove(p + ".d")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return err
	}
	return fn(p)
}

func closeFd(fd int, err error) error {
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func rawFd(r1, _ uintptr, e unix.Errno) (int, error) {
	if e != 0 {
		return -1, e
	}
	return int(r1), nil
}

func errnoOf(_, _ uintptr, e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

func ioctlDevNull(req uint64) error {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/null: %w", err)
	}
	defer unix.Close(fd)
	var c byte = 'x'
	return errnoOf(unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&c))))
}

// runProbes runs every probe on the current thread and names each result.
func runProbes() map[string]string {
	out := map[string]string{}
	for _, p := range probes {
		out[p.name] = errName(p.fn())
	}
	return out
}

func errName(err error) string {
	var e unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// probeMain runs the probes in a child and prints "name=result" lines.
func probeMain() int {
	runtime.LockOSThread()
	for name, res := range runProbes() {
		fmt.Printf("%s=%s\n", name, res)
	}
	return 0
}

// requireSeccomp skips (or fails with LANDJAIL_REQUIRE_KERNEL=1) when the
// kernel has no seccomp filters.
func requireSeccomp(t testing.TB) {
	t.Helper()
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		kerneltest.Missing(t, "seccomp unavailable: %v", err)
	}
}

// onFilteredThread installs f on a fresh locked thread and runs fn there. The
// goroutine exits without unlocking, so the thread dies with it. It is never
// the main thread, which the runtime parks instead of destroying (as exec's
// goLocked does: the main thread stays locked until the retry has a thread).
func onFilteredThread(t testing.TB, f *Filter, fn func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			locked := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				close(locked)
				if unix.Gettid() == unix.Getpid() {
					done <- errors.New("main thread twice (cannot happen)")
					return
				}
				install(f, fn, done)
			}()
			<-locked
			runtime.UnlockOSThread()
			return
		}
		install(f, fn, done)
	}()
	require.NoError(t, <-done)
}

func install(f *Filter, fn func(), done chan<- error) {
	if err := f.Install(); err != nil {
		done <- err
		return
	}
	fn()
	done <- nil
}

// seccompFilters reads Seccomp_filters from the calling thread's status.
func seccompFilters(t *testing.T) string {
	fh, err := os.Open("/proc/thread-self/status")
	if !assert.NoError(t, err) {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Seccomp_filters:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func TestInstallLive(t *testing.T) {
	requireSeccomp(t)
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true})
	require.NoError(t, err)

	native := map[string]string{}
	var baseFilters string
	onUnfilteredThread := func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		native = runProbes()
		baseFilters = seccompFilters(t)
	}
	onUnfilteredThread()

	want := map[string]string{
		"socket(AF_UNIX)":                             "EPERM",
		"socketpair(AF_UNIX)":                         "ok",
		"socket(AF_INET, SOCK_DGRAM)":                 "EPERM",
		"socket(AF_INET6, SOCK_DGRAM)":                "EPERM",
		"socket(AF_INET, SOCK_STREAM)":                "ok",
		"socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)": "EPERM",
		"socket(AF_PACKET)":                           "EPERM",
		"ioctl(TIOCSTI)":                              "EPERM",
		"ioctl(TIOCSTI|1<<32)":                        "EPERM",
		"ioctl(TIOCLINUX)":                            "EPERM",
		"ioctl(TIOCSETD)":                             "EPERM",
		"ioctl(USERFAULTFD_IOC_NEW)":                  "EPERM",
		"ioctl(PIDFD_GET_INFO)":                       "EPERM",
		"ioctl(PIDFD_GET_INFO, 96 bytes)":             "EPERM",
		"io_uring_setup":                              "EPERM",
		"io_setup":                                    "ENOSYS",
		"fcntl(F_SETLEASE)":                           "EPERM",
		"fcntl(F_NOTIFY)":                             "EPERM",
		"io_submit":                                   "ENOSYS",
		"unshare(CLONE_NEWUSER)":                      "EPERM",
		"clone(CLONE_NEWUSER|CLONE_FS)":               "EPERM",
		"clone3":                                      "ENOSYS",
		"keyctl":                                      "EPERM",
		"bpf":                                         "EPERM",
		"open_by_handle_at":                           "EPERM",
		"fanotify_init(FAN_REPORT_DFID_NAME)":         "EPERM",
		"listmount":                                   "EPERM",
		"statmount":                                   "EPERM",
		"getpid":                                      "ok",
		"sendto(MSG_FASTOPEN)":                        "EPERM",
		"socketpair(AF_UNIX, SOCK_DGRAM)":             "EPERM",
		"socket(AF_NETLINK, NETLINK_SOCK_DIAG)":       "EPERM",
		"socket(AF_NETLINK, NETLINK_ROUTE)":           "ok",
		"listen(unbound TCP)":                         "EPERM",
		"fchmodat(04755)":                             "EPERM",
		"fchmod(02755)":                               "EPERM",
		"fchmodat(0755)":                              "ok",
		"openat(O_CREAT, 04755)":                      "EPERM",
		"openat(O_RDONLY, mode 04755)":                "ok",
		"mkdirat(02755)":                              "EPERM",
		"openat2":                                     "ENOSYS",
	}
	require.Len(t, want, len(probes))
	// Positive controls: natively none of the denied calls fails the way the
	// filter makes it fail, so each EPERM/ENOSYS below is the filter's.
	for name, w := range want {
		if w == "ok" {
			assert.Equal(t, "ok", native[name], "natively %s", name)
			continue
		}
		if native[name] == w {
			t.Logf("natively %s already returns %s (sysctl or module): the live check proves nothing for it", name, w)
		}
	}

	var (
		filtered, child          map[string]string
		shellOut                 []byte
		shellErr                 error
		filteredCount, goCount   string
		goroutineFromFiltered    string
		goroutineFromFilteredErr = "not run"
	)
	onFilteredThread(t, f, func() {
		filtered = runProbes()
		filteredCount = seccompFilters(t)

		// A goroutine started here runs on another thread, unfiltered.
		var wg sync.WaitGroup
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			goroutineFromFilteredErr = errName(probes[0].fn())
			goCount = seccompFilters(t)
		})
		wg.Wait()
		goroutineFromFiltered = "done"

		// Children forked from this thread inherit the filter.
		cmd := osexec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envProbe+"=1")
		var out []byte
		out, shellErr = cmd.Output()
		if shellErr == nil {
			child = parseProbe(string(out))
		} else {
			shellErr = fmt.Errorf("probe child: %w", shellErr)
			return
		}
		shellOut, shellErr = osexec.Command("/bin/sh", "-c", "echo hi; ls /").CombinedOutput()
	})
	require.NoError(t, shellErr, "%s", shellOut)

	assert.Equal(t, want, filtered, "on the filtered thread")
	assert.Equal(t, want, child, "in a child forked from the filtered thread")
	assert.True(t, strings.HasPrefix(string(shellOut), "hi\n"), "sh output %q", shellOut)
	assert.Contains(t, string(shellOut), "usr")
	assert.NotEqual(t, baseFilters, filteredCount, "the filtered thread has one more filter")
	assert.Equal(t, "done", goroutineFromFiltered)
	assert.Equal(t, "ok", goroutineFromFilteredErr, "goroutine started from the filtered thread is not filtered")
	assert.Equal(t, baseFilters, goCount)

	// Every other thread of the process, including threads created later,
	// stays unfiltered.
	var wg sync.WaitGroup
	results := make([]string, 16)
	for i := range results {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			results[i] = errName(probes[0].fn()) + " " + seccompFilters(t)
		})
	}
	wg.Wait()
	for _, r := range results {
		assert.Equal(t, "ok "+baseFilters, r)
	}
}

func parseProbe(out string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestInstallLiveAllowances(t *testing.T) {
	requireSeccomp(t)
	f, err := Build(Options{LandlockABI: 7, AllowUnixSockets: true, AllowDangerous: true})
	require.NoError(t, err)
	var got map[string]string
	onFilteredThread(t, f, func() { got = runProbes() })
	assert.Equal(t, "ok", got["socket(AF_UNIX)"])
	assert.Equal(t, "ok", got["socket(AF_INET, SOCK_DGRAM)"], "network not restricted")
	if errno, ok := kerneltest.Blocked(kerneltest.FeatureNamespaces); ok {
		// The emulation's own filter answers first (filters stack).
		assert.Equal(t, "ENOSYS", got["clone3"], "emulated ns: clone3 gets ENOSYS")
		assert.Equal(t, unix.ErrnoName(errno), got["unshare(CLONE_NEWUSER)"], "emulated ns")
	} else {
		assert.Equal(t, "EINVAL", got["clone3"], "AllowDangerous leaves clone3 alone")
		assert.Equal(t, "EINVAL", got["unshare(CLONE_NEWUSER)"], "AllowDangerous: the kernel's own answer")
	}
	assert.Equal(t, "EPERM", got["ioctl(TIOCSTI)"], "terminal injection stays denied")
	assert.Equal(t, "EPERM", got["io_uring_setup"], "io_uring stays denied")
	assert.Equal(t, "ok", got["socketpair(AF_UNIX, SOCK_DGRAM)"], "AllowUnixSockets")
	assert.Equal(t, "ok", got["socket(AF_NETLINK, NETLINK_SOCK_DIAG)"], "network not restricted")
	assert.Equal(t, "ok", got["listen(unbound TCP)"], "network not restricted")
	assert.Equal(t, "EINVAL", got["sendto(MSG_FASTOPEN)"], "network not restricted: the kernel's own answer")
}

func TestInstallNil(t *testing.T) {
	var f *Filter
	assert.Error(t, f.Install())
}

// TestInstallLiveGlibcThreads checks the clone3 → ENOSYS fallback: glibc ≥
// 2.34 creates threads with clone3 and must fall back to clone(2).
func TestInstallLiveGlibcThreads(t *testing.T) {
	requireSeccomp(t)
	py, err := osexec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to create glibc threads")
	}
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true})
	require.NoError(t, err)
	var out []byte
	onFilteredThread(t, f, func() {
		out, err = osexec.Command(py, "-c",
			"import threading, subprocess\n"+
				"t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()\n"+
				"print(subprocess.run(['true']).returncode)").CombinedOutput()
	})
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "thread\n0\n", string(out))
}

// TestSupervisorLive: a Supervised filter's listen is answered by the
// supervisor, here for the filtered thread itself (a thread that is not its
// process's leader, so the PIDFD_THREAD path): a socket never bound is
// refused with EACCES, one bound to the granted port listens and accepts
// from outside, a UNIX socket listens, a non-socket and a closed descriptor
// get listen's own errors, and the supervisor exits (closing its listener)
// once the filtered thread is gone.
func TestSupervisorLive(t *testing.T) {
	requireSeccomp(t)
	granted := listentest.FreePort(t)
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, BindTCP: []uint16{uint16(granted)}})
	require.NoError(t, err)
	require.True(t, f.Supervised())
	dir := t.TempDir()
	before := liveSupervisors.Load()

	tcp := func(family int, bind bool) (int, error) {
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if bind {
			unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			var sa unix.Sockaddr = &unix.SockaddrInet4{Port: granted, Addr: [4]byte{127, 0, 0, 1}}
			if family == unix.AF_INET6 {
				// IPv4-mapped ::ffff:127.0.0.1 on an AF_INET6 socket.
				sa = &unix.SockaddrInet6{Port: granted, Addr: [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}}
			}
			if err := unix.Bind(fd, sa); err != nil {
				unix.Close(fd)
				return -1, err
			}
		}
		return fd, unix.Listen(fd, 4)
	}
	got := map[string]string{}
	var during int64
	onFilteredThread(t, f, func() {
		during = liveSupervisors.Load()
		for _, fam := range []struct {
			name string
			af   int
		}{{"IPv4", unix.AF_INET}, {"IPv6", unix.AF_INET6}} {
			fd, err := tcp(fam.af, false)
			got[fam.name+" unbound"] = errName(err)
			unix.Close(fd)
			fd, err = tcp(fam.af, true)
			got[fam.name+" granted"] = errName(err)
			if err == nil {
				c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", granted), time.Second)
				got[fam.name+" dial"] = errName(err)
				if err == nil {
					c.Close()
				}
			}
			unix.Close(fd)
		}
		fd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		got["unix"] = errName(unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, "s")}))
		if got["unix"] == "ok" {
			got["unix"] = errName(unix.Listen(fd, 4))
		}
		unix.Close(fd)
		fd, _ = unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		got["file"] = errName(unix.Listen(fd, 4))
		unix.Close(fd)
		// Not fd: the supervisor runs in this same process, and its
		// pidfd takes the lowest free number.
		got["closed fd"] = errName(unix.Listen(9999, 4))
	})
	// The unix-socket rule denies socket(AF_UNIX) on the filtered thread
	// (Landlock ABI 7 < 9): that part is the socket rule's answer.
	assert.Equal(t, map[string]string{
		"IPv4 unbound": "EACCES", "IPv4 granted": "ok", "IPv4 dial": "ok",
		"IPv6 unbound": "EACCES", "IPv6 granted": "ok", "IPv6 dial": "ok",
		"unix": "EBADF", "file": "ENOTSOCK", "closed fd": "EBADF",
	}, got)
	assert.Equal(t, before+1, during, "one supervisor for the installed filter")
	require.Eventually(t, func() bool { return liveSupervisors.Load() == before },
		5*time.Second, 10*time.Millisecond, "the supervisor exits once the filtered thread is gone")
}

// TestSupervisorUnixListen: with UNIX sockets allowed, the supervisor lets
// a bound UNIX socket listen and still refuses a TCP socket never bound.
func TestSupervisorUnixListen(t *testing.T) {
	requireSeccomp(t)
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, AllowUnixSockets: true})
	require.NoError(t, err)
	require.True(t, f.Supervised())
	path := filepath.Join(t.TempDir(), "s")
	var unixErr, tcpErr, dialErr error
	onFilteredThread(t, f, func() {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			unixErr = err
			return
		}
		defer unix.Close(fd)
		if unixErr = unix.Bind(fd, &unix.SockaddrUnix{Name: path}); unixErr == nil {
			unixErr = unix.Listen(fd, 4)
		}
		if unixErr == nil {
			// From another (unfiltered) thread, while fd is open.
			dialed := make(chan error)
			go func() {
				c, err := net.Dial("unix", path)
				if err == nil {
					c.Close()
				}
				dialed <- err
			}()
			dialErr = <-dialed
		}
		tfd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			tcpErr = err
			return
		}
		defer unix.Close(tfd)
		tcpErr = unix.Listen(tfd, 4)
	})
	assert.NoError(t, unixErr)
	assert.NoError(t, dialErr, "the UNIX socket listens")
	assert.ErrorIs(t, tcpErr, unix.EACCES)
}

// TestPidfdOfThreadGroup covers the path for kernels without PIDFD_THREAD.
func TestPidfdOfThreadGroup(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pidfd, err := pidfdOfThreadGroup(unix.Gettid())
	require.NoError(t, err)
	defer unix.Close(pidfd)
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", pidfd))
	require.NoError(t, err)
	assert.Contains(t, string(b), fmt.Sprintf("Pid:\t%d\n", os.Getpid()))
}

// TestSupervisorSwapRace: the child may dup2 another socket onto the
// descriptor number while its listen waits for the supervisor. The
// supervisor checks and listens on the socket it took, never on the number
// again (no SECCOMP_USER_NOTIF_FLAG_CONTINUE), so a socket never bound that
// is swapped in never ends up listening. Here another thread of the same
// process swaps an unbound socket and a socket bound to the granted port
// onto the number the filtered thread keeps calling listen on.
func TestSupervisorSwapRace(t *testing.T) {
	requireSeccomp(t)
	granted := listentest.FreePort(t)
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, BindTCP: []uint16{uint16(granted)}})
	require.NoError(t, err)

	bound, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(bound)
	require.NoError(t, unix.SetsockoptInt(bound, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1))
	require.NoError(t, unix.Bind(bound, &unix.SockaddrInet4{Port: granted, Addr: [4]byte{127, 0, 0, 1}}))
	unbound, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(unbound)
	target, err := unix.Dup(bound)
	require.NoError(t, err)
	defer unix.Close(target)

	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swapped <- n
				return
			default:
			}
			unix.Dup3(unbound, target, unix.O_CLOEXEC)
			unix.Dup3(bound, target, unix.O_CLOEXEC)
			n++
		}
	}()
	results := map[string]int{}
	// At least 2000 listens, and on until both outcomes were seen (the
	// swapper may be starved on a loaded machine), for at most 10 s.
	onFilteredThread(t, f, func() {
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; i < 2000 || (results["EACCES"] == 0 || results["ok"] == 0) && time.Now().Before(deadline); i++ {
			results[errName(unix.Listen(target, 1))]++
		}
	})
	close(stop)
	t.Logf("listen results %v over %d swaps", results, <-swapped)
	acc, err := unix.GetsockoptInt(unbound, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	require.NoError(t, err)
	assert.Equal(t, 0, acc, "the never-bound socket must not be listening")
	assert.Positive(t, results["EACCES"], "the unbound socket was seen and refused")
	assert.Positive(t, results["ok"], "the bound socket was allowed")
}

// pidfdGetInfo asks PIDFD_GET_INFO (request req) of a pidfd of the
// parent process.
func pidfdGetInfo(req uintptr) error {
	fd, err := unix.PidfdOpen(os.Getppid(), 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var info [128]byte
	info[0] = 1 // PIDFD_INFO_PID
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&info))); e != 0 {
		return e
	}
	return nil
}
