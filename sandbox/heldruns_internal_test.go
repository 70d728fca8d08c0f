package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
)

// TestHeldRunsPruned: the runs a server's ended calls closed are dropped
// as new ones are added, not kept until a freeze (red team round 23,
// R23c-7: 1.5 KB a bash call, 19 to 43 MB over 15,000 calls). Control:
// a run still open is kept.
func TestHeldRunsPruned(t *testing.T) {
	if limits.Available().Mechanism == limits.NotEnforced {
		kerneltest.Missing(t, "no usable cgroup")
	}
	var h heldRuns
	open, err := limits.Start(limits.DefaultSpec(), limits.Options{})
	require.NoError(t, err)
	defer open.Close()
	h.add(open)
	for range 20 {
		r, err := limits.Start(limits.DefaultSpec(), limits.Options{})
		require.NoError(t, err)
		h.add(r)
		_, err = r.Close()
		require.NoError(t, err)
	}
	last, err := limits.Start(limits.DefaultSpec(), limits.Options{})
	require.NoError(t, err)
	defer last.Close()
	h.add(last)
	assert.Equal(t, []*limits.Run{open, last}, h.runs)
}
