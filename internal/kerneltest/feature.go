package kerneltest

import (
	"fmt"
	"testing"
)

// RequireFeature skips the test when err, the result of a package's own
// probe for feature, is not nil, saying why. With LANDJAIL_REQUIRE_KERNEL=1
// it fails the test instead. It is for features the emulation never
// blocks, so every matrix mode runs them; namespaces, which
// LANDJAIL_EMULATE=ns=... blocks, go through ExpectNamespaces or
// RequireNamespaces.
func RequireFeature(t testing.TB, feature string, err error) {
	t.Helper()
	checkMain(t)
	if err == nil {
		return
	}
	why := fmt.Sprintf("%s unavailable: %v", feature, err)
	if requireKernel() {
		t.Fatalf("%s and %s=1", why, EnvRequireKernel)
	}
	t.Skip(why)
}
