package main

import (
	"errors"
	"fmt"
	"io/fs"
	osexec "os/exec"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/cmdcheck"
	"github.com/landjail/landjail/jail"
)

// describeStart says why the command could not be started, in a shell's
// words rather than Go's: "x: command not found (PATH searched: ...)"
// for `exec: "x": executable file not found in $PATH`, "cannot execute
// PATH: permission denied (HINT)" for "fork/exec PATH: permission
// denied", and the path check's refusal without its package name.
// searched is the command's PATH ("" when unknown). The exit code is
// exitCode's to choose (127, 126), from the wrapped error.
func describeStart(err error, searched string) string {
	var ee *osexec.Error
	if errors.As(err, &ee) && errors.Is(ee.Err, osexec.ErrNotFound) {
		if searched == "" {
			return fmt.Sprintf("%s: command not found (the command's PATH is empty)", ee.Name)
		}
		return fmt.Sprintf("%s: command not found (PATH searched: %s)", ee.Name, searched)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Op == "execve" || pe.Op == "fork/exec") {
		var errno unix.Errno
		if !errors.As(pe.Err, &errno) {
			return fmt.Sprintf("cannot execute %s: %v", pe.Path, pe.Err)
		}
		msg := fmt.Sprintf("cannot execute %s: %s", pe.Path, errno.Error())
		if hint := execHint(errno); hint != "" {
			msg += "; " + hint
		}
		return msg
	}
	var ce *cmdcheck.Error
	if errors.As(err, &ce) {
		where := fmt.Sprintf("argument %d %q", ce.Arg, ce.Token)
		if ce.Arg < 0 {
			where = fmt.Sprintf("working directory %q", ce.Token)
		}
		var why string
		switch {
		case errors.Is(ce.Err, cmdcheck.ErrUnverifiable):
			what := strings.TrimPrefix(ce.Err.Error(), cmdcheck.ErrUnverifiable.Error()+": ")
			why = "cannot be checked before the command runs (" + what + ")"
		case errors.Is(ce.Err, jail.ErrOutsideWorkspace):
			why = "is outside the workspace and every --ro/--rox/--rw root"
		case errors.Is(ce.Err, jail.ErrDenied):
			why = "is denied by the policy"
		case errors.Is(ce.Err, jail.ErrNotExecutable):
			why = "is not in a root the command may execute from (--rox, --rw)"
		default:
			why = "is refused: " + ce.Err.Error()
		}
		return fmt.Sprintf("refusing the command: %s %s. Without a usable Landlock, landjail checks the paths in the command's arguments before it runs (see landjail doctor)", where, why)
	}
	return err.Error()
}

// execHint is the likely cause of execve's errno, as a shell user would
// look for it.
func execHint(errno unix.Errno) string {
	switch errno {
	case unix.EACCES:
		return "check that it is executable (chmod +x), not on a noexec mount, and in the workspace or a --rox/--rw root (--print-rules lists them)"
	case unix.ENOENT:
		return "if the file exists, its #! interpreter does not"
	case unix.ENOEXEC:
		return "not a program for this machine, nor a script starting with #!"
	case unix.EISDIR:
		return "it is a directory"
	case unix.EPERM:
		return "refused by a security module or seccomp profile"
	}
	return ""
}

// envPath is the value of PATH in env ("" without one).
func envPath(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}
