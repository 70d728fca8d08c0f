package main

import (
	"errors"
	"fmt"
	"io/fs"
	osexec "os/exec"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/cmdcheck"
	"github.com/landjail/landjail/jail"
)

// Exit codes of landjail, as documented in every command's help. They follow
// the convention of env(1), chroot(1) and docker run.
const (
	exitOK = 0
	// exitRefused: resolve refused at least one path.
	exitRefused = 1
	// exitUsage: landjail's own error (bad flag, bad config, strict
	// refusal, a policy root that does not exist, a confinement failure).
	exitUsage = 125
	// exitCannotExec: the command was found but cannot be executed
	// (permission, not an executable, refused by Landlock or by the
	// path-check fallback).
	exitCannotExec = 126
	// exitNotFound: the command was not found.
	exitNotFound = 127
)

// exitHelp is the exit-code section every command's help ends with.
const exitHelp = `EXIT STATUS:
   the command's own status, or 128+N when signal N killed it
   125  landjail's own error: bad flag, bad config, strict refusal
   126  command found but not executable, or refused by the path check
   127  command not found`

// exitStatus is an error that carries an exit code and prints nothing:
// the child's status, or resolve's "some path was refused".
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// startError marks an error from starting the command (lookup, the
// path-check fallback, execve), which maps to 126 or 127 rather than 125.
// searched is the command's PATH, for the "command not found" message.
// Error says it as a shell would (see describeStart), never in Go's words.
type startError struct {
	err      error
	searched string
}

func (e *startError) Error() string { return describeStart(e.err, e.searched) }
func (e *startError) Unwrap() error { return e.err }

// exitCode is the one place that maps an error from a command's Action to
// the process exit code. silent reports that nothing should be printed
// (the error only carries a status).
func exitCode(err error) (code int, silent bool) {
	if err == nil {
		return exitOK, true
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st), true
	}
	var se *startError
	if errors.As(err, &se) {
		var pe *fs.PathError
		execErr := errors.As(err, &pe) && (pe.Op == "execve" || pe.Op == "fork/exec")
		switch {
		case errors.Is(err, osexec.ErrNotFound), execErr && errors.Is(err, fs.ErrNotExist):
			return exitNotFound, false
		case execErr && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOEXEC) ||
			errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM)),
			errors.Is(err, jail.ErrOutsideWorkspace), errors.Is(err, jail.ErrDenied),
			errors.Is(err, jail.ErrNotExecutable), errors.Is(err, jail.ErrReadOnly),
			errors.Is(err, cmdcheck.ErrUnverifiable):
			return exitCannotExec, false
		}
		var ce *cmdcheck.Error
		if errors.As(err, &ce) {
			return exitCannotExec, false
		}
		return exitUsage, false
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode(), ec.Error() == ""
	}
	return exitUsage, false
}
