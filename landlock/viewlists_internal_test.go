package landlock

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReadOnlyBelowTmpNotWritable (red team round 31, R31d-6): a
// read-only root below the private /tmp is a read-only mount of the
// view, not one of its writable roots in the report, though the view
// still re-attaches it; control: a writable root there is writable.
func TestReadOnlyBelowTmpNotWritable(t *testing.T) {
	req := request{rules: []Rule{
		{Path: "/tmp/ro", Access: RightsRead, Source: "ro"},
		{Path: "/tmp/rw", Access: RightsAll, Source: "rw"},
	}}
	var rep Report
	viewLists(req, &rep)
	assert.True(t, rep.PrivateTmp)
	assert.Contains(t, rep.ReadOnlyMounts, "/tmp/ro")
	assert.NotContains(t, rep.Writable, "/tmp/ro")
	assert.Contains(t, rep.viewWritable(), "/tmp/ro", "re-attached in the view")
	assert.Contains(t, rep.Writable, "/tmp/rw", "control")
}
