package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/stagestart"
	"github.com/landjail/landjail/landlock"
)

// prestage is a user-namespace stage started before its command was
// known (PrestartUserStage): running, waiting on sock for a spec.
type prestage struct {
	cmd   *osexec.Cmd
	sock  *os.File // the parent's end of the stage's socket
	keepW *os.File // the keep-alive pipe's write end
	// cancel ends the context cmd was started with; the Cmd that takes
	// the stage links its own context to it. cancelHook is cmd.Cancel's
	// body, set by the taker (until then Cancel does nothing).
	cancel     context.CancelFunc
	cancelHook *atomic.Pointer[func() error]
	done       chan struct{} // closed when the start below returned
	err        error         // the start's error, once done
	// viewDone is closed once the view frame was written (sendView):
	// view is what was sent, viewErr why it could not be.
	viewDone chan struct{}
	view     []byte
	viewErr  error
	// rs is the Ruleset whose view was sent (its view is fixed when
	// it is compiled): a Cmd with the same Ruleset needs no comparison.
	rs *landlock.Ruleset
	// waitErr, for a stage adopted from stagestart (whose Cmd os/exec
	// did not start), turns cmd.Wait's error into the one os/exec would
	// have returned (stagestart.Stage.WaitErr); nil otherwise.
	waitErr func(error) error
}

// prestaged holds the one prestarted stage until a Start takes it.
var prestaged struct {
	mu sync.Mutex
	ps *prestage
}

// prestageTaken counts the stages Start took from PrestartUserStage (for
// tests).
var prestageTaken atomic.Int64

func prestartUserStage(privateNetwork bool) {
	if unix.Geteuid() == 0 || nsinit.Exe() == nil {
		return
	}
	prestaged.mu.Lock()
	defer prestaged.mu.Unlock()
	if prestaged.ps != nil {
		return
	}
	ps := &prestage{done: make(chan struct{}), viewDone: make(chan struct{}), cancelHook: new(atomic.Pointer[func() error])}
	prestaged.ps = ps
	// A stage cloned from cmd/landjail's package initialization
	// (internal/stagestart) for the same network is this one: adopted
	// once its start returned. One for another network is discarded.
	if es := stagestart.Take(); es != nil {
		if es.Net == privateNetwork {
			go ps.adopt(es)
			return
		}
		earlyDiscards.Add(1)
		go func() {
			defer earlyDiscards.Done()
			discardEarly(es)
		}()
	}
	go ps.start(privateNetwork)
}

// adopt makes the stage stagestart cloned ps's, once its start returned.
func (ps *prestage) adopt(es *stagestart.Stage) {
	defer close(ps.done)
	<-es.Done
	if es.Err != nil {
		ps.err = fmt.Errorf("exec: user-namespace stage: %w", es.Err)
		return
	}
	ps.cmd, ps.sock, ps.keepW, ps.cancel, ps.cancelHook = es.Cmd, es.Sock, es.KeepW, es.Stop, &es.Hook
	ps.waitErr = es.WaitErr
	prestageAdopted.Add(1)
}

// discardEarly ends a stage stagestart cloned that no run can use.
func discardEarly(es *stagestart.Stage) {
	<-es.Done
	if es.Err == nil {
		(&prestage{cmd: es.Cmd, sock: es.Sock, keepW: es.KeepW, cancel: es.Stop}).discard()
	}
}

// earlyDiscards counts the discards of early stages under way
// (discardPrestage waits for them).
var earlyDiscards sync.WaitGroup

// prestageAdopted counts the stages adopted from stagestart (for tests).
var prestageAdopted atomic.Int64

// start clones the stage as newUserStage does, with its own descriptors
// only: /dev/null as stdio, the socket (fd 3, both the spec and the
// status: see nsinit.EnvMarker), the binary (4) and the keep-alive pipe
// (5); the target's descriptors and ruleset come later with the spec.
func (ps *prestage) start(privateNetwork bool) {
	defer close(ps.done)
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		ps.err = fmt.Errorf("exec: user-namespace stage: socketpair: %w", err)
		return
	}
	ps.sock = os.NewFile(uintptr(sv[0]), "stage")
	theirs := os.NewFile(uintptr(sv[1]), "stage")
	defer theirs.Close()
	keepR, keepW, err := os.Pipe()
	if err != nil {
		ps.sock.Close()
		ps.err = err
		return
	}
	defer keepR.Close()
	ps.keepW = keepW
	ctx, cancel := context.WithCancel(context.Background())
	ps.cancel = cancel
	cmd := osexec.CommandContext(ctx, "/proc/self/fd/4")
	cmd.Args = []string{nsinit.Argv0}
	cmd.Env = nsinit.Env(stageMarker(3, 3, privateNetwork))
	cmd.ExtraFiles = []*os.File{theirs, nsinit.Exe(), keepR}
	cmd.SysProcAttr = stageSysProcAttr()
	cmd.Cancel = func() error {
		if f := ps.cancelHook.Load(); f != nil {
			return (*f)()
		}
		return nil
	}
	ps.cmd = cmd
	// A spawn with Rlimits sets them on the whole process meanwhile:
	// the stage must not inherit them.
	rlimitMu.RLock()
	err = cmd.Start()
	rlimitMu.RUnlock()
	if err != nil {
		ps.sock.Close()
		keepW.Close()
		cancel()
		ps.err = fmt.Errorf("exec: user-namespace stage: %w", err)
	}
}

