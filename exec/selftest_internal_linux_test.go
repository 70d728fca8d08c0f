package exec

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestSelfTestNotEnforced fakes a file system on which Landlock does not
// enforce: the probe is put where the policy allows reading. Each probe
// (thread, child) must then report ErrNotEnforced, and Start with
// Cmd.SelfTest must refuse to spawn, caching the verdict until Release.
func TestSelfTestNotEnforced(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws, rs, secret := internalFixture(t)
	root := ws.Root()
	allowed := filepath.Join(root, "in.txt")

	assert.NoError(t, probeThread(rs, secret, root))
	assert.ErrorIs(t, probeThread(rs, allowed, root), ErrNotEnforced)
	assert.NoError(t, probeChild(ws, rs, secret))
	assert.ErrorIs(t, probeChild(ws, rs, allowed), ErrNotEnforced)

	selfTestProbeDir = root
	t.Cleanup(func() { selfTestProbeDir = "" })
	assert.ErrorIs(t, SelfTest(ws, rs), ErrNotEnforced)

	c := CommandContext(context.Background(), ws, rs, "/bin/true")
	c.SelfTest = true
	assert.ErrorIs(t, c.Run(), ErrNotEnforced)
	assert.Nil(t, c.Process, "started although the self-test failed")

	selfTestProbeDir = ""
	require.NoError(t, SelfTest(ws, rs), "the real probe passes")
	c = CommandContext(context.Background(), ws, rs, "/bin/true")
	c.SelfTest = true
	assert.ErrorIs(t, c.Run(), ErrNotEnforced, "verdict cached per Ruleset")

	Release(rs)
	c = CommandContext(context.Background(), ws, rs, "/bin/true")
	c.SelfTest = true
	assert.NoError(t, c.Run(), "Release forgets the verdict")
}
