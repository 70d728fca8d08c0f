// Package sysclone clones the user-namespace stage (internal/nsinit) of
// a non-root "landjail run" with package syscall alone, so that the
// package initializer that calls it (internal/stagestart/early) runs as
// soon as syscall's own initialization is done: about 0.7 ms of
// landjail's start-up earlier than an initializer that needs os/exec,
// whose turn comes after most of landjail's packages (the
// initialization order is by import path among the packages ready;
// path/filepath, an import of os/exec, sorts late). Package stagestart
// adopts the stage for exec (Take) as if os/exec had started it: the
// same executable, argv, environment, descriptors and clone flags
// (exec's tests compare them). Linux only; elsewhere Start does nothing.
package sysclone

// These are nsinit's EnvMarker and Argv0, nsview's UserNSFlags and
// unix.CAP_SYS_ADMIN and CAP_NET_ADMIN (exec's tests check that they are
// equal), written out: this package imports neither nsinit, nsview nor
// golang.org/x/sys/unix, whose initialization comes late.
const (
	EnvMarker = "LANDJAIL_NSINIT"
	Argv0     = "landjail-init"
)

// Stage is a stage Start cloned: running (Err nil once Done is closed),
// waiting on Sock for its view and spec.
type Stage struct {
	// Net: the stage makes a network namespace of its own (its marker's
	// "net").
	Net  bool
	Done chan struct{} // closed once the clone returned
	// Set before Done is closed:
	Err   error
	Pid   int // the stage, this process's child (not reaped by anyone else)
	PidFD int // a pidfd on Pid from the clone on (-1: none), close-on-exec; the taker closes it
	Sock  int // this process's end of the stage's socket (fd 3 there), close-on-exec
	KeepW int // the keep-alive pipe's write end (fd 5 there: its read end), close-on-exec
}

// Error is a failed step of the clone: Op names it ("open /dev/null",
// "socketpair", "pipe2", "fork/exec"), Err is the errno.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "stagestart: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
