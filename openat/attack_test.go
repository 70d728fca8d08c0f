package openat_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

const attacksFile = "../testdata/attacks.toml"

// The corpus's error words that name openat's sentinels. The jail words
// never appear in an openat expectation; Load would accept them, and
// ExpectErr fails loudly if one does.
var _ = attacktest.Define("escapes", openat.ErrEscapes) &&
	attacktest.Define("symlink", openat.ErrSymlink)

// TestAttacks runs every case of testdata/attacks.toml through
// openat.Root (opened on $ROOT, with ResolveNoXDev when the case's policy
// asks for no_xdev) with the raw input, under both mechanisms.
func TestAttacks(t *testing.T) {
	cases := attacktest.Load(t, attacksFile)
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			t.Run(c.Name, func(t *testing.T) {
				if _, ok := c.Expect(attacktest.LayerOpenat); !ok {
					t.Skipf("no openat expectation: %s", c.Skip[attacktest.LayerOpenat])
				}
				e := attacktest.Build(t, c)
				var flags openat.Flags
				if c.Policy.NoXDev {
					flags |= openat.ResolveNoXDev
				}
				r, err := openat.OpenRootFlags(e.Root, flags)
				require.NoError(t, err)
				t.Cleanup(func() { r.Close() })
				attacktest.RunOp(t, r, e, c, attacktest.LayerOpenat)
			})
		}
	})
}
