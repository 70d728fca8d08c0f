package stagestart

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"syscall"
	"time"

	"github.com/landjail/landjail/internal/stagestart/sysclone"
)

// StartEarly clones the stage for a run whose view makes its own network
// namespace or not (privateNetwork) from the executable exe (a path of
// this program's own binary: /proc/self/exe), on a goroutine, as exec's
// PrestartUserStage does: /dev/null as stdio, one AF_UNIX stream socket
// as fd 3, the binary as 4, a keep-alive pipe's read end as 5; argv
// {landjail-init}, the marker "3,3[,net],ids=UID:GID" and GOMAXPROCS;
// new user, mount, PID and IPC namespaces, CAP_SYS_ADMIN and
// CAP_NET_ADMIN ambient, a new session, CLONE_VM|CLONE_VFORK. A second
// call does nothing. It is sysclone.Start, which package early calls
// directly (its initialization then needs only package syscall's).
func StartEarly(exe string, privateNetwork bool) { sysclone.Start(exe, privateNetwork) }

// take adopts the stage sysclone cloned: its os/exec.Cmd is built around
// the process (os.FindProcess: a pidfd) on another goroutine, and Done is
// closed when it is ready.
func take() *Stage {
	rs := sysclone.Take()
	if rs == nil {
		return nil
	}
	st := &Stage{Net: rs.Net, Done: make(chan struct{})}
	go st.adopt(rs)
	return st
}

func (st *Stage) adopt(rs *sysclone.Stage) {
	defer close(st.Done)
	<-rs.Done
	if rs.Err != nil {
		st.Err = rs.Err
		return
	}
	// The stage is this process's child and nothing reaps it but its
	// Cmd's Wait: its pid cannot name another process meanwhile, and
	// the handle FindProcess returns (a pidfd) is the stage's.
	proc, err := os.FindProcess(rs.Pid)
	if rs.PidFD >= 0 { // proc holds its own now (see sysclone.Stage.PidFD)
		syscall.Close(rs.PidFD)
	}
	if err != nil { // not on Linux; kept for the error's sake
		syscall.Kill(rs.Pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(rs.Pid, &ws, 0, nil)
		syscall.Close(rs.Sock)
		syscall.Close(rs.KeepW)
		st.Err = fmt.Errorf("stagestart: %w", err)
		return
	}
	st.Sock = os.NewFile(uintptr(rs.Sock), "stage")
	st.KeepW = os.NewFile(uintptr(rs.KeepW), "|1")
	st.Cmd = &osexec.Cmd{
		Path:        "/proc/self/fd/4",
		Args:        Args(),
		Env:         Env(Marker(3, 3, st.Net)),
		SysProcAttr: SysProcAttr(),
		Process:     proc,
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.Ctx = ctx
	st.Stop = func() {
		cancel()
		st.canceled()
	}
}

// canceled is what os/exec's context watch does for a Cmd it started,
// once, when Stop is called before the stage was waited for: it calls
// Hook (Cmd.Cancel's body), keeps the error Wait would return for a
// stage that then exits 0 (WaitErr), and kills the stage Cmd.WaitDelay
// later unless it was waited for by then.
func (st *Stage) canceled() {
	st.once.Do(func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		proc := st.Cmd.Process
		if errors.Is(proc.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			return // waited for: os/exec's watch has ended by then
		}
		if h := st.Hook.Load(); h != nil {
			if err := (*h)(); err == nil {
				st.cancelErr = context.Canceled
			} else if !errors.Is(err, os.ErrProcessDone) {
				st.cancelErr = fmt.Errorf("exec: canceling Cmd: %w", err)
			}
		}
		if d := st.Cmd.WaitDelay; d > 0 {
			time.AfterFunc(d, func() { proc.Kill() }) // ErrProcessDone once waited for
		}
	})
}

// WaitErr is the error Cmd.Wait's caller reports for a stage this
// package adopted, given err, Wait's own: err, or when it is nil the
// error of a cancellation before the stage's exit (as os/exec's Wait
// reports its context's error for a command it interrupted that then
// exited 0).
func (st *Stage) WaitErr(err error) error {
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cancelErr
}

func waitEarly() { sysclone.Wait() }

// Args is the stage's argv: {nsinit.Argv0}.
func Args() []string { return sysclone.Args() }

// ResetForTest forgets a stage StartEarly started and that it was taken,
// so that a test can start another (exec's tests).
func ResetForTest() { sysclone.ResetForTest() }

// Env is the stage's environment: the marker, then GOMAXPROCS set to
// this process's (nsinit.Env; the stage's runtime then takes it as it
// is).
func Env(marker string) []string { return sysclone.Env(marker) }

// Marker is nsinit.EnvMarker's value for a stage reading its spec on
// descriptor spec and writing its status on status (one socket when
// equal), making its network namespace ahead with net, and mapping this
// process's uid and gid.
func Marker(spec, status int, net bool) string { return sysclone.Marker(spec, status, net) }

// SysProcAttr is how the stage is cloned (see exec's stageSysProcAttr,
// which returns this).
func SysProcAttr() *syscall.SysProcAttr { return sysclone.SysProcAttr() }
