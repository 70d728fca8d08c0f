// Package kernel probes the running kernel for the features landjail
// builds on: Landlock and its ABI version, openat2(2), the seccomp mode and
// the no_new_privs bit of the calling thread.
//
// Probe discipline (after filepath-securejoin's pathrs-lite): a fact that
// cannot change during the life of the process (the kernel release, the
// Landlock ABI once seccomp has had its say at start-up) is probed once
// with sync.OnceValue. "openat2 works" is not such a fact, because a
// seccomp filter installed later in the process (by this program, a
// library, or an embedding runtime) can take it away; Openat2Supported
// therefore probes on every call, and callers keep a one-way atomic flag
// (once false, never true again) rather than caching a positive answer.
//
// ENOSYS (the kernel lacks the syscall) and EPERM (a container seccomp
// profile refuses it, as Docker's and Podman's default profiles do for
// syscalls they do not know) both mean "unsupported".
//
// The minimum kernel versions of every feature live in the one kernel table
// of the repository (README.md); they are not repeated here.
package kernel
