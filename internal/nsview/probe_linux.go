package nsview

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

var probeOnce = sync.OnceValue(probeNow)

func probe() error { return probeOnce() }

// probeNow tries, on a throwaway locked thread, what Enter needs:
// CAP_SYS_ADMIN, unshare(CLONE_FS|CLONE_NEWNS), mount(MS_PRIVATE), and the
// new mount API (fsopen; open_tree, mount_setattr and move_mount called
// with a bad fd answer EBADF when they exist, ENOSYS or EPERM when not).
func probeNow() error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		ch <- probeThread()
	}()
	return <-ch
}

func probeThread() error {
	if !hasCapSysAdmin() {
		return fmt.Errorf("%w: not root; the user-namespace stage builds the view instead where it can (ProbeUserNS)%s", ErrNotPrivileged, userNSNote())
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

func probeUserNS() error { return probeUserNSOnce() }

func probeUserNSNow() error {
	uid, gid := os.Getuid(), os.Getgid()
	_, err := syscall.ForkExec("/nonexistent/landjail-userns-probe", []string{"probe"}, &syscall.ProcAttr{
		Env: []string{},
		Sys: &syscall.SysProcAttr{
			// A user namespace alone: the mount and PID namespaces a
			// stage adds are its own to make once it is in it (a
			// seccomp profile or AppArmor refuses the user namespace
			// itself), and a new mount namespace would copy the whole
			// mount table for nothing.
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		},
	})
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err == nil:
		return fmt.Errorf("%w: user namespace probe: a path that does not exist was executed", ErrUnavailable)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: clone(CLONE_NEWUSER) refused by a seccomp profile (Docker's default) or an LSM%s: %w", ErrUnavailable, userNSNote(), err)
	default:
		return fmt.Errorf("%w: clone(CLONE_NEWUSER)%s: %w", ErrUnavailable, userNSNote(), err)
	}
}
