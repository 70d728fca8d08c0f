package landlock

import (
	"fmt"
	"os"
	"slices"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"golang.org/x/sys/unix"
)

// ForkFD returns a NEW Landlock ruleset descriptor (close-on-exec, owned
// by the caller) with the same handled rights and the same rules as the
// Ruleset, and the flags RestrictSelf passes to landlock_restrict_self(2).
// The caller may add rules to it (landlock_add_rule(2)) without changing
// the Ruleset: package exec adds one on the fresh procfs of each PID
// namespace it makes (Landlock's path walk skips mount points, so that
// procfs is granted only by a rule on its own root) and then restricts a
// thread with it. Cost: one landlock_create_ruleset(2) and one
// landlock_add_rule(2) per rule (the rules' O_PATH descriptors are kept
// open from Compile, so nothing is looked up again).
//
// Errors: ErrUnavailable without a Landlock domain or when the Ruleset has
// no namespace view (only then are the descriptors kept), ErrClosed after
// Close, else the errno of the failing syscall, wrapped. Landlock ABI 1
// (Linux 5.13).
func (r *Ruleset) ForkFD() (*os.File, uint32, error) {
	return r.forkFD()
}

// HandledAccessFS is the set of LANDLOCK_ACCESS_FS_* rights the
// Ruleset's rulesets handle (0 without a Landlock domain): the most a
// rule added to a ForkFD ruleset may grant (a right outside it is
// EINVAL). Package exec grants all of it on the view's private /tmp.
func (r *Ruleset) HandledAccessFS() uint64 {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.kept == nil {
		return 0
	}
	return r.kept.attr.HandledAccessFS
}

func (r *Ruleset) forkFD() (*os.File, uint32, error) {
	if r == nil {
		return nil, 0, ErrUnavailable
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, 0, ErrClosed
	}
	if r.fd < 0 || r.kept == nil {
		return nil, 0, ErrUnavailable
	}
	k := r.kept
	fd, err := ll.LandlockCreateRuleset(&k.attr, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	for _, p := range k.paths {
		attr := ll.PathBeneathAttr{ParentFd: p.fd, AllowedAccess: p.access}
		if err := ll.LandlockAddPathBeneathRule(fd, &attr, 0); err != nil {
			unix.Close(fd)
			return nil, 0, fmt.Errorf("landlock_add_rule(fd %d): %w", p.fd, err)
		}
	}
	if err := addPortRules(fd, k.ports); err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), "landlock-ruleset"), r.restrictFlags, nil
}

// closeKept closes the rules' descriptors ForkFD kept, from Close, which
// a supervised run calls between its command's exit and its own: each
// run of consecutive numbers in one close_range(2) (Linux 5.9) instead of
// one close(2) per rule (Compile opens them one after the other, so a
// few runs hold them all: ≈35 syscalls fewer for the default policy).
// Safe because a run is made of this Ruleset's own descriptors only:
// every number in it is one of fds, each open and owned here, so no
// other descriptor of the process can hold a number inside it. Where
// close_range fails (ENOSYS before 5.9, EPERM from a seccomp profile) that
// run is closed one by one.
func closeKept(fds []int) {
	fds = slices.Clone(fds)
	slices.Sort(fds)
	for i := 0; i < len(fds); {
		j := i + 1
		for j < len(fds) && fds[j] == fds[j-1]+1 {
			j++
		}
		if j-i < 2 || unix.CloseRange(uint(fds[i]), uint(fds[j-1]), 0) != nil {
			for _, fd := range fds[i:j] {
				unix.Close(fd)
			}
		}
		i = j
	}
}
