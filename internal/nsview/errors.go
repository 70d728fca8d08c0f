package nsview

import "errors"

var (
	// ErrUnavailable: this process cannot build a namespace view at all:
	// unshare(CLONE_NEWNS) or one of the new mount syscalls failed with
	// EPERM (no CAP_SYS_ADMIN, a container seccomp profile such as
	// Docker's default), ENOSYS (kernel without the new mount API, < 5.12
	// for mount_setattr) or EINVAL. The error also wraps the errno and
	// says which step failed. Callers fall back to Landlock carve-outs
	// and report why.
	ErrUnavailable = errors.New("nsview: mount namespaces unavailable")

	// ErrNotPrivileged: the caller lacks CAP_SYS_ADMIN (not root); it
	// wraps ErrUnavailable. Such a caller can still get a view through a
	// user namespace (ProbeUserNS, internal/nsinit).
	ErrNotPrivileged error = &wrapped{msg: ErrUnavailable.Error() + ": no CAP_SYS_ADMIN", err: ErrUnavailable}

	// ErrInvalidPath: a path given to View is not absolute and clean
	// (filepath.Clean), is "/" where "/" makes no sense (a mask, a
	// writable root), or a writable root conflicts with PrivateTmp
	// (it is /tmp or /dev/shm itself).
	ErrInvalidPath = errors.New("nsview: invalid path")

	// ErrMainThread: Enter was called on the process's main thread,
	// which Go never lets die; the namespace would leak to every
	// goroutine scheduled there later.
	ErrMainThread = errors.New("nsview: Enter called on the main thread")
)

// ErrChanged: a writable root found again in the view (after the tree was
// made read-only) is not the directory or file that was cloned: a
// concurrent process renamed something on the way while the view was
// being built. Nothing was attached there; retry on a fresh thread.
var ErrChanged = errors.New("nsview: path changed while the view was built")

// ErrMountLimit: the view needs more mounts than the kernel allows in
// one mount namespace (fs.mount-max, /proc/sys/fs/mount-max: 100,000 by
// default, one global sysctl applied to each namespace). Each mask is a
// mount, so a tree with that many denied files cannot be masked one by
// one. Enter checks before it mounts anything (see MountBudget) and says
// how many masks and other mounts it needed; a mount that the kernel
// refuses with ENOSPC anyway wraps it too, with the errno.
var ErrMountLimit = errors.New("nsview: the view needs more mounts than fs.mount-max allows")

// wrapped is what fmt.Errorf("%w: ...") makes, a fixed message wrapping a
// sentinel, without formatting at package initialisation: every landjail
// start paid for fmt's first use there (its code paged in, copy-on-write
// faults), before main.
type wrapped struct {
	msg string
	err error
	// text, when not nil, makes the message when it is asked for
	// (instead of msg): Probe's error for a caller that is not root
	// (notRoot). A field rather than a type of its own: one more
	// static itab took the runtime's itab table over its 75% load at
	// start (377 -> 378 of 512 entries, dynamic ones on top), and a
	// root --no-namespaces run paid its growth (4 page faults, ≈0.05 ms).
	text func() string
}

func (e *wrapped) Error() string {
	if e.text != nil {
		return e.text()
	}
	return e.msg
}
func (e *wrapped) Unwrap() error { return e.err }
