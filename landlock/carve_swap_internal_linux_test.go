package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/openat"
)

// TestAddCarvedRuleRefusesSwappedParent: a carved rule's path was listed
// as ws/a/sib; if ws/a became a symlink to an outside tree before the rule
// is added, the rule must not land on outside/sib (it would grant the
// sibling's full rights outside the policy). Also with the O_NOFOLLOW walk.
func TestAddCarvedRuleRefusesSwappedParent(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, walk := range []bool{false, true} {
		if walk {
			defer openat.SetForceFallback(true)()
		}
		base, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "sib"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(out, "sib"), 0o755))

		attr := ll.RulesetAttr{HandledAccessFS: uint64(abiConfig(kernelABI()).HandledAccessFS)}
		fd, err := ll.LandlockCreateRuleset(&attr, 0)
		require.NoError(t, err)
		defer unix.Close(fd)
		r := Rule{Path: filepath.Join(ws, "a", "sib"), Access: RightsRead}
		require.NoError(t, addCarvedRule(fd, r, true), "positive control")

		require.NoError(t, os.Rename(filepath.Join(ws, "a"), filepath.Join(base, "a.old")))
		require.NoError(t, os.Symlink(out, filepath.Join(ws, "a")))
		err = addCarvedRule(fd, r, true)
		assert.ErrorIs(t, err, openat.ErrSymlink, "walk=%v", walk)
	}
}
