package openat_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

// TestRaceSwapDirForSymlink: attacktest.RunSwapRace through openat.Root,
// with both mechanisms. TestRaceCanaryNaiveEscapes shows the same attack
// escapes a naive resolve-then-open.
func TestRaceSwapDirForSymlink(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		attacktest.RunSwapRace(t, func(t *testing.T, root string) attacktest.FS {
			r, err := openat.OpenRoot(root)
			require.NoError(t, err)
			t.Cleanup(func() { r.Close() })
			return r
		})
	})
}

// TestRaceCanaryNaiveEscapes: attacktest.RunCanary against
// filepath.EvalSymlinks + containment check + os.Open.
func TestRaceCanaryNaiveEscapes(t *testing.T) {
	attacktest.RunCanary(t, func(r *attacktest.RaceEnv) func(int) (*os.File, error) {
		return func(int) (*os.File, error) { return attacktest.NaiveOpen(r.Root, "d/secret", os.O_RDONLY) }
	})
}
