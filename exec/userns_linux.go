package exec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// errNoStage: the Ruleset's view needs the user-namespace stage (the
// caller is not root) and the program did not register it (Init).
var errNoStage = errors.New("exec: the namespace view of a non-root caller needs the user-namespace stage: call exec.Init first thing in main")

// userStage is the parent's side of one user-namespace stage
// (internal/nsinit): the pipes and the descriptors handed to it.
type userStage struct {
	specW, statusR  *os.File
	keepW           *os.File // the keep-alive pipe's write end: Wait closes it
	closeAfterStart []*os.File
	spec            nsinit.Spec
	exit            *stageExit // the status channel of a lingering stage (Spec.Linger)
}

// stageExit is the parent's end of a lingering stage's status channel
// (nsinit.Spec.Linger), past the Status line: the stage writes an Exit
// line on it once the target exited and nothing is left in its
// namespace, or closes it (it then exits as without Linger).
type stageExit struct {
	f  *os.File
	rd *bufio.Reader
}

// read returns the stage's Exit line, ok false at end of file or on an
// error (the stage exits, or died: reap it). It closes the channel.
func (e *stageExit) read() (code int, ok bool) {
	line, err := e.rd.ReadBytes('\n')
	e.f.Close()
	if err != nil {
		return 0, false
	}
	x, err := nsinit.ParseExit(line)
	if err != nil || x.Code < 0 || x.Code > 255 {
		return 0, false
	}
	return x.Code, true
}

// close closes the channel unread (nil: nothing).
func (e *stageExit) close() {
	if e != nil {
		e.f.Close()
	}
}

// newUserStage rewrites inner (built for the target, p) to start the
// stage instead: /proc/self/fd/N of the registered binary
// (nsinit.Exe), argv {nsinit.Argv0}, environment nsinit.Env(stageMarker),
// cloned as stageSysProcAttr says; stdio and ExtraFiles as the target's
// (fds 0..2+len), then the spec pipe, the status pipe, a ruleset of the
// stage's own (Ruleset.ForkFD: the stage adds its /proc to it), the
// binary and the read end of a keep-alive pipe (the stage ends its
// namespaces at end of file: landjail died).
func (c *Cmd) newUserStage(inner *osexec.Cmd, p *prepared) (*userStage, error) {
	n := 3 + len(c.ExtraFiles)
	st, err := c.stageSpec(p, n)
	if err != nil {
		return nil, err
	}
	lfd := st.closeAfterStart[0]
	specR, specW, err := os.Pipe()
	if err != nil {
		lfd.Close()
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		lfd.Close()
		specR.Close()
		specW.Close()
		return nil, err
	}
	keepR, keepW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{lfd, specR, specW, statusR, statusW} {
			f.Close()
		}
		return nil, err
	}
	st.specW, st.statusR, st.keepW = specW, statusR, keepW
	st.closeAfterStart = append(st.closeAfterStart, specR, statusW, keepR)
	// The child's fds from 3 are the dup2'd ExtraFiles: the binary is
	// passed as one of them (n+3) so no dup2 can replace it before execve.
	inner.Path = "/proc/self/fd/" + strconv.Itoa(n+3)
	inner.Args = []string{nsinit.Argv0}
	inner.Env = nsinit.Env(stageMarker(n, n+1, c.Ruleset.Report().PrivateNetwork))
	inner.Dir = ""
	inner.ExtraFiles = append(append([]*os.File(nil), c.ExtraFiles...), specR, statusW, lfd, nsinit.Exe(), keepR)
	inner.SysProcAttr = stageSysProcAttr()
	return st, nil
}

// stageSpec checks that c may use the stage and makes the spec for the
// target p with nfiles descriptors, the descriptors numbered as
// newUserStage hands them, and the stage's ruleset (Ruleset.ForkFD), the
// first of closeAfterStart.
func (c *Cmd) stageSpec(p *prepared, nfiles int) (*userStage, error) {
	if nsinit.Exe() == nil {
		return nil, errNoStage
	}
	if c.InNamespace != nil {
		return nil, errors.New("exec: InNamespace needs a root caller (the user-namespace stage builds the view in another process)")
	}
	if c.Credential != nil {
		return nil, errors.New("exec: Credential needs a root caller")
	}
	view, _ := c.Ruleset.View()
	lfd, flags, err := c.Ruleset.ForkFD()
	if err != nil {
		return nil, err
	}
	n := nfiles
	return &userStage{
		closeAfterStart: []*os.File{lfd},
		spec: nsinit.Spec{
			Path: p.path, Argv: p.argv, Env: p.env, Dir: p.dir,
			Setctty: c.Setctty, Ctty: c.Ctty,
			NFiles:        n,
			LandlockFD:    n + 2,
			LandlockFlags: flags,
			ExeFD:         n + 3,
			KeepFD:        n + 4,
			Seccomp:       nsinit.EncodeProgram(seccompProgram(c.Seccomp)),
			// --explain: the stage installs the explaining program with
			// a listener that finish takes and serves (issue 23).
			SeccompListener: c.Seccomp.Explained(),
			View:            &view,
			TmpAccess:       tmpAccess(c.Ruleset, view),
			Linger:          c.DeferNamespaceEnd,
			Rlimits:         stageRlimits(c.Rlimits),
		},
	}, nil
}