// reservePrestage, for a Cmd whose Ruleset has the user-namespace view,
// takes the prestarted stage for it (c.pre) and sends the stage the view
// on another goroutine, so that the stage builds it while the caller
// gets on to Start.
func (c *Cmd) reservePrestage() {
	if c.Ruleset == nil || !c.Ruleset.UserNamespace() {
		return
	}
	prestaged.mu.Lock()
	ps := prestaged.ps
	prestaged.ps = nil
	prestaged.mu.Unlock()
	if ps == nil {
		return
	}
	c.pre = ps
	ps.rs = c.Ruleset
	view, _ := c.Ruleset.View()
	go ps.sendView(view)
}

// sendView writes the view frame (nsinit.Ahead: the view and the mount
// table Compile read, see nsinit.EnvMarker) once the stage runs, and
// records the view's encoding.
func (ps *prestage) sendView(v nsview.View) {
	defer close(ps.viewDone)
	<-ps.done
	if ps.err != nil {
		ps.viewErr = ps.err
		return
	}
	b, err := v.AppendBinary(nil)
	var frame []byte
	if err == nil {
		mounts, max := nsview.LastMountTable()
		frame, err = (&nsinit.Ahead{View: b, Mounts: mounts, MountMax: max}).AppendBinary(make([]byte, 4))
	}
	if err != nil {
		ps.viewErr = err
		return
	}
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-4))
	if _, err := ps.sock.Write(frame); err != nil {
		ps.viewErr = err
		return
	}
	ps.view = b
}

// takePrestage returns the prestarted stage, once started, if there is
// one and c may use it, and forgets it either way: one that c may not use
// is discarded (killed and reaped on another goroutine). The stage is c's
// own (reservePrestage) or, when c has none, the waiting one, which gets
// the view now. A stage that was sent a view other than c's Ruleset's
// (the Ruleset was replaced after CommandContext) is not used: the view
// sent is compared with c's (binary form) unless it came from c's Ruleset
// itself (a Ruleset's view is fixed by Compile), which saves a second
// encoding on the way to the spec.
func (c *Cmd) takePrestage(inner *osexec.Cmd) *prestage {
	ps := c.pre
	c.pre = nil
	view, _ := c.Ruleset.View()
	if ps == nil {
		prestaged.mu.Lock()
		ps = prestaged.ps
		prestaged.ps = nil
		prestaged.mu.Unlock()
		if ps == nil {
			return nil
		}
		ps.rs = c.Ruleset
		ps.sendView(view)
	}
	<-ps.done
	if ps.err != nil {
		return nil
	}
	<-ps.viewDone
	same := ps.viewErr == nil && ps.rs == c.Ruleset
	if !same && ps.viewErr == nil {
		b, err := view.AppendBinary(nil)
		same = err == nil && bytes.Equal(b, ps.view)
	}
	if !same || !c.mayTakePrestage(inner) {
		go ps.discard()
		return nil
	}
	return ps
}

// mayTakePrestage reports whether c's stage may be one started before c
// was known: nothing that must hold from the stage's clone on (rlimits,
// a control group to start in) and every descriptor of the target an
// *os.File that can be passed (os/exec makes pipes for other streams in
// the stage itself).
func (c *Cmd) mayTakePrestage(inner *osexec.Cmd) bool {
	if len(c.Rlimits) > 0 || (c.Cgroup != nil && !groupless(c.Cgroup)) {
		return false
	}
	if len(c.ExtraFiles)+4 > maxPassed {
		return false
	}
	for _, s := range []any{inner.Stdin, inner.Stdout, inner.Stderr} {
		if f, ok := s.(*os.File); !ok || f == nil {
			return false
		}
	}
	for _, f := range c.ExtraFiles {
		if f == nil {
			return false
		}
	}
	return true
}

// groupless reports whether p places nothing: a limits.Run without a
// group (a best-effort limit this caller cannot enforce) has Path "".
func groupless(p CgroupPlacement) bool {
	g, ok := p.(interface{ Path() string })
	return ok && p.CgroupFD() < 0 && g.Path() == ""
}

// maxPassed is SCM_MAX_FD (include/net/scm.h): the most descriptors one
// message may pass (the target's and its ruleset).
const maxPassed = 253

// discard ends an unused prestarted stage: end of file on its socket
// (it exits before building anything), then its keep-alive pipe, and
// reaps it.
func (ps *prestage) discard() {
	ps.sock.Close()
	ps.keepW.Close()
	ps.cmd.Wait()
	ps.cancel()
}

