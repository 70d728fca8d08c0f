package jail_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// TestOSRootOracle runs Go's os.Root case table
// (attacktest.OSRootCasesFile) through jail.Workspace (New on the case's
// root, no other policy) under both mechanisms, each compared with the
// "workspace" outcome recorded in cases.json. The os.Root control runs
// in openat's TestOSRootOracle.
func TestOSRootOracle(t *testing.T) {
	words := map[string]error{
		"outside": jail.ErrOutsideWorkspace,
		"invalid": jail.ErrInvalidPath,
		"symlink": openat.ErrSymlink,
		"escapes": openat.ErrEscapes,
	}
	attacktest.RunOSRootOracle(t, attacktest.LoadOSRootCases(t), "workspace", words, func(t *testing.T, root string) attacktest.OSRoot {
		w, err := jail.New(root)
		require.NoError(t, err)
		t.Cleanup(func() { w.Close() })
		return w
	})
}
