package reaper

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Orphans of the command are re-parented to a subreaper (Become), which
// must reap them: without a PID namespace (whose init reaps its own) each
// one otherwise stays a zombie of landjail, holding its pid, until
// KillDescendants (red team round 26, R26d-2: 9,000 zombies after three
// MCP calls; a run whose command daemonizes helpers refused at --pids).
//
// A zombie child is reaped here only if it is not owned: no goroutine of
// this process waits, or will wait, for it. Owned are the children this
// process holds a pidfd on (os/exec and os.StartProcess clone every child
// with CLONE_PIDFD and close the pidfd only after Wait reaped it; the
// early stage, internal/stagestart, is cloned with one too) and the
// spared ones (Spare). Stealing an owned child's status would make its
// Wait fail with ECHILD, and a waiter by pid could then signal or wait
// for a recycled pid.
//
// Races: a child cloned with CLONE_PIDFD has its pidfd installed in this
// process's table before it runs (copy_process, kernel/fork.c), so a
// zombie without a pidfd was never one of ours; ReapOrphans holds
// syscall.ForkLock for reading from its listing to its last wait4, so no
// Go fork can recycle a listed pid into a new child of ours meanwhile,
// and a foreign zombie's pid cannot be recycled before it is reaped
// (only ReapOrphans reaps it).

// errNoPidfd: StartOrphanReaper's error when this process cannot tell its
// own children by their pidfds (before Linux 5.4, or a seccomp filter that
// refuses pidfd_open or waitid(P_PIDFD)).
var errNoPidfd = errors.New("reaper: pidfds unavailable: orphans are reaped only by KillDescendants")

// pidfdsWork probes what os needs to give every child a pidfd:
// pidfd_open (Linux 5.3) and waitid(P_PIDFD) (Linux 5.4).
var pidfdsWork = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var info unix.Siginfo
	err = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
	return errors.Is(err, unix.ECHILD)
})

// StartOrphanReaper reaps the orphans re-parented to this process (see
// Become) as they exit: on every SIGCHLD (signal.Notify), ReapOrphans,
// through throttle when not nil (the run's --cpus share: the command
// makes the orphans, and landjail's work for them is counted in its
// share, R30b-1; throttle runs its argument, and may wait first).
// Start it only where no PID namespace's init reaps them. stop ends it
// and returns once no ReapOrphans runs any more. Safe with any number of
// exec.Cmd children of this process running and waited for meanwhile.
// Errors: wraps errNoPidfd when this process cannot tell its own children
// (before Linux 5.4): nothing is started, the zombies stay until
// KillDescendants.
func StartOrphanReaper(throttle func(work func())) (stop func(), err error) {
	if !pidfdsWork() {
		return nil, errNoPidfd
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGCHLD)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		reap := func() { ReapOrphans() }
		if throttle != nil {
			reap = func() { throttle(func() { ReapOrphans() }) }
		}
		reap() // the ones that exited before Notify
		for {
			select {
			case <-ch:
				reap()
			case <-quit:
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		signal.Stop(ch)
		close(quit)
		<-done
	}), nil
}

// ReapOrphans reaps every zombie child of this process that is not owned
// (see StartOrphanReaper) and returns how many it reaped. Errors: reading
// /proc; wait4's errno other than ECHILD.
//
// Its cost is per zombie, not per child (red team round 30, R30b-1: a
// scan of every child on each SIGCHLD let a command with 3,000 sleeping
// orphans and a stream of exiting ones burn a CPU of landjail's): it
// asks the kernel for a zombie (waitid WNOWAIT), reads which pids this
// process holds a pidfd on once per call, and reaps the zombie unless it
// is owned or spared; only when the kernel's first zombie is one of
// those (an exec.Cmd child whose Wait has not run yet: briefly) does it
// list the children and read each one's state, as before.
func ReapOrphans() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	var owned map[int]bool // read once: no Go fork while ForkLock is held
	n := 0
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.ECHILD) || (err == nil && info.Signo == 0) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("reaper: waitid(P_ALL): %w", err)
		}
		if owned == nil {
			if owned, err = pidfdPids(); err != nil {
				return n, err
			}
		}
		pid := siginfoPid(&info)
		if _, ok := spared.Load(pid); ok || owned[pid] || pid <= 0 {
			m, err := scan(owned)
			return n + m, err
		}
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if err != nil && !errors.Is(err, unix.ECHILD) {
			return n, fmt.Errorf("reaper: wait4(%d): %w", pid, err)
		}
		if got != pid {
			// Reported by waitid, yet not reaped: leave the rest to
			// the scan rather than ask the kernel again forever.
			m, err := scan(owned)
			return n + m, err
		}
		n++
	}
}

// siginfoPid is si_pid of a siginfo_t that waitid(2) filled: the union
// after si_signo, si_errno and si_code starts at the alignment of a
// pointer (offset 16 on 64-bit Linux, 12 on 32-bit), si_pid first.
func siginfoPid(info *unix.Siginfo) int {
	off := (12 + unsafe.Alignof(uintptr(0)) - 1) &^ (unsafe.Alignof(uintptr(0)) - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// scan is reapScan (a variable for tests).
var scan = reapScan

// reapScan reaps every zombie child that is neither owned nor spared, by
// listing the children and reading each one's state (ReapOrphans, when
// the kernel's first zombie is not to be reaped). The caller holds
// syscall.ForkLock for reading.
func reapScan(owned map[int]bool) (int, error) {
	pids, err := Children()
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	n := 0
	for _, pid := range pids {
		if _, ok := spared.Load(pid); ok || owned[pid] {
			continue
		}
		if st, err := readStat(pid); err != nil || st.state != 'Z' || st.ppid != self {
			continue
		}
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if err != nil && !errors.Is(err, unix.ECHILD) {
			return n, fmt.Errorf("reaper: wait4(%d): %w", pid, err)
		}
		if got == pid {
			n++
		}
	}
	return n, nil
}

// pidfdPids returns the pids this process holds a pidfd on, from the
// "Pid:" line of /proc/self/fdinfo/N (Linux 5.3; only pidfds have one).
func pidfdPids() (map[int]bool, error) {
	d, err := os.Open("/proc/self/fdinfo")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	pids := map[int]bool{}
	for _, n := range names {
		b, err := os.ReadFile("/proc/self/fdinfo/" + n)
		if err != nil {
			continue // closed meanwhile (ours: /proc/self/fdinfo's own)
		}
		s := string(b)
		i := strings.Index(s, "\nPid:")
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+len("\nPid:"):])
		if len(f) == 0 {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil && pid > 0 {
			pids[pid] = true
		}
	}
	return pids, nil
}
