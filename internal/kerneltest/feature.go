package kerneltest

import (
	"fmt"
	"testing"
)

// RequireFeature skips the test when err, the result of a package's own
// probe for feature (for example nsview.Probe for "mount namespaces"), is
// not nil, saying why. With LANDJAIL_REQUIRE_KERNEL=1 it fails the test
// instead. For features the emulation never blocks (only openat2 and
// Landlock can be blocked), so every matrix mode runs them.
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
