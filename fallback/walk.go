package fallback

// OpenatBeneath opens unsafePath relative to the directory dirfd exactly as
//
//	unix.Openat2(dirfd, unsafePath, &unix.OpenHow{
//		Flags:   uint64(flags | unix.O_CLOEXEC),
//		Mode:    uint64(mode),
//		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | (resolve & unix.RESOLVE_NO_XDEV),
//	})
//
// would, on kernels without openat2 (Linux < 5.6) or where seccomp refuses
// it, by walking the path one component at a time with
// openat(fd, name, O_PATH|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC). Other bits of
// resolve are ignored. dirfd may be unix.AT_FDCWD (the working directory,
// pinned once at the start of the call).
//
// Equivalent to the naive filepath.Join(root, unsafePath) + open, but safe
// because:
//   - no symlink is ever followed: every intermediate component is opened
//     with O_NOFOLLOW, so a symlink (magic links included) fails with ELOOP
//     as RESOLVE_NO_SYMLINKS does; a final symlink fails with ELOOP too,
//     except with O_PATH|O_NOFOLLOW, which returns an O_PATH fd of the link
//     itself, as openat2 does;
//   - ".." is never looked up in the filesystem: it pops a stack of the
//     directory fds this walk opened, so a directory renamed out of the root
//     mid-walk cannot lead outside, and ".." above dirfd fails with EXDEV;
//   - each component is resolved relative to the fd of the previous one, so
//     swapping a component for a symlink after it was checked has no effect.
//
// Errors are bare unix.Errno values, the same as the kernel's openat2 for
// the same tree, flags and path, in the same order (components are walked
// left to right, so missing/../x is ENOENT, file/../x ENOTDIR, a/../../x
// EXDEV): EXDEV for an absolute path or an escape by ".."; ELOOP for a
// symlink; ENOENT for an empty path; ENOTDIR when a trailing slash or an
// intermediate component names a non-directory; EISDIR for O_CREAT with a
// trailing slash; EINVAL for flags or mode openat2 rejects (unknown flags,
// a mode without O_CREAT or O_TMPFILE, O_CREAT|O_DIRECTORY as Linux >= 6.4
// rejects it, O_PATH with other than O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) and
// for a NUL byte; ENAMETOOLONG for a path of PATH_MAX (4096) bytes or more;
// otherwise whatever the final openat returns (EEXIST, EACCES, ...). The
// final component is opened with openat(parentfd, name,
// flags|O_NOFOLLOW|O_CLOEXEC, mode), so O_CREAT, O_EXCL, O_TRUNC,
// O_DIRECTORY and O_TMPFILE behave as the kernel's. A final "." or ".."
// re-opens the directory it names with openat(fd, ".", ...).
//
// With RESOLVE_NO_XDEV, a component on a different mount than dirfd fails
// with EXDEV. Mounts are compared by mount ID from statx(STATX_MNT_ID)
// (Linux 5.8), else the "mnt_id:" of /proc/self/fdinfo (Linux 3.15), else
// by st_dev, which cannot see a bind mount of the same filesystem. The
// final component is checked by name before it is opened and through the
// returned fd after; a mount appearing between the two (it needs
// CAP_SYS_ADMIN) is caught, but only after the open's side effects
// (O_TRUNC, O_CREAT).
//
// Known differences from the kernel, none of which widen what is reachable:
// it never returns EAGAIN (the kernel does when a rename or mount races a
// "..": here ".." is lexical); "." and ".." do not re-check search
// permission on the directory they leave, so an unprivileged caller may get
// a result where the kernel says EACCES; O_CREAT on an existing symlink in
// a sticky directory it does not own gives ELOOP where the kernel may give
// EACCES; the returned file's status flags include O_NOFOLLOW (and
// O_DIRECTORY with a trailing slash).
//
// On success the caller owns the returned fd (close-on-exec); every
// intermediate fd is closed on every path. Safe for concurrent use; it does
// not touch dirfd's offset or flags. On non-Linux systems it returns an
// error wrapping errors.ErrUnsupported.
func OpenatBeneath(dirfd int, unsafePath string, flags int, mode uint32, resolve uint64) (fd int, err error) {
	return openatBeneath(dirfd, unsafePath, flags, mode, resolve)
}
