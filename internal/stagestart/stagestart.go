// Package stagestart clones the user-namespace stage (internal/nsinit)
// of a non-root "landjail run" from a package initializer, before most
// of landjail's packages are initialized and before main (package
// early, imported by cmd/landjail only): the stage's own Go start (about
// 1.3 ms from its execve to its code here) is the longer of the two
// paths to the command of such a run, landjail's planning the other
// (BENCHMARKS.md, round 5 of issue 25). Package exec adopts the stage
// (PrestartUserStage) as if it had started it itself: the same
// executable (/proc/self/exe, opened here), argv, environment,
// descriptors and clone flags (exec's tests compare them). Linux only;
// elsewhere Take returns nil.
package stagestart

import (
	"context"
	"os"
	osexec "os/exec"
	"sync/atomic"
)

// Stage is a stage StartEarly cloned: running (Err nil once Done is
// closed), waiting on Sock for its view and spec.
type Stage struct {
	// Net: the stage makes a network namespace of its own (its marker's
	// "net").
	Net  bool
	Done chan struct{} // closed once the start below returned
	// Set before Done is closed:
	Err   error
	Cmd   *osexec.Cmd
	Sock  *os.File           // the parent's end of the stage's socket (fd 3 there)
	KeepW *os.File           // the keep-alive pipe's write end (fd 5 there: read end)
	Ctx   context.Context    // Cmd's context
	Stop  context.CancelFunc // cancels Ctx
	// Hook is Cmd.Cancel's body, set by whoever takes the stage (until
	// then Cancel does nothing).
	Hook atomic.Pointer[func() error]
}

// Take returns the stage StartEarly started (nil: none), once: later
// calls return nil. It does not wait for the start (Done).
func Take() *Stage { return take() }

// WaitEarly waits until a start StartEarly began has returned (the clone
// is done): a caller about to change the whole process's resource
// limits for a spawn (exec's Rlimits) calls it first, so that the stage
// never starts under them.
func WaitEarly() { waitEarly() }
