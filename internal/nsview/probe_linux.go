package nsview

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/stagestart/sysclone"
)

var probeOnce = sync.OnceValue(probeNow)

func probe() error { return probeOnce() }

// probeNow tries, on a throwaway locked thread, what Enter needs:
// CAP_SYS_ADMIN, unshare(CLONE_FS|CLONE_NEWNS), mount(MS_PRIVATE), and the
// new mount API (fsopen; open_tree, mount_setattr and move_mount called
// with a bad fd answer EBADF when they exist, ENOSYS or EPERM when not).
// A caller without CAP_SYS_ADMIN is answered on its own thread (capget
// changes nothing), without the thread (≈0.1 ms of CPU a run as uid
// 65534, its clone and its end; round 9 of issue 25), and the
// error's note on user namespaces (two files of /proc/sys) is read only
// when the error's text is asked for (notRoot).
func probeNow() error {
	if !hasCapSysAdmin() {
		return notRoot()
	}
	return osthread.Run(probeThread)
}

// notRoot is Probe's error for a caller without CAP_SYS_ADMIN: it wraps
// ErrNotPrivileged; its text ends with userNSNote, read when asked.
func notRoot() error { return &wrapped{err: ErrNotPrivileged, text: notRootText} }

func notRootText() string {
	return ErrNotPrivileged.Error() + ": not root; the user-namespace stage builds the view instead where it can (ProbeUserNS)" + userNSNote()
}

func probeThread() error {
	if !hasCapSysAdmin() {
		return notRoot()
	}
	if mnt, ipc, ok := earlyMount(); ok {
		if err := checkMountAPI(); err != nil {
			unix.Close(mnt)
			if ipc >= 0 {
				unix.Close(ipc)
			}
			return err
		}
		storeMount(mnt, ipc)
		return nil
	}
	if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
		why := "refused"
		if errors.Is(err, unix.EPERM) {
			why = "refused by a seccomp profile (Docker's default refuses unshare without CAP_SYS_ADMIN) or an LSM"
		}
		return fmt.Errorf("%w: unshare(CLONE_NEWNS) %s: %w", ErrUnavailable, why, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("%w: mount(MS_PRIVATE): %w", ErrUnavailable, err)
	}
	if err := checkMountAPI(); err != nil {
		return err
	}
	keepMount()
	return nil
}

// checkMountAPI checks that the new mount API exists: open_tree,
// move_mount and mount_setattr called with a bad descriptor answer EBADF
// when they exist (ENOSYS or EPERM when not), fsopen makes a context.
// They touch no namespace: any thread may ask.
func checkMountAPI() error {
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"open_tree (Linux 5.2)", func() error { _, err := unix.OpenTree(-1, "", unix.AT_EMPTY_PATH); return err }},
		{"move_mount (Linux 5.2)", func() error {
			return unix.MoveMount(-1, "", -1, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		}},
		{"mount_setattr (Linux 5.12)", func() error {
			return unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		}},
		{"fsopen (Linux 5.2)", func() error {
			fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
	} {
		if err := c.call(); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("%w: %s: %w", ErrUnavailable, c.name, err)
		}
	}
	return nil
}

// hasCapSysAdmin reports whether the calling thread has CAP_SYS_ADMIN in
// its effective set.
func hasCapSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// userNSNote says what would stop the future unprivileged (user
// namespace) stage: user.max_user_namespaces = 0, or Ubuntu's AppArmor
// restriction kernel.apparmor_restrict_unprivileged_userns = 1.
func userNSNote() string {
	var notes []string
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		notes = append(notes, "user namespaces disabled (user.max_user_namespaces = 0)")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" {
		notes = append(notes, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)")
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

var probeUserNSOnce = sync.OnceValue(probeUserNSNow)

// stageCloned reports whether this process cloned the user-namespace
// stage from its initializer (sysclone.Cloned), waiting for that clone.
var stageCloned = sysclone.Cloned

// tryUserNSFunc is tryUserNS (a test records the flags).
var tryUserNSFunc = tryUserNS

func probeUserNS() error { return probeUserNSOnce() }

// Steps of tryUserNS, reported with the errno of the one that failed.
const (
	stepClone    = 0 // clone(2) with the stage's namespace flags
	stepMount    = 1 // mount(/, MS_REC|MS_PRIVATE) in the new namespaces
	stepFsopen   = 2 // fsopen("tmpfs") in them
	stepNoAnswer = 255
)

// UserNSFlags are the namespaces the user-namespace stage is cloned into
// (exec's newUserStage), tried by ProbeUserNS as they are: user, mount,
// PID and IPC (System V IPC objects and POSIX message queues of the
// caller's uid stay out of reach).
const UserNSFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC

func probeUserNSNow() error {
	flags, flagNames := uintptr(UserNSFlags), "CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC"
	if stageCloned() {
		// This process cloned the stage with UserNSFlags already
		// (internal/stagestart/sysclone, from a package initializer):
		// the clone is proven, and the mount and fsopen steps need only
		// a user and a mount namespace. The PID and IPC namespaces' making
		// and teardown were ≈0.05 ms of a uid run's CPU, on the main
		// thread's path (round 9 of issue 25).
		flags, flagNames = unix.CLONE_NEWUSER|unix.CLONE_NEWNS, "CLONE_NEWUSER|CLONE_NEWNS"
	}
	step, errno := tryUserNSFunc(flags)
	if errno == 0 {
		return nil
	}
	var what string
	switch step {
	case stepClone:
		what = "clone(" + flagNames + ")"
		if errno == unix.EPERM {
			what += " refused by a seccomp profile (Docker's default) or an LSM (Ubuntu's AppArmor lets an unprivileged process make a user namespace but no mount namespace in it)"
		}
	case stepMount:
		what = "mount(/, MS_REC|MS_PRIVATE) in a new user namespace"
		if errno == unix.EPERM || errno == unix.EACCES {
			what += " refused: the user namespace carries no capability (an LSM such as Ubuntu's AppArmor restriction)"
		}
	case stepFsopen:
		what = "fsopen(tmpfs) in a new user namespace (the new mount API, Linux 5.2)"
	default:
		what = "user namespace probe: the child reported nothing"
	}
	return fmt.Errorf("%w: %s%s: %w", ErrUnavailable, what, userNSNote(), errno)
}
