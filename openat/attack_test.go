package openat_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

const attacksFile = "../testdata/attacks.toml"

// TestAttacks runs every case of testdata/attacks.toml through
// openat.Root (opened on $ROOT, with ResolveNoXDev when the case's policy
// asks for no_xdev) with the raw input, under both mechanisms.
func TestAttacks(t *testing.T) {
	cases := attacktest.Load(t, attacksFile)
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			t.Run(c.Name, func(t *testing.T) {
				attacktest.RunCorpusOp(t, c, attacktest.LayerOpenat, func(t *testing.T, e *attacktest.Env) attacktest.FS {
					var flags openat.Flags
					if c.Policy.NoXDev {
						flags |= openat.ResolveNoXDev
					}
					r, err := openat.OpenRootFlags(e.Root, flags)
					require.NoError(t, err)
					t.Cleanup(func() { r.Close() })
					return r
				})
			})
		}
	})
}
