package openat_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

func raceOpens() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// TestRaceSwapDirForSymlink: an attacker exchanges the directory ws/d
// with a symlink to outside (renameat2 RENAME_EXCHANGE, in a loop) while
// the victim opens d/secret (and every fourth time creates d/created)
// through openat.Root, with both mechanisms. No open may yield the
// outside file and nothing may be created outside.
// TestRaceCanaryNaiveEscapes shows the same attack escapes a naive
// resolve-then-open.
func TestRaceSwapDirForSymlink(t *testing.T) {
	n := raceOpens()
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		r := attacktest.NewRaceEnv(t)
		root, err := openat.OpenRoot(r.Root)
		require.NoError(t, err)
		defer root.Close()
		res := r.Race(t, n, time.Minute, false, func(i int) (*os.File, error) {
			if i%4 == 3 {
				return root.OpenFile("d/created", os.O_CREATE|os.O_WRONLY, 0o644)
			}
			return root.Open("d/secret")
		})
		t.Logf("%+v", res)
		assert.Equal(t, n, res.Tries)
		assert.Zero(t, res.Escapes, "opened the outside file, first as %s", res.FirstEscape)
		assert.Positive(t, res.Opened, "the victim never opened anything: the race proves nothing")
		assert.Positive(t, res.Swaps, "the attacker never swapped")
	})
}

// TestRaceCanaryNaiveEscapes: the same attack against filepath.EvalSymlinks
// + containment check + os.Open escapes (skip, not failure, when the
// scheduler never lets it within the bound).
func TestRaceCanaryNaiveEscapes(t *testing.T) {
	r := attacktest.NewRaceEnv(t)
	res := r.Race(t, 2_000_000, 5*time.Second, true, func(int) (*os.File, error) {
		return attacktest.NaiveOpen(r.Root, "d/secret", os.O_RDONLY)
	})
	t.Logf("%+v", res)
	if res.Escapes == 0 {
		t.Skipf("the naive open did not escape in %d tries (%d opened, %d swaps): scheduling-dependent, the canary proves nothing this run", res.Tries, res.Opened, res.Swaps)
	}
	assert.Equal(t, r.Out+"/secret", res.FirstEscape)
}
