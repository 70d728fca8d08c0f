package stagestart

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// These are nsinit's EnvMarker and Argv0, nsview's UserNSFlags and
// unix.CAP_SYS_ADMIN and CAP_NET_ADMIN (exec's tests check that they are
// equal), written out: this package imports neither nsinit, nsview nor
// golang.org/x/sys/unix, whose initialization comes late (the package
// initialization order is by import path among the packages ready).
const (
	envMarker   = "LANDJAIL_NSINIT"
	argv0       = "landjail-init"
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

// StartEarly clones the stage for a run whose view makes its own network
// namespace or not (privateNetwork) from the executable exe (a path of
// this program's own binary: /proc/self/exe), on a goroutine, as exec's
// PrestartUserStage does: /dev/null as stdio, one AF_UNIX stream socket
// as fd 3, the binary as 4, a keep-alive pipe's read end as 5; argv
// {landjail-init}, the marker "3,3[,net],ids=UID:GID" and GOMAXPROCS;
// new user, mount, PID and IPC namespaces, CAP_SYS_ADMIN and
// CAP_NET_ADMIN ambient, a new session, CLONE_VM|CLONE_VFORK. A second
// call does nothing.
func StartEarly(exe string, privateNetwork bool) {
	early.mu.Lock()
	defer early.mu.Unlock()
	if early.st != nil || early.taken {
		return
	}
	st := &Stage{Net: privateNetwork, Done: make(chan struct{})}
	early.st, early.started = st, st
	go st.start(exe)
}

func (st *Stage) start(exe string) {
	defer close(st.Done)
	f, err := os.OpenFile(exe, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		st.Err = err
		return
	}
	defer f.Close() // the stage has its own copy (fd 4)
	sv, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		st.Err = fmt.Errorf("stagestart: socketpair: %w", err)
		return
	}
	st.Sock = os.NewFile(uintptr(sv[0]), "stage")
	theirs := os.NewFile(uintptr(sv[1]), "stage")
	defer theirs.Close()
	keepR, keepW, err := os.Pipe()
	if err != nil {
		st.Sock.Close()
		st.Err = err
		return
	}
	defer keepR.Close()
	st.KeepW = keepW
	st.Ctx, st.Stop = context.WithCancel(context.Background())
	cmd := osexec.CommandContext(st.Ctx, "/proc/self/fd/4")
	cmd.Args = Args()
	cmd.Env = Env(Marker(3, 3, st.Net))
	cmd.ExtraFiles = []*os.File{theirs, f, keepR}
	cmd.SysProcAttr = SysProcAttr()
	cmd.Cancel = func() error {
		if h := st.Hook.Load(); h != nil {
			return (*h)()
		}
		return nil
	}
	st.Cmd = cmd
	if err := cmd.Start(); err != nil {
		st.Sock.Close()
		keepW.Close()
		st.Stop()
		st.Err = fmt.Errorf("stagestart: %w", err)
	}
}

func take() *Stage {
	early.mu.Lock()
	defer early.mu.Unlock()
	st := early.st
	early.st, early.taken = nil, true
	return st
}

func waitEarly() {
	early.mu.Lock()
	st := early.started
	early.mu.Unlock()
	if st != nil {
		<-st.Done
	}
}

// Args is the stage's argv: {nsinit.Argv0}.
func Args() []string { return []string{argv0} }

// ResetForTest forgets a stage StartEarly started and that it was taken,
// so that a test can start another (exec's tests).
func ResetForTest() {
	early.mu.Lock()
	defer early.mu.Unlock()
	early.st, early.taken = nil, false
}

// Env is the stage's environment: the marker, then GOMAXPROCS set to
// this process's (nsinit.Env; the stage's runtime then takes it as it
// is).
func Env(marker string) []string {
	return []string{envMarker + "=" + marker, "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))}
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
	return m + ",ids=" + strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
}

// SysProcAttr is how the stage is cloned (see exec's stageSysProcAttr,
// which returns this).
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setsid:      true,
		Cloneflags:  userNSFlags | syscall.CLONE_VM | syscall.CLONE_VFORK,
		AmbientCaps: []uintptr{capSysAdmin, capNetAdmin},
	}
}
