package jail_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
)

// The harness (attacker, sentinels, inotify watch, snapshots) is
// attacktest.RunOpsRace, shared with the other package's race_ops_test.go.

// TestRaceTwoPathOps runs every two-path and parent+leaf operation of
// jail.Workspace under the parent-swap attack, with both mechanisms, for
// a plain policy and one with deny patterns (RemoveAll and Rename then
// walk the subtree first).
func TestRaceTwoPathOps(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for _, v := range []struct {
			name string
			opts []jail.Option
		}{
			{"plain", nil},
			{"deny", []jail.Option{jail.WithDeny("*.pem", "secrets/")}},
		} {
			t.Run(v.name, func(t *testing.T) {
				for _, op := range attacktest.RaceOps {
					t.Run(op.Name(), func(t *testing.T) {
						attacktest.AssertContained(t, attacktest.RunOpsRace(t, op, true, func(t *testing.T, root string) attacktest.OpsFS {
							w, err := jail.New(root, v.opts...)
							require.NoError(t, err)
							t.Cleanup(func() { w.Close() })
							return w
						}))
					})
				}
			})
		}
	})
}
