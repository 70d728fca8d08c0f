package exec

import "github.com/landjail/landjail/internal/nsinit"

// Init registers the user-namespace stage for this program: call it first
// thing in main, before anything starts children. A caller without
// CAP_SYS_ADMIN can then still get the namespace view (masks, read-only
// outside writable roots, private /tmp, /dev/shm and network, its own PID
// namespace with a fresh /proc): each child is started through a
// re-execution of this program (internal/nsinit), cloned into new user,
// mount and PID namespaces, which builds the view, confines itself and
// forks the child (see landlock.Ruleset.UserNamespace). In that
// re-executed process Init runs the stage and never returns; in every
// other process it returns at once, having opened /proc/self/exe, so the
// binary re-executed later is this one even if the file on disk is
// replaced. Without Init a non-root caller gets Landlock carve-outs
// (Report().LayerReason says why). Each spawn through the stage costs one
// more start of this program (BENCHMARKS.md). Root callers never use the
// stage. Linux only; elsewhere it does nothing.
func Init() { nsinit.Main() }
