package nsview

// KeepProbeNamespace makes the namespace probe (Probe, when it has not
// run yet) keep the mount namespace it makes to test unshare(CLONE_NEWNS)
// instead of dropping it with its thread, and the next Enter join that
// namespace (setns(2) CLONE_NEWNS after unshare(CLONE_FS)) instead of
// unsharing a new one. The namespace is the same either way: a private
// copy (MS_REC|MS_PRIVATE) of the caller's mount namespace, owned by the
// caller's user namespace, in which no process runs (its only reference
// is a close-on-exec descriptor of this process) - except that it is
// the mount table of when the probe ran (or, in landjail run, of when
// its package initializer made the namespace: prenet.StartWithMount,
// which the probe then takes), not of when Enter runs: meant for a
// process that probes and enters within one command's start-up
// (landjail run), not for a long-lived server. It saves a mount
// namespace per run: its copy, and its teardown at the probe thread's
// exit, which waits for an expedited RCU grace period
// (synchronize_rcu_expedited in namespace_unlock) and interrupts every
// CPU for it. Only the first Enter after the probe joins it; later ones,
// and every Enter where the probe failed or had already run, unshare as
// without KeepProbeNamespace. With the mount namespace the probe's
// thread also makes a new IPC namespace, which that Enter joins instead
// of unsharing one (the same thing: new, empty, no process in it; its
// creation then overlaps the caller's start-up). Safe for concurrent
// use. Linux only (a no-op elsewhere).
func KeepProbeNamespace() { keepProbeNamespace() }
