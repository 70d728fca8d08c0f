//go:build linux && !amd64

package nsview

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryUserNS forks a child with flags (the stage's CLONE_NEW* flags), the
// caller's uid and gid mapped, that fails its execve (a path that does
// not exist): ENOENT means the clone and the maps worked. It cannot try a
// mount in the child as the amd64 probe does (a forked copy of a Go
// process runs no code of ours before execve), so an LSM that lets the
// namespaces be made but refuses mounts in them shows only when the stage
// starts. It returns step 0 and the clone's errno, or errno 0.
func tryUserNS(flags uintptr) (step uint32, errno unix.Errno) {
	uid, gid := os.Getuid(), os.Getgid()
	_, err := syscall.ForkExec("/nonexistent/landjail-userns-probe", []string{"probe"}, &syscall.ProcAttr{
		Env: []string{},
		Sys: &syscall.SysProcAttr{
			Cloneflags:  flags,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		},
	})
	var en unix.Errno
	switch {
	case errors.Is(err, unix.ENOENT):
		return 0, 0
	case err == nil:
		return stepNoAnswer, unix.EIO // a path that does not exist was executed
	case errors.As(err, &en):
		return 0, en
	default:
		return 0, unix.EIO
	}
}
