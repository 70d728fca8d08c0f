package exec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
)

// TestSelfTest: on this kernel the canary passes, also when the policy
// allows the usual probe locations (then it moves on to /dev/shm), and
// Start with Cmd.SelfTest runs.
func TestSelfTest(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	assert.NoError(t, exec.SelfTest(f.ws, rs))

	wide := f.compile(t, landlock.Options{Extra: []landlock.Rule{{Path: "/tmp", Access: landlock.RightsRead}}})
	assert.NoError(t, exec.SelfTest(f.ws, wide), "probe location outside a policy that allows /tmp")

	everything := f.compile(t, landlock.Options{Extra: []landlock.Rule{{Path: "/", Access: landlock.RightsRead}}})
	assert.ErrorIs(t, exec.SelfTest(f.ws, everything), exec.ErrSelfTestFailed, "nowhere to put a probe")

	assert.ErrorIs(t, exec.SelfTest(nil, rs), exec.ErrNoWorkspace)

	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/cat", "in.txt")
	c.SelfTest = true
	out, err := c.Output()
	require.NoError(t, err)
	assert.Equal(t, "inside\n", string(out))
}
