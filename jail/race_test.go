package jail_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
)

// newRaceWorkspace returns the opener of attacktest.RunSwapRace: a
// Workspace on root with opts.
func newRaceWorkspace(opts ...jail.Option) func(t *testing.T, root string) attacktest.FS {
	return func(t *testing.T, root string) attacktest.FS {
		w, err := jail.New(root, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { w.Close() })
		return w
	}
}

// TestRaceSwapDirForSymlink: attacktest.RunSwapRace through the
// Workspace, on the single-openat2 fast path and the Resolve-then-open
// path (a deny pattern forces it), with both mechanisms.
// TestRaceCanaryNaiveEscapes shows the same attack escapes a naive
// resolve-then-open.
func TestRaceSwapDirForSymlink(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		t.Run("fast-path", func(t *testing.T) { attacktest.RunSwapRace(t, newRaceWorkspace()) })
		t.Run("resolve-path", func(t *testing.T) { attacktest.RunSwapRace(t, newRaceWorkspace(jail.WithDeny("*.pem"))) })
	})
}

// TestRaceResolveStaysInside: under the same attack, whatever Resolve
// returns is inside the root (its answer may be stale, never outside).
func TestRaceResolveStaysInside(t *testing.T) {
	n := attacktest.RaceOpens()
	r := attacktest.NewRaceEnv(t)
	w, err := jail.New(r.Root)
	require.NoError(t, err)
	defer w.Close()
	stop := r.StartAttacker(t)
	ok, bad := 0, 0
	for range n {
		p, err := w.Resolve("d/secret")
		if err != nil {
			continue
		}
		ok++
		if p != r.Root+"/d/secret" || !strings.HasPrefix(p, r.Root+"/") {
			bad++
			t.Errorf("Resolve returned %q", p)
			if bad > 5 {
				break
			}
		}
	}
	swaps := stop()
	t.Logf("resolved %d/%d, swaps %d", ok, n, swaps)
	assert.Positive(t, ok)
	assert.Positive(t, swaps)
}

// TestRaceCanaryNaiveEscapes: attacktest.RunCanary against
// "evalsymlinks", the seeds' filepath.EvalSymlinks + containment check +
// os.Open, and "resolve", Workspace.Resolve + os.Open (why the
// Workspace's own operations must re-open under openat2).
func TestRaceCanaryNaiveEscapes(t *testing.T) {
	t.Run("evalsymlinks", func(t *testing.T) {
		attacktest.RunCanary(t, func(r *attacktest.RaceEnv) func(int) (*os.File, error) {
			return func(int) (*os.File, error) { return attacktest.NaiveOpen(r.Root, "d/secret", os.O_RDONLY) }
		})
	})
	t.Run("resolve", func(t *testing.T) {
		attacktest.RunCanary(t, func(r *attacktest.RaceEnv) func(int) (*os.File, error) {
			w, err := jail.New(r.Root)
			require.NoError(t, err)
			t.Cleanup(func() { w.Close() })
			return func(int) (*os.File, error) {
				p, err := w.Resolve("d/secret")
				if err != nil {
					return nil, err
				}
				return os.Open(p)
			}
		})
	})
}
