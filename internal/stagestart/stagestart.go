// Package stagestart clones the user-namespace stage (internal/nsinit)
// of a non-root "landjail run" from a package initializer, before most
// of landjail's packages are initialized and before main (package
// early, imported by cmd/landjail only): the stage's own Go start (about
// 1.3 ms from its execve to its code here) is the longer of the two
// paths to the command of such a run, landjail's planning the other
// (BENCHMARKS.md, round 5 of issue 25). The clone is package sysclone's
// (package syscall alone, so that the initializer runs early: round 8).
// Package exec adopts the stage (PrestartUserStage) as if it had started
// it itself: the same executable (/proc/self/exe, opened there), argv,
// environment, descriptors and clone flags (exec's tests compare them);
// its os/exec.Cmd is built around the process, and Stop, Hook and
// WaitErr do what os/exec's context watch would. Linux only; elsewhere
// Take returns nil.
package stagestart

import (
	"context"
	"os"
	osexec "os/exec"
	"sync"
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
	Err error
	// Cmd is the stage's, built around the process os/exec did not
	// start (Process is set; Start must not be called): its Wait reaps
	// the stage; its context's work is Stop's.
	Cmd   *osexec.Cmd
	Sock  *os.File           // the parent's end of the stage's socket (fd 3 there)
	KeepW *os.File           // the keep-alive pipe's write end (fd 5 there: read end)
	Ctx   context.Context    // done once Stop was called
	Stop  context.CancelFunc // cancels Ctx; before the stage was waited for, as os/exec's watch: Hook, then SIGKILL Cmd.WaitDelay later
	// Hook is Cmd.Cancel's body, set by whoever takes the stage (until
	// then Cancel does nothing).
	Hook atomic.Pointer[func() error]

	once      sync.Once  // Stop's watch (canceled)
	mu        sync.Mutex // guards cancelErr
	cancelErr error      // see WaitErr
}

// Take returns the stage StartEarly started (nil: none), once: later
// calls return nil. It does not wait for the start (Done).
func Take() *Stage { return take() }

// WaitEarly waits until a start StartEarly began has returned (the clone
// is done): a caller about to change the whole process's resource
// limits for a spawn (exec's Rlimits) calls it first, so that the stage
// never starts under them.
func WaitEarly() { waitEarly() }
