package kerneltest

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// ExpectNamespaces tells a test which row of its per-mode table applies:
// true when the namespace layer is expected in force, false when the
// emulation takes namespaces away on purpose (LANDJAIL_EMULATE=ns=EPERM or
// ns=ENOSYS, as under Docker's default seccomp profile), so the test must
// assert the fallback (Landlock carve-outs, a stated reason, --strict
// refusing). probeErr is the package's own probe (nsview.Probe()).
//
// It fails the test when the two disagree in a way that would make the
// test prove nothing: the emulation blocks namespaces but the probe
// succeeded (the filter did not bite), or the probe failed with another
// errno than the emulated one. When namespaces are missing by accident
// (not root, a real container profile), it skips, or fails with
// LANDJAIL_REQUIRE_KERNEL=1, like Missing.
func ExpectNamespaces(t testing.TB, probeErr error) bool {
	t.Helper()
	checkMain(t)
	errno, blocked := Blocked(FeatureNamespaces)
	switch {
	case probeErr == nil && blocked:
		t.Fatalf("kerneltest: %s=%s blocks namespaces with %s, yet the probe succeeded: the emulation does not bite", EnvEmulate, Emulated(), unix.ErrnoName(errno))
	case probeErr == nil:
		return true
	case blocked && !errors.Is(probeErr, errno):
		t.Fatalf("kerneltest: %s=%s blocks namespaces with %s, but the probe failed otherwise: %v", EnvEmulate, Emulated(), unix.ErrnoName(errno), probeErr)
	case blocked:
		return false
	}
	Missing(t, "mount namespaces unavailable: %v", probeErr)
	return false // not reached: Missing skips or fails
}

// RequireNamespaces is for a test that can only run where namespaces
// exist (a unit test that builds a namespace view): it returns when
// probeErr is nil; it skips, saying so, when the emulation blocks
// namespaces on purpose, since the test cannot exist in that mode (what
// callers do instead is tested by their own fallback rows); otherwise it
// skips or fails as ExpectNamespaces does.
func RequireNamespaces(t testing.TB, probeErr error) {
	t.Helper()
	if !ExpectNamespaces(t, probeErr) {
		errno, _ := Blocked(FeatureNamespaces)
		t.Skipf("namespaces blocked with %s by %s=%s, on purpose: %v", unix.ErrnoName(errno), EnvEmulate, Emulated(), probeErr)
	}
}

// RequireMount is for a test whose setup needs mount(2) in the test
// process (a bind mount an attack relies on), err being what mount
// returned. It returns when err is nil. When the emulation blocks mounts
// on purpose and err is its errno, it skips: the attack needs a mount,
// which that mode takes from the attacker as well, so the case cannot
// exist there. Otherwise (not root, a real container profile) it skips,
// or fails with LANDJAIL_REQUIRE_KERNEL=1, naming what, as Missing.
func RequireMount(t testing.TB, err error, what string) {
	t.Helper()
	checkMain(t)
	if err == nil {
		return
	}
	if errno, ok := Blocked(FeatureNamespaces); ok && errors.Is(err, errno) {
		t.Skipf("%s: mount blocked with %s by %s=%s on purpose; an attacker there cannot mount either", what, unix.ErrnoName(errno), EnvEmulate, Emulated())
	}
	Missing(t, "%s needs CAP_SYS_ADMIN in the initial mount namespace: %v", what, err)
}
