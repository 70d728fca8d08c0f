// Package fallback holds what landjail runs when the kernel lacks a
// feature the fast path relies on.
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
// CheckCommand and its helpers are the fallback for confinement when
// Landlock is unavailable: they check, statically and in userspace, every
// path a shell command names in its arguments, redirections and working
// directory against the policy before the command runs. They are a
// best-effort filter, weaker than Landlock (a program can compute paths the
// check never sees), and refuse what they cannot verify.
//
// Neither part needs a minimum kernel: the walk needs openat(2) with
// O_PATH (Linux 2.6.39) and O_NOFOLLOW; RESOLVE_NO_XDEV compares mount IDs
// from statx(STATX_MNT_ID) (Linux 5.8) or /proc/self/fdinfo (Linux 3.15),
// and st_dev below that (see OpenatBeneath).
package fallback
