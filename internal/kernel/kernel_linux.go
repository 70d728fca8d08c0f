package kernel

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

type landlockProbe struct {
	abi, raw int
	err      error
}

// erratumSignalScope is bit 1 of LANDLOCK_CREATE_RULESET_ERRATA: the fix
// for signal scoping across threads (Linux 6.15, backported to 6.12 LTS).
// go-landlock (landlock/internal/abi.go) downgrades ABI >= 6 to 5 without
// it; so do we, so that both agree on the ABI.
const erratumSignalScope = 1 << 1

var probeLandlock = sync.OnceValue(func() landlockProbe {
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return landlockProbe{err: err}
	}
	if abi <= 0 {
		return landlockProbe{err: errors.New("kernel: landlock_create_ruleset returned a non-positive ABI version (cannot happen)")}
	}
	p := landlockProbe{abi: abi, raw: abi}
	if abi >= 6 {
		if e, err := llsyscall.LandlockGetErrata(); err != nil || e&erratumSignalScope == 0 {
			p.abi = 5
		}
	}
	return p
})

func landlockABI() int      { return probeLandlock().abi }
func landlockRawABI() int   { return probeLandlock().raw }
func landlockErr() error    { return probeLandlock().err }
func releaseString() string { return release() }

var release = sync.OnceValue(func() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
})

func openat2Supported() bool { return probeOpenat2() == nil }

// probeOpenat2 opens "." beneath an O_PATH fd of "/" with the resolve flags
// the fast path uses. Only ENOSYS and EPERM (and, defensively, EINVAL/E2BIG
// from a kernel that does not know a resolve flag) mean "unsupported"; a
// failure to open "/" itself is reported as that error.
func probeOpenat2() error {
	rootfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(rootfd)
	fd, err := unix.Openat2(rootfd, ".", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// statusField returns the value of "name:" in /proc/thread-self/status (of
// the calling OS thread), falling back to /proc/self/status on kernels
// without /proc/thread-self (< 3.17).
func statusField(name string) (string, bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	data, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		data, err = os.ReadFile("/proc/self/status")
		if err != nil {
			return "", false
		}
	}
	prefix := []byte(name + ":")
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, prefix); ok {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}

func seccompMode() int {
	v, ok := statusField("Seccomp")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 2 {
		return -1
	}
	return n
}

func noNewPrivs() bool {
	if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err == nil {
		return v == 1
	}
	v, ok := statusField("NoNewPrivs")
	return ok && v == "1"
}
