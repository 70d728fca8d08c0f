package attacktest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/openat"
)

// ForEachMechanism runs f as subtest "openat2" (skipped when the kernel
// lacks openat2 or the emulation matrix blocks it; a failure with
// LANDJAIL_REQUIRE_KERNEL=1 only when it is genuinely missing) and as
// subtest "fallback" with the O_NOFOLLOW walk forced
// (openat.SetForceFallback). The switch is process-wide: callers must not
// be parallel.
func ForEachMechanism(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		kerneltest.RequireOpenat2(t)
		if m := openat.Mechanism(); m != openat.MechanismOpenat2 {
			t.Fatalf("openat2 works but the mechanism is %s", m)
		}
		f(t)
	})
	t.Run("fallback", func(t *testing.T) {
		restore := openat.SetForceFallback(true)
		defer restore()
		require.Equal(t, openat.MechanismWalk, openat.Mechanism())
		f(t)
	})
}
