package attacktest

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// RaceOpens is the number of victim opens per race run (at least 100,000,
// so a 1-in-10,000 window is hit; 10,000 with -short).
func RaceOpens() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// RunSwapRace is the body of every layer's TestRaceSwapDirForSymlink: a
// fresh RaceEnv, the target layer opened on its root by open, and
// RaceOpens victim calls through it, opening d/secret (and, every fourth
// call, creating d/created) while the attacker exchanges d with a symlink
// to outside. No call may yield the outside file (the check Race makes
// also catches a create outside), the victim must have opened something
// and the attacker swapped, or the race proves nothing.
func RunSwapRace(t *testing.T, open func(t *testing.T, root string) FS) {
	t.Helper()
	n := RaceOpens()
	r := NewRaceEnv(t)
	target := open(t, r.Root)
	res := r.Race(t, n, time.Minute, false, func(i int) (*os.File, error) {
		if i%4 == 3 {
			return target.OpenFile("d/created", os.O_CREATE|os.O_WRONLY, 0o644)
		}
		return target.Open("d/secret")
	})
	t.Logf("%+v", res)
	assert.Equal(t, n, res.Tries)
	assert.Zero(t, res.Escapes, "opened the outside file, first as %s", res.FirstEscape)
	assert.Positive(t, res.Opened, "the victim never opened anything: the race proves nothing")
	assert.Positive(t, res.Swaps, "the attacker never swapped")
}

// RunCanary runs the attack of RunSwapRace against a naive victim (built
// by victim on the race env) and expects it to reach the outside file, so
// the race is known to bite. Whether the attacker wins within the bound
// (2,000,000 tries or 5 seconds) depends on scheduling: no escape skips
// the test, it does not fail it.
func RunCanary(t *testing.T, victim func(r *RaceEnv) func(i int) (*os.File, error)) {
	t.Helper()
	r := NewRaceEnv(t)
	res := r.Race(t, 2_000_000, 5*time.Second, true, victim(r))
	t.Logf("%+v", res)
	if res.Escapes == 0 {
		t.Skipf("no escape in %d tries (%d opened, %d swaps): scheduling-dependent, the canary proves nothing this run", res.Tries, res.Opened, res.Swaps)
	}
	assert.Equal(t, r.Out+"/secret", res.FirstEscape)
}
