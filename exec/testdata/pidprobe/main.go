// Command pidprobe makes one syscall that takes a process ID (or a pidfd)
// against a target and prints the result: "ok" or the errno's name. It is
// the confined side of exec's TestSeccompPIDSyscalls, whose cases are in
// testdata/pidsyscalls.toml at the repository root.
//
//	pidprobe VERB TARGET [ADDR]
//
// TARGET is a process ID, a process group or user ID for the -pgrp and
// -user verbs, "0" (the caller, as the syscall defines 0), "own" (the
// caller's own process ID, spelled out) or "thread" (the ID of another
// thread of the caller, as pthread_setaffinity_np passes it). ADDR is an
// address mapped writable in the target (hexadecimal), for the verbs that read its
// memory. Signals are SIGTERM to another process, 0 to the caller.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: pidprobe VERB TARGET [ADDR]")
		os.Exit(2)
	}
	runtime.LockOSThread()
	pid, err := target(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var addr uintptr
	if len(os.Args) > 3 {
		a, err := strconv.ParseUint(os.Args[3], 16, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		addr = uintptr(a)
	}
	fn, ok := verbs[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown verb", os.Args[1])
		os.Exit(2)
	}
	fmt.Println(name(fn(pid, addr)))
}

// target resolves TARGET.
func target(s string) (int, error) {
	switch s {
	case "own":
		return os.Getpid(), nil
	case "thread":
		tid := make(chan int)
		go func() {
			runtime.LockOSThread()
			tid <- unix.Gettid()
			select {} // keep the thread
		}()
		return <-tid, nil
	}
	return strconv.Atoi(s)
}

func name(err error) string {
	if err == nil {
		return "ok"
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func errno(_, _ uintptr, e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

// signal is SIGTERM for another process, 0 (existence check) for the caller.
func signal(pid int) unix.Signal {
	if pid == 0 || pid == os.Getpid() {
		return 0
	}
	return unix.SIGTERM
}

const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioWhoUser    = 3
	ioprioIdle       = 3 << 13 // IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)
	kcmpVM           = 1
)

func ioprioSet(which int) func(int, uintptr) error {
	return func(pid int, _ uintptr) error {
		return errno(unix.Syscall(unix.SYS_IOPRIO_SET, uintptr(which), uintptr(pid), ioprioIdle))
	}
}

func pidfd(pid int, fn func(fd int) error) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(fd)
	return fn(fd)
}

func sigqueue(pid int, tg bool) error {
	// struct siginfo: si_signo, si_errno, si_code, then _sifields.
	var info [128]byte
	sig := signal(pid)
	*(*int32)(unsafe.Pointer(&info[0])) = int32(sig)
	*(*int32)(unsafe.Pointer(&info[8])) = -1 // SI_QUEUE: negative, as another process may only send
	if tg {
		return errno(unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(pid), uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info)), 0, 0))
	}
	return errno(unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info))))
}

