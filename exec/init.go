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

// PrestartUserStage starts, ahead of time, the user-namespace stage (see
// Init) that the next Start of a non-root caller whose Ruleset has the
// namespace view (landlock.Ruleset.UserNamespace) will need, so that the
// stage's cost (a start of this program, ≈2 ms here: BENCHMARKS.md)
// overlaps the caller's own work between this call and that Start.
// privateNetwork says whether the view will likely have a network
// namespace of its own (landlock.Report.PrivateNetwork): the stage then
// starts making it at once; a wrong guess costs time, never behaviour.
// The stage is the same process Start would clone (same namespaces, uid
// and gid maps, capabilities, binary); it waits, over a socket only this
// process holds, for the view, which the next CommandContext whose
// Ruleset has the user-namespace view sends it (the stage builds it
// meanwhile: that Cmd has reserved the stage), then for the spec, the
// target's descriptors and its ruleset, which Start sends. One stage at a
// time. Start discards it (kills and reaps it) and clones one as without
// this call when the Cmd needs what must hold from the stage's clone on
// (Rlimits, a Cgroup with a group, stdio that is not an *os.File) or when
// its Ruleset's view is no longer the one sent; Exec discards it before
// replacing the process; a reserved stage whose Cmd is never started
// waits until this process exits. A stage never taken exits when this process does (end of
// file on its socket). The stage's mount namespace is a copy of the
// caller's at this call, not at Start. It does nothing for root, when
// Init was not called, or when a stage is already waiting. Returns at
// once (the clone runs on another goroutine); safe for concurrent use.
// Linux only; elsewhere it does nothing.
func PrestartUserStage(privateNetwork bool) { prestartUserStage(privateNetwork) }
