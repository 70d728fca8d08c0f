package seccomp

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
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
	// entries 0 is invalid: EINVAL natively, never a ring.
	{"io_uring_setup", func() error {
		var params [120]byte
		return closeFd(rawFd(unix.Syscall(unix.SYS_IO_URING_SETUP, 0, uintptr(unsafe.Pointer(&params)), 0)))
	}},
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
	{"getpid", func() error { unix.Getpid(); return nil }},
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
func requireSeccomp(t *testing.T) {
	t.Helper()
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		kerneltest.Missing(t, "seccomp unavailable: %v", err)
	}
}

// onFilteredThread installs f on a fresh locked thread and runs fn there. The
// goroutine exits without unlocking, so the thread dies with it.
func onFilteredThread(t *testing.T, f *Filter, fn func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := f.Install(); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	require.NoError(t, <-done)
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
		"io_uring_setup":                              "EPERM",
		"unshare(CLONE_NEWUSER)":                      "EPERM",
		"clone(CLONE_NEWUSER|CLONE_FS)":               "EPERM",
		"clone3":                                      "ENOSYS",
		"keyctl":                                      "EPERM",
		"bpf":                                         "EPERM",
		"open_by_handle_at":                           "EPERM",
		"getpid":                                      "ok",
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
	assert.Equal(t, "EINVAL", got["clone3"], "AllowDangerous leaves clone3 alone")
	assert.Equal(t, "EINVAL", got["unshare(CLONE_NEWUSER)"], "AllowDangerous: the kernel's own answer")
	assert.Equal(t, "EPERM", got["ioctl(TIOCSTI)"], "terminal injection stays denied")
	assert.Equal(t, "EPERM", got["io_uring_setup"], "io_uring stays denied")
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
