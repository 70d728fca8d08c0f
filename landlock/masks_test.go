package landlock

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanMountLimit: a view that needs more mounts than fs.mount-max
// leaves (mountBudget, which compile reads from the kernel and the test
// sets: the sysctl is global) is refused by plan with ErrMountLimit,
// naming the patterns the masks come from and the counts, before
// anything is built. 30 files match "*.env" (3 directories), 2 hold a
// private key; ".ssh" and the negation match none. Control: the same
// request with one mount more to spare, or unchecked, plans the 32
// masks. Shown red by removing the checkViewMounts call from plan.
func TestPlanMountLimit(t *testing.T) {
	req := baseRequest()
	req.namespaces = true
	req.denyPatterns = []string{"*.env", ".ssh", "!keep.env"}
	for i := range 30 {
		req.carves = append(req.carves, carve{path: fmt.Sprintf("/ws/d%d/s%d.env", i%3, i), source: SourceDenyPattern, exists: true})
	}
	req.carves = append(req.carves,
		carve{path: "/ws/k/id_x", source: SourcePrivateKey, exists: true},
		carve{path: "/ws/k/id_y", source: SourcePrivateKey, exists: true})
	stat := fakeStat("/ws/", "/ro/", "/dev/null", "/")

	c, err := plan(req, 7, stat, fakeList)
	require.NoError(t, err, "unchecked")
	require.Equal(t, LayerNamespaces, c.report.Layer)
	require.Len(t, c.report.Masks, 32)
	// 32 masks, 4 pinned directories, the writable root /ws, /tmp and
	// /dev/shm.
	need := 32 + 4 + 1 + 2

	req.checkMounts = true
	req.mountBudget = need
	_, err = plan(req, 7, stat, fakeList)
	require.NoError(t, err, "fits exactly")

	req.mountBudget = need - 1
	_, err = plan(req, 7, stat, fakeList)
	require.ErrorIs(t, err, ErrMountLimit)
	assert.ErrorContains(t, err, `32 masks (deny pattern "*.env": 30, private keys: 2)`)
	assert.ErrorContains(t, err, fmt.Sprintf("need %d mounts", need))
	assert.ErrorContains(t, err, fmt.Sprintf("leaves %d", need-1))
	assert.ErrorContains(t, err, "--no-namespaces")

	req.namespaces = false
	c, err = plan(req, 7, stat, fakeList)
	require.NoError(t, err, "Landlock carve-outs take no mount")
	assert.Equal(t, LayerLandlockOnly, c.report.Layer)
}