var verbs = map[string]func(pid int, addr uintptr) error{
	"prlimit-cpu": func(pid int, _ uintptr) error {
		return unix.Prlimit(pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: 0, Max: unix.RLIM_INFINITY}, nil)
	},
	"prlimit-nofile": func(pid int, _ uintptr) error {
		return unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}, nil)
	},
	"prlimit-get": func(pid int, _ uintptr) error {
		var old unix.Rlimit
		return unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old)
	},
	"setpriority": func(pid int, _ uintptr) error { return unix.Setpriority(unix.PRIO_PROCESS, pid, 19) },
	"setpriority-pgrp": func(pgid int, _ uintptr) error {
		return unix.Setpriority(unix.PRIO_PGRP, pgid, 19)
	},
	"setpriority-user": func(uid int, _ uintptr) error { return unix.Setpriority(unix.PRIO_USER, uid, 19) },
	"getpriority": func(pid int, _ uintptr) error {
		_, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
		return err
	},
	"sched_setaffinity": func(pid int, _ uintptr) error {
		var set unix.CPUSet
		set.Set(0)
		return unix.SchedSetaffinity(pid, &set)
	},
	"sched_getaffinity": func(pid int, _ uintptr) error {
		var set unix.CPUSet
		return unix.SchedGetaffinity(pid, &set)
	},
	"sched_setscheduler": func(pid int, _ uintptr) error {
		var prio int32
		return errno(unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 5 /* SCHED_IDLE */, uintptr(unsafe.Pointer(&prio))))
	},
	"sched_setparam": func(pid int, _ uintptr) error {
		var prio int32
		return errno(unix.Syscall(unix.SYS_SCHED_SETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&prio)), 0))
	},
	"sched_setattr": func(pid int, _ uintptr) error {
		return unix.SchedSetAttr(pid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: 5 /* SCHED_IDLE */}, 0)
	},
	"ioprio_set":      ioprioSet(ioprioWhoProcess),
	"ioprio_set-pgrp": ioprioSet(ioprioWhoPgrp),
	"ioprio_set-user": ioprioSet(ioprioWhoUser),
	"migrate_pages": func(pid int, _ uintptr) error {
		mask := uint64(1) // node 0 to node 0
		return errno(unix.Syscall6(unix.SYS_MIGRATE_PAGES, uintptr(pid), 64, uintptr(unsafe.Pointer(&mask)), uintptr(unsafe.Pointer(&mask)), 0, 0))
	},
	"move_pages": func(pid int, _ uintptr) error {
		var page uintptr
		var status int32
		return errno(unix.Syscall6(unix.SYS_MOVE_PAGES, uintptr(pid), 0, uintptr(unsafe.Pointer(&page)), 0, uintptr(unsafe.Pointer(&status)), 0))
	},
	"get_robust_list": func(pid int, _ uintptr) error {
		var head, size uintptr
		return errno(unix.Syscall(unix.SYS_GET_ROBUST_LIST, uintptr(pid), uintptr(unsafe.Pointer(&head)), uintptr(unsafe.Pointer(&size))))
	},
	"kcmp": func(pid int, _ uintptr) error {
		return errno(unix.Syscall6(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), kcmpVM, 0, 0, 0))
	},
	"process_vm_readv": func(pid int, addr uintptr) error {
		buf := make([]byte, 8)
		_, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: 8}}, []unix.RemoteIovec{{Base: addr, Len: 8}}, 0)
		return err
	},
	"process_vm_writev": func(pid int, addr uintptr) error {
		// Writes back what it read: the target's memory is unchanged
		// when the write is let through.
		buf := make([]byte, 8)
		if _, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: 8}}, []unix.RemoteIovec{{Base: addr, Len: 8}}, 0); err != nil {
			return err
		}
		_, err := unix.ProcessVMWritev(pid, []unix.Iovec{{Base: &buf[0], Len: 8}}, []unix.RemoteIovec{{Base: addr, Len: 8}}, 0)
		return err
	},
	"ptrace": func(pid int, _ uintptr) error {
		// PTRACE_SEIZE does not stop the tracee; the tracer's exit
		// detaches it.
		return errno(unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0))
	},
	"pidfd_open": func(pid int, _ uintptr) error { return pidfd(pid, func(int) error { return nil }) },
	"pidfd_getfd": func(pid int, _ uintptr) error {
		return pidfd(pid, func(fd int) error {
			nfd, err := unix.PidfdGetfd(fd, 0, 0)
			if err == nil {
				unix.Close(nfd)
			}
			return err
		})
	},
	"pidfd_send_signal": func(pid int, _ uintptr) error {
		return pidfd(pid, func(fd int) error { return unix.PidfdSendSignal(fd, signal(pid), nil, 0) })
	},
	"waitid-pidfd": func(pid int, _ uintptr) error {
		return pidfd(pid, func(fd int) error {
			var info unix.Siginfo
			return unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
		})
	},
	"process_madvise": func(pid int, addr uintptr) error {
		return pidfd(pid, func(fd int) error {
			iov := []unix.RemoteIovec{{Base: addr, Len: os.Getpagesize()}}
			return errno(unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), 1, unix.MADV_COLD, 0, 0))
		})
	},
	"process_mrelease": func(pid int, _ uintptr) error {
		return pidfd(pid, func(fd int) error { return errno(unix.Syscall(unix.SYS_PROCESS_MRELEASE, uintptr(fd), 0, 0)) })
	},
	"kill":   func(pid int, _ uintptr) error { return unix.Kill(pid, signal(pid)) },
	"tgkill": func(pid int, _ uintptr) error { return unix.Tgkill(pid, pid, signal(pid)) },
	"tkill": func(pid int, _ uintptr) error {
		return errno(unix.Syscall(unix.SYS_TKILL, uintptr(pid), uintptr(signal(pid)), 0))
	},
	"rt_sigqueueinfo":   func(pid int, _ uintptr) error { return sigqueue(pid, false) },
	"rt_tgsigqueueinfo": func(pid int, _ uintptr) error { return sigqueue(pid, true) },
	"perf_event_open": func(pid int, _ uintptr) error {
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{}))}
		fd, err := unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	"capget": func(pid int, _ uintptr) error {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3, Pid: int32(pid)}
		var data [2]unix.CapUserData
		return unix.Capget(&hdr, &data[0])
	},
	"setpgid": func(pid int, _ uintptr) error { return unix.Setpgid(pid, pid) },
	"write-oom_score_adj": func(pid int, _ uintptr) error {
		return os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte("1000"), 0)
	},
}
