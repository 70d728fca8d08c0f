package egressns

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// InNewNamespace runs fn on a locked thread of its own that first moved
// to a new network namespace (unshare(2) CLONE_NEWNET, root only) and
// set loopback up, as the command's namespace is when Setup runs; the
// thread ends with fn (it is never unlocked, so no other goroutine runs
// in that namespace). Sockets fn creates belong to the namespace. For
// tests; errors are unshare's and ioctl's (*os.SyscallError), or fn's.
func InNewNamespace(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- os.NewSyscallError("unshare(CLONE_NEWNET)", err)
			return
		}
		if err := loopbackUp(); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("ioctl(SIOCGIFFLAGS)", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("ioctl(SIOCSIFFLAGS)", err)
	}
	return nil
}

// InNamespaceAt runs fn on a locked thread of its own that joined the
// network namespace at path (setns(2), e.g. /proc/PID/task/TID/ns/net of
// a thread InNewNamespace runs); the thread ends with fn. For tests.
func InNamespaceAt(path string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- &os.PathError{Op: "open", Path: path, Err: err}
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			done <- os.NewSyscallError("setns", err)
			return
		}
		done <- fn()
	}()
	return <-done
}
