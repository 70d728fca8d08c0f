package exec

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// pidNamespace reports whether Start runs c's child under the init stage
// in a PID namespace of its own, and why not.
func (c *Cmd) pidNamespace() (bool, string) {
	if c.NoPIDNamespace {
		return false, "turned off (Cmd.NoPIDNamespace / --no-pid-namespace)"
	}
	return pidNamespace(c.Ruleset, c.Seccomp)
}

// PIDNamespace reports whether a child started with rs and filter (and
// NoPIDNamespace unset) runs as the child of a re-executed init, PID 1 of
// a PID namespace of its own with a fresh procfs (see
// Cmd.NoPIDNamespace), and when not, why: the program did not register
// the init stage (internal/nsinit.Main), rs has no namespace view (not
// root, or namespaces unavailable: its Report().LayerReason says why; the
// unprivileged user-namespace path is not built), or filter is Supervised
// (its listen supervisor lives on the spawner thread; that combination
// keeps the spawner path without a PID namespace). Needs CLONE_NEWPID
// (Linux 2.6.24) and a root caller.
func PIDNamespace(rs *landlock.Ruleset, filter *seccomp.Filter) (bool, string) {
	return pidNamespace(rs, filter)
}

func pidNamespace(rs *landlock.Ruleset, filter *seccomp.Filter) (bool, string) {
	switch {
	case !nsinit.Registered():
		return false, "the program did not register the init stage (exec.Init)"
	case !rs.Enforced():
		return false, "no Landlock domain"
	case filter.Supervised():
		return false, "the seccomp filter is supervised (listen): its supervisor stays on the spawner thread"
	}
	if _, ok := rs.View(); !ok {
		why := "no namespace view"
		if r := rs.Report(); r != nil && r.LayerReason != "" {
			why += ": " + r.LayerReason
		}
		return false, why
	}
	return true, ""
}

// initStage is the parent's side of one init stage: the pipes and the
// Landlock descriptor handed to it.
type initStage struct {
	specW, statusR  *os.File
	closeAfterStart []*os.File
	spec            nsinit.Spec
}

// initStage rewrites inner (built for the target, p) to start the init
// stage instead: /proc/self/fd/N of the binary nsinit.Main opened, argv
// {nsinit.Argv0}, environment {EnvMarker=SPEC,STATUS}, clone flags
// CLONE_NEWPID|CLONE_NEWNS, in a new session; stdio and ExtraFiles as
// the target's (fds 0..2+len), then the spec pipe, the status pipe, a
// duplicate of the Landlock ruleset descriptor and the binary.
func (c *Cmd) initStage(inner *osexec.Cmd, p *prepared) (*initStage, error) {
	exe := nsinit.Exe()
	lfd, flags, err := c.Ruleset.DupFD()
	if err != nil {
		return nil, err
	}
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
	n := 3 + len(c.ExtraFiles)
	ini := &initStage{
		specW:           specW,
		statusR:         statusR,
		closeAfterStart: []*os.File{specR, statusW, lfd},
		spec: nsinit.Spec{
			Path: p.path, Argv: p.argv, Env: p.env, Dir: p.dir,
			Setctty: c.Setctty, Ctty: c.Ctty,
			NFiles:        n,
			KeepCaps:      c.KeepCaps,
			LandlockFD:    n + 2,
			LandlockFlags: flags,
			ExeFD:         n + 3,
			Seccomp:       nsinit.EncodeProgram(c.Seccomp.Program()),
		},
	}
	if cr := c.Credential; cr != nil {
		ini.spec.HasCred, ini.spec.UID, ini.spec.GID = true, cr.Uid, cr.Gid
		ini.spec.Groups, ini.spec.NoSetGroups = cr.Groups, cr.NoSetGroups
	}
	// The child's fds from 3 are the dup2'd ExtraFiles: the binary is
	// passed as one of them (n+3) so no dup2 can replace it before execve.
	inner.Path = "/proc/self/fd/" + strconv.Itoa(n+3)
	inner.Args = []string{nsinit.Argv0}
	inner.Env = []string{nsinit.EnvMarker + "=" + strconv.Itoa(n) + "," + strconv.Itoa(n+1)}
	inner.Dir = ""
	inner.ExtraFiles = append(append([]*os.File(nil), c.ExtraFiles...), specR, statusW, lfd, exe)
	inner.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS}
	return ini, nil
}

// finish completes the init stage after inner.Start returned startErr:
// it closes the parent's copies of the stage's descriptors, sends the
// spec and waits for the status. An init that failed before the target
// ran is waited for, and its error returned as os.StartProcess would
// (*fs.PathError "fork/exec" for the target's execve).
func (ini *initStage) finish(startErr error, inner *osexec.Cmd, p *prepared) error {
	for _, f := range ini.closeAfterStart {
		f.Close()
	}
	defer ini.statusR.Close()
	if startErr != nil {
		ini.specW.Close()
		return fmt.Errorf("exec: PID namespace init: %w", startErr)
	}
	b, err := json.Marshal(&ini.spec)
	if err == nil {
		_, err = ini.specW.Write(b)
	}
	ini.specW.Close()
	var st nsinit.Status
	if err == nil {
		var out []byte
		out, err = io.ReadAll(ini.statusR)
		if err == nil {
			err = json.Unmarshal(out, &st)
			if err != nil {
				err = fmt.Errorf("exec: PID namespace init died before the target ran (status %q): %w", out, unix.EIO)
			}
		}
	}
	if err == nil && st.Errno == 0 {
		return nil
	}
	inner.Process.Kill()
	inner.Wait()
	if err != nil {
		return err
	}
	if st.Op == "fork/exec" {
		return &fs.PathError{Op: "fork/exec", Path: p.path, Err: syscall.Errno(st.Errno)}
	}
	return fmt.Errorf("exec: PID namespace init: %s: %s: %w", st.Op, st.Msg, syscall.Errno(st.Errno))
}
