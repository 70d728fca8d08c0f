// Package fallback emulates openat2(2) for landjail when the kernel lacks
// it.
//
// OpenatBeneath emulates openat2(2) with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS (and optionally RESOLVE_NO_XDEV) on kernels without
// openat2 (Linux < 5.6) or where a seccomp profile refuses it (EPERM): a
// component-by-component walk with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW)
// from the root fd, `..` handled lexically on a stack of fds already
// opened, so it returns the same file and the same errno as the kernel
// would, and never a file outside the root. The openat package switches to
// it once, one way, the first time openat2 fails with ENOSYS or EPERM.
//
// The walk needs no minimum kernel: openat(2) with O_PATH (Linux 2.6.39)
// and O_NOFOLLOW; RESOLVE_NO_XDEV compares mount IDs from
// statx(STATX_MNT_ID) (Linux 5.8) or /proc/self/fdinfo (Linux 3.15), and
// st_dev below that (see OpenatBeneath). It depends on golang.org/x/sys
// only. The path check on a command's arguments, the other stand-in when
// the kernel lacks a feature (Landlock), is package cmdcheck.
package fallback