// stageRlimits are rs for the stage to set on itself, hard ones
// included, right before it forks the target (nsinit.Spec.Rlimits):
// setRlimits could set only the soft ones for the stage's clone without
// CAP_SYS_RESOURCE.
func stageRlimits(rs []Rlimit) []nsinit.Rlimit {
	var out []nsinit.Rlimit
	for _, r := range rs {
		out = append(out, nsinit.Rlimit{Resource: r.Resource, Cur: r.Cur, Max: r.Max})
	}
	return out
}

// finish completes the stage after inner.Start returned startErr: it
// closes the parent's copies of the stage's descriptors, sends the spec
// and waits for the status (readStatus).
func (st *userStage) finish(c *Cmd, startErr error, inner *osexec.Cmd, p *prepared) error {
	for _, f := range st.closeAfterStart {
		f.Close()
	}
	if startErr != nil {
		st.statusR.Close()
		st.specW.Close()
		return fmt.Errorf("exec: user-namespace stage: %w", startErr)
	}
	b, err := st.spec.AppendBinary(nil)
	if err == nil {
		_, err = st.specW.Write(b)
	}
	st.specW.Close()
	if err != nil {
		st.statusR.Close()
		inner.Process.Kill()
		inner.Wait()
		return err
	}
	return st.readStatus(c, inner, p)
}

// readStatus reads the stage's status line from statusR and closes it,
// unless the stage lingers (Spec.Linger: statusR is then kept in
// st.exit, for Wait to read the Exit line); with --explain it takes and
// serves the stage's seccomp listener. A stage that failed before the
// target ran is waited for, and its error returned as os.StartProcess
// would (*fs.PathError "fork/exec" for the target's execve).
func (st *userStage) readStatus(c *Cmd, inner *osexec.Cmd, p *prepared) error {
	rd := bufio.NewReaderSize(st.statusR, 512)
	out, err := rd.ReadBytes('\n')
	if err == io.EOF && len(out) > 0 {
		err = nil
	}
	if err == nil && st.spec.Linger && bytes.HasSuffix(out, []byte("\n")) {
		st.exit = &stageExit{f: st.statusR, rd: rd}
	} else {
		st.statusR.Close()
	}
	var status nsinit.Status
	if err == nil {
		status, err = nsinit.ParseStatus(out)
		if err != nil {
			err = fmt.Errorf("exec: user-namespace stage died before the target ran (status %q): %w", out, unix.EIO)
		}
	}
	if err == nil && status.Errno == 0 && status.Listener > 0 {
		err = serveStageListener(c, inner.Process.Pid, status.Listener)
	}
	if err == nil && status.Errno == 0 {
		return nil
	}
	st.exit.close()
	st.exit = nil
	inner.Process.Kill()
	inner.Wait()
	if err != nil {
		return err
	}
	if status.Op == "fork/exec" {
		return &fs.PathError{Op: "fork/exec", Path: p.path, Err: syscall.Errno(status.Errno)}
	}
	return fmt.Errorf("exec: user-namespace stage: %s: %s: %w", status.Op, status.Msg, syscall.Errno(status.Errno))
}

// startUserStage starts inner through the user-namespace stage, or hands
// the target to a stage PrestartUserStage started (ctx is the run's
// context), and returns the os/exec.Cmd of the stage (inner, or the
// prestarted one replacing it), the keep-alive pipe's write end, for
// Wait to close, and a lingering stage's status channel (nil unless
// DeferNamespaceEnd).
func (c *Cmd) startUserStage(ctx context.Context, inner *osexec.Cmd, p *prepared) (*osexec.Cmd, *os.File, *stageExit, error) {
	if ps := c.takePrestage(inner); ps != nil {
		return c.usePrestage(ps, ctx, inner, p)
	}
	st, err := c.newUserStage(inner, p)
	if err != nil {
		return nil, nil, nil, err
	}
	start := c.placed(inner)
	if c.joins() {
		join := start
		start = func() error {
			return onFreshThread(func() error {
				if err := c.joinCgroup(); err != nil {
					return err
				}
				return join()
			})
		}
	}
	if err := st.finish(c, start(), inner, p); err != nil {
		st.keepW.Close()
		return nil, nil, nil, err
	}
	return inner, st.keepW, st.exit, nil
}

// tmpAccess is Spec.TmpAccess: every right rs handles when its view has a
// private /tmp, else 0.
func tmpAccess(rs *landlock.Ruleset, v nsview.View) uint64 {
	if !v.HasPrivateTmp() {
		return 0
	}
	return rs.HandledAccessFS()
}

// serveStageListener takes the seccomp listener the stage (pid) reported
// (pidfd_getfd: landjail owns the stage's user namespace, so it may,
// though the stage is not dumpable) and serves it with c.Seccomp. The
// target waits in its first notified call until then; an error ends the
// run (finish kills the stage), so a listener nobody serves never hangs it.
func serveStageListener(c *Cmd, pid, listener int) error {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("exec: --explain: the stage's seccomp listener: pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, listener, 0)
	if err != nil {
		return fmt.Errorf("exec: --explain: the stage's seccomp listener: pidfd_getfd: %w", err)
	}
	return c.Seccomp.Serve(fd)
}

// seccompProgram is the program the stage installs: the explaining one
// with --explain (SeccompListener), the plain one otherwise.
func seccompProgram(f *seccomp.Filter) []unix.SockFilter {
	if f.Explained() {
		return f.ExplainProgram()
	}
	return f.Program()
}
