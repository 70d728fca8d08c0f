package sysclone

import (
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

const (
	userNSFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	capSysAdmin = 21
	capNetAdmin = 12
)

var early struct {
	mu      sync.Mutex
	st      *Stage // started, not taken
	started *Stage // started, taken or not
	taken   bool
}

// Start clones the stage for a run whose view makes its own network
// namespace or not (privateNetwork) from the executable exe (a path of
// this program's own binary: /proc/self/exe), on a goroutine, as exec's
// PrestartUserStage does: /dev/null as stdio (0 read-only, 1 and 2
// write-only, as os/exec opens it for nil streams), one AF_UNIX stream
// socket as fd 3, the binary as 4, a keep-alive pipe's read end as 5;
// argv {Argv0}, Env(Marker(3, 3, privateNetwork)), SysProcAttr's clone.
// A second call does nothing, as does a call after Take.
func Start(exe string, privateNetwork bool) {
	early.mu.Lock()
	defer early.mu.Unlock()
	if early.st != nil || early.taken {
		return
	}
	st := &Stage{Net: privateNetwork, Done: make(chan struct{}), Pid: -1, PidFD: -1, Sock: -1, KeepW: -1}
	early.st, early.started = st, st
	go st.start(exe)
}

func (st *Stage) start(exe string) {
	defer close(st.Done)
	var theirs []int // the child's copies: closed here once it is cloned
	defer func() {
		for _, fd := range theirs {
			syscall.Close(fd)
		}
	}()
	fail := func(op string, err error) {
		st.Err = &Error{Op: op, Err: err}
		for _, fd := range []int{st.Sock, st.KeepW} {
			if fd >= 0 {
				syscall.Close(fd)
			}
		}
		st.Sock, st.KeepW = -1, -1
	}
	rd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fail("open /dev/null", err)
		return
	}
	theirs = append(theirs, rd)
	wr, err := syscall.Open("/dev/null", syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fail("open /dev/null", err)
		return
	}
	theirs = append(theirs, wr)
	bin, err := syscall.Open(exe, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fail("open "+exe, err)
		return
	}
	theirs = append(theirs, bin)
	sv, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		fail("socketpair", err)
		return
	}
	st.Sock = sv[0]
	theirs = append(theirs, sv[1])
	var keep [2]int
	if err := syscall.Pipe2(keep[:], syscall.O_CLOEXEC); err != nil {
		fail("pipe2", err)
		return
	}
	st.KeepW = keep[1]
	theirs = append(theirs, keep[0])
	// A pidfd from the clone on, held until the stage's Cmd has its own:
	// it marks the stage as this process's own child, which
	// reaper.ReapOrphans must leave to its waiter.
	sys := SysProcAttr()
	sys.PidFD = &st.PidFD
	pid, err := syscall.ForkExec("/proc/self/fd/4", Args(), &syscall.ProcAttr{
		Env:   Env(Marker(3, 3, st.Net)),
		Files: []uintptr{uintptr(rd), uintptr(wr), uintptr(wr), uintptr(sv[1]), uintptr(bin), uintptr(keep[0])},
		Sys:   sys,
	})
	if err != nil {
		fail("fork/exec", err)
		return
	}
	st.Pid = pid
}

// Take returns the stage Start started (nil: none), once: later calls
// return nil, and Start does nothing after it. It does not wait for the
// clone (Done).
func Take() *Stage {
	early.mu.Lock()
	defer early.mu.Unlock()
	st := early.st
	early.st, early.taken = nil, true
	return st
}

// Cloned waits until a clone Start began has returned and reports
// whether it cloned the stage: this process may make a child in new user,
// mount, PID and IPC namespaces (nsview.UserNSFlags), which the
// user-namespace probe then need not make again (nsview.ProbeUserNS).
// False when Start was not called.
func Cloned() bool {
	early.mu.Lock()
	st := early.started
	early.mu.Unlock()
	if st == nil {
		return false
	}
	<-st.Done
	return st.Err == nil && st.Pid > 0
}

// Wait waits until a clone Start began has returned.
func Wait() {
	early.mu.Lock()
	st := early.started
	early.mu.Unlock()
	if st != nil {
		<-st.Done
	}
}

// ResetForTest forgets a stage Start started and that it was taken.
func ResetForTest() {
	early.mu.Lock()
	defer early.mu.Unlock()
	early.st, early.taken = nil, false
}

// Args is the stage's argv: {Argv0}.
func Args() []string { return []string{Argv0} }

// Env is the stage's environment: the marker, then GOMAXPROCS set to
// this process's (nsinit.Env; the stage's runtime then takes it as it
// is).
func Env(marker string) []string {
	return []string{EnvMarker + "=" + marker, "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))}
}

// Marker is nsinit.EnvMarker's value for a stage reading its spec on
// descriptor spec and writing its status on status (one socket when
// equal), making its network namespace ahead with net, and mapping this
// process's uid and gid.
func Marker(spec, status int, net bool) string {
	m := strconv.Itoa(spec) + "," + strconv.Itoa(status)
	if net {
		m += ",net"
	}
	return m + ",ids=" + strconv.Itoa(syscall.Getuid()) + ":" + strconv.Itoa(syscall.Getgid())
}

// SysProcAttr is how the stage is cloned (see exec's stageSysProcAttr,
// which returns the same).
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setsid:      true,
		Cloneflags:  userNSFlags | syscall.CLONE_VM | syscall.CLONE_VFORK,
		AmbientCaps: []uintptr{capSysAdmin, capNetAdmin},
	}
}
