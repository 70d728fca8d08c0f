// Package prenet makes, ahead of time and on a thread of its own, the
// network namespace the next private-network namespace view joins
// (nsview.PrepareNetwork, which is Start): new, empty but for "lo", up,
// owned by the caller's user namespace, with no process in it (its only
// reference is a close-on-exec descriptor of this process). Making one
// costs about 0.5 ms of kernel time on a 2-vCPU VM (copy_net_ns: every
// pernet subsystem's init), the largest single step of entering a view;
// made early, it overlaps the caller's own start-up.
//
// The package has no dependency but the runtime and syscall, so that
// its sub-package early can start it from a package initializer, while
// the rest of a program's packages initialize (BENCHMARKS.md, round 4).
// It is a leaf for that reason: nsview holds the documented API.
package prenet

// Start starts making the namespace, on a locked thread of its own that
// dies afterwards (never the main thread). Only the first call does
// anything; it returns at once; safe for concurrent use. Where
// namespaces are unavailable (no CAP_SYS_ADMIN, a seccomp profile, a
// kernel without CLONE_NEWNET) the attempt fails silently and Take
// returns -1. Linux only (a no-op elsewhere).
func Start() { start() }

// Take returns the descriptor of the namespace Start made, waiting while
// it is being made, or -1 when there is none: Start was not called (from
// now on it does nothing), failed, or another Take had it. The caller
// owns and closes the descriptor. Safe for concurrent use.
func Take() int { return take() }

// Pending reports, without waiting, whether Start (or StartWithMount)
// began making a namespace that no Take has had yet: it may still be
// being made, or have failed (Take then returns -1). Safe for
// concurrent use.
func Pending() bool { return pending() }

// Reset closes a namespace nobody took and puts the package back to
// none begun, so that a later Start makes one again. For tests; not safe
// while a Start is under way or with StartWithMount's namespaces made.
func Reset() { reset() }

// StartWithMount is Start that also makes, first and on the same
// thread, the namespaces nsview.KeepProbeNamespace has the probe keep
// for the next Enter: a mount namespace (unshare(2) CLONE_FS|CLONE_NEWNS,
// then mount(/, MS_REC|MS_PRIVATE): a private copy of the caller's, with
// the mount table of that moment) and an IPC namespace (new, empty).
// The probe then takes them (TakeMount) instead of making its own. For a
// program that probes and enters within one command's start-up
// (landjail run), as KeepProbeNamespace. Only the first Start or
// StartWithMount does anything.
func StartWithMount() { startWithMount() }

// TakeMount returns the mount and IPC namespace descriptors
// StartWithMount made (waiting while they are being made), each -1 when
// there is none: StartWithMount was not called (TakeMount then returns at
// once and changes nothing: a later Start still works), failed (the probe
// then tries for itself and reports why), or TakeMount ran before. ipc
// alone may be -1. The caller owns and closes the descriptors.
func TakeMount() (mnt, ipc int) { return takeMount() }

// Peek reports the inode of the namespace Start made (what
// /proc/thread-self/ns/net of a thread in it shows) without taking it,
// waiting while it is being made; false when there is none. Call it
// after Start, StartWithMount or Take (before, it waits for them). For
// tests.
func Peek() (uint64, bool) { return peek() }

// PeekMount is Peek for the mount namespace StartWithMount made (waiting
// for it); false when there is none. For tests.
func PeekMount() (uint64, bool) { return peekMount() }
