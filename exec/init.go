package exec

import "github.com/landjail/landjail/internal/nsinit"

// Init registers the PID-namespace init stage for this program (see the
// package documentation and Cmd.NoPIDNamespace): call it first thing in
// main, before anything starts children. In the process package exec
// re-executes as a child's init (PID 1 of its PID and mount namespace) it
// runs that stage and never returns; in every other process it returns at
// once, having opened /proc/self/exe, so the binary re-executed later is
// this one even if the file on disk is replaced. Without Init, children
// stay in the caller's PID namespace (PIDNamespace says why). Each spawn
// through the stage costs one more start of this program (about 2 ms for
// a Go binary; BENCHMARKS.md). Linux only; elsewhere it does nothing.
func Init() { nsinit.Main() }
