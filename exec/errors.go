package exec

import (
	"errors"
	osexec "os/exec"
)

// Errors of Start besides the policy's (jail.ErrOutsideWorkspace, ...).
var (
	// ErrNoWorkspace: the Cmd has no Workspace.
	ErrNoWorkspace = errors.New("exec: Cmd has no Workspace")
	// ErrAlreadyStarted: Start was called twice.
	ErrAlreadyStarted = errors.New("exec: already started")
	// ErrNotFound: the command name was not found in the child's PATH
	// (errors.Is(err, osexec.ErrNotFound) also holds).
	ErrNotFound = osexec.ErrNotFound
)

// Errors of SelfTest (and of Start with Cmd.SelfTest).
var (
	// ErrNotEnforced: the kernel accepted the Landlock domain but a
	// confined thread or child could still read a file outside every
	// rule of the Ruleset. Seen on file systems where Landlock cannot
	// tie rules to inodes (for example 9P under WSL2). Children spawned
	// with this Ruleset would not be confined.
	ErrNotEnforced = errors.New("exec: self-test: Landlock does not enforce the ruleset here")

	// ErrSelfTestFailed: the self-test could not reach a verdict (no
	// probe location outside the policy could be created, an access the
	// policy allows was refused, or the probe child did not run). The
	// wrapped error says which.
	ErrSelfTestFailed = errors.New("exec: self-test failed")
)
