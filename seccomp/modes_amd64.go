//go:build linux

package seccomp

import "golang.org/x/sys/unix"

// legacyModeSyscalls are the mode-taking syscalls amd64 keeps from before
// the *at forms (arm64 has only those): the argument index of the mode and of the
// open flags that make the kernel read it (-1: always read).
var legacyModeSyscalls = []modeSyscall{
	{"chmod", unix.SYS_CHMOD, 1, -1},
	{"open", unix.SYS_OPEN, 2, 1},
	{"creat", unix.SYS_CREAT, 1, -1},
	{"mkdir", unix.SYS_MKDIR, 1, -1},
	{"mknod", unix.SYS_MKNOD, 1, -1},
}
