package openat_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

// TestOSRootOracle runs Go's os.Root case table
// (attacktest.OSRootCasesFile) through os.Root itself (the control: the
// table still holds on this Go version, the way os/root_test.go checks
// it) and through openat.Root under both mechanisms, comparing each with
// the outcome recorded in cases.json.
func TestOSRootOracle(t *testing.T) {
	cases := attacktest.LoadOSRootCases(t)
	t.Run("os.Root", func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			for _, op := range attacktest.OSRootOps {
				t.Run(c.Name+"/"+op, func(t *testing.T) {
					root, target := attacktest.PrepareOSRootOp(t, c, op)
					r, err := os.OpenRoot(root)
					require.NoError(t, err)
					defer r.Close()
					f, err := attacktest.DoOSRootOp(t, r, op, c.Open)
					if c.WantError {
						if f != nil {
							f.Close()
						}
						assert.Error(t, err, "os.Root %s(%q)", op, c.Open)
						return
					}
					attacktest.CheckOSRootResult(t, c, op, target, true, "ok", nil, f, err)
				})
			}
		}
	})
	words := map[string]error{"symlink": openat.ErrSymlink, "escapes": openat.ErrEscapes}
	attacktest.RunOSRootOracle(t, cases, "openat", words, func(t *testing.T, root string) attacktest.OSRoot {
		r, err := openat.OpenRoot(root)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	})
}
