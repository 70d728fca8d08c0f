package nsview

// PrepareNetwork starts making, on a throwaway locked thread of its own,
// the network namespace the next Enter of a NoNetwork view needs
// (unshare(CLONE_NEWNET), loopback up), so that its cost — about 0.6 ms
// of a 5 ms `landjail run` on a 2-vCPU VM, the largest single step of
// entering a view (BENCHMARKS.md) — overlaps the caller's other work.
// The first Enter with NoNetwork after it joins that namespace
// (setns(2) CLONE_NEWNET on the descriptor kept from the throwaway
// thread, waiting for it when it is not ready) instead of unsharing a new
// one; every later Enter makes its own, as without PrepareNetwork. The
// namespace is the same either way: new, empty but for "lo", up, owned by
// the caller's user namespace, and no other process is in it (its only
// reference is a close-on-exec descriptor of this process).
//
// Where namespaces are unavailable (not root, a seccomp profile, Linux
// without CLONE_NEWNET) the attempt fails silently and Enter unshares as
// before, reporting any error itself. Returns at once; only the first
// call does anything; safe for concurrent use. Linux only (a no-op
// elsewhere). The namespace is held by package internal/prenet, which
// cmd/landjail starts earlier still, from a package initializer
// (internal/prenet/early): this call then does nothing more.
func PrepareNetwork() { prepareNetwork() }