// discardPrestage ends the stage c reserved, the one PrestartUserStage
// started that no Cmd took and one stagestart cloned that nothing
// adopted, and reaps them, and waits for the discards of early stages
// under way: Cmd.Exec calls it before replacing the process, so that the
// command it becomes never sees a child it did not make. It waits for
// the stages' start.
func discardPrestage(c *Cmd) {
	if es := stagestart.Take(); es != nil {
		discardEarly(es)
	}
	defer earlyDiscards.Wait()
	if ps := c.pre; ps != nil {
		c.pre = nil
		<-ps.done
		if ps.err == nil {
			ps.discard()
		}
	}
	prestaged.mu.Lock()
	ps := prestaged.ps
	prestaged.ps = nil
	prestaged.mu.Unlock()
	if ps == nil {
		return
	}
	<-ps.done
	if ps.err == nil {
		ps.discard()
	}
}

// stageSysProcAttr is how the stage is cloned: into new user, mount, PID
// and IPC namespaces, CAP_SYS_ADMIN and CAP_NET_ADMIN kept across its
// execve as ambient capabilities (they count only in that user
// namespace), in a new session; sharing this process's memory and
// suspending the forking thread until the stage's execve
// (CLONE_VM|CLONE_VFORK, which os/exec uses for every child without a
// user namespace), so that neither landjail's page tables are copied nor
// its pages turn copy-on-write while it plans the run (≈1.2 ms of its
// CPU per run here: BENCHMARKS.md, round 4 of issue 25). The stage then
// maps the caller's uid and gid to themselves itself (setgroups denied:
// stageMarker, nsinit), which os/exec, suspended, cannot do for it.
func stageSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setsid:      true,
		Cloneflags:  nsview.UserNSFlags | unix.CLONE_VM | unix.CLONE_VFORK,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN},
	}
}

// stageMarker is nsinit.EnvMarker's value for a stage reading its spec
// on descriptor spec and writing its status on status (one socket when
// equal), making its network namespace ahead with net, and mapping this
// process's uid and gid.
func stageMarker(spec, status int, net bool) string {
	m := strconv.Itoa(spec) + "," + strconv.Itoa(status)
	if net {
		m += ",net"
	}
	return m + ",ids=" + strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
}

// usePrestage makes ps the stage of c: inner's settings that matter
// after the start (its Cancel, WaitDelay and context) move to ps.cmd,
// which replaces inner, and the spec goes with the target's descriptors
// (inner's stdio, c.ExtraFiles) and the ruleset. It returns the stage's
// os/exec.Cmd, the keep-alive pipe's write end and, for a lingering
// stage (DeferNamespaceEnd), its status channel (the socket).
func (c *Cmd) usePrestage(ps *prestage, ctx context.Context, inner *osexec.Cmd, p *prepared) (*osexec.Cmd, *os.File, *stageExit, error) {
	cmd := ps.cmd
	cmd.WaitDelay = inner.WaitDelay
	hook := inner.Cancel
	ps.cancelHook.Store(&hook)
	stop := context.AfterFunc(ctx, ps.cancel)
	files := append([]*os.File{inner.Stdin.(*os.File), inner.Stdout.(*os.File), inner.Stderr.(*os.File)}, c.ExtraFiles...)
	st, err := c.stageSpec(p, len(files))
	if err != nil {
		stop()
		go ps.discard()
		return nil, nil, nil, err
	}
	st.statusR = ps.sock
	lfd := st.closeAfterStart[0]
	defer lfd.Close()
	st.spec.Passed = true
	st.spec.View = nil // sent ahead (sendView)
	st.spec.LandlockFD = -1
	st.spec.ExeFD, st.spec.KeepFD = 4, 5
	err = sendSpec(ps.sock, &st.spec, append(files, lfd))
	if err == nil {
		err = st.readStatus(c, cmd, p)
	} else {
		err = fmt.Errorf("exec: user-namespace stage: sending the spec: %w", err)
	}
	if st.exit == nil {
		ps.sock.Close()
	}
	if err != nil {
		stop()
		ps.keepW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		ps.cancel()
		return nil, nil, nil, err
	}
	prestageTaken.Add(1)
	c.state.waitErr = ps.waitErr
	return cmd, ps.keepW, st.exit, nil
}

// sendSpec writes spec to the stage's socket with files passed along
// (SCM_RIGHTS on the first byte), then shuts the socket down for
// writing: the stage reads until end of file.
func sendSpec(sock *os.File, spec *nsinit.Spec, files []*os.File) error {
	b, err := spec.AppendBinary(nil)
	if err != nil {
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	rc, err := sock.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		var n int
		for {
			n, serr = unix.SendmsgN(int(fd), b, unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL)
			if serr != unix.EINTR {
				break
			}
		}
		if serr == nil {
			b = b[n:]
			for len(b) > 0 && serr == nil {
				n, serr = unix.SendmsgN(int(fd), b, nil, nil, unix.MSG_NOSIGNAL)
				if serr == unix.EINTR {
					serr = nil
					continue
				}
				b = b[n:]
			}
		}
		if serr == nil {
			serr = unix.Shutdown(int(fd), unix.SHUT_WR)
		}
		return true
	})
	runtime.KeepAlive(files)
	return errors.Join(err, serr)
}
