package learn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
)

// TestPolicyClassifierPinned (red team R6-2): the --config and --learn
// files outside every root, a create in their directory or one above it,
// and a hard link of the file elsewhere are by design for every right,
// whatever the roots; a sibling directory is not. The control: the same
// refusals classified without Pinned are learnable (the run's policy has
// no root near them), and Decide then grants rw of the file itself, as
// the red team's run 1 did.
func TestPolicyClassifierPinned(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := func(s string) string { return filepath.Join(root, s) }
	for _, d := range []string{"ws", "policies/sub", "other"} {
		require.NoError(t, os.MkdirAll(p(d), 0o755))
	}
	require.NoError(t, os.WriteFile(p("policies/sub/policy.toml"), []byte("ro = []\n"), 0o644))
	require.NoError(t, os.Link(p("policies/sub/policy.toml"), p("other/hard.toml")))
	o := &cliopts.Options{Workspace: p("ws")}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()

	ds := []denials.Denial{
		{Blockers: []string{"fs.write_file"}, Path: p("policies/sub/policy.toml")},
		{Blockers: []string{"fs.read_file"}, Path: p("policies/sub/policy.toml")},
		{Blockers: []string{"fs.make_reg"}, Path: p("policies/sub")},
		{Blockers: []string{"fs.make_dir"}, Path: p("policies/new")}, // the view's form: the new entry
		{Blockers: []string{"fs.write_file"}, Path: p("other/hard.toml")},
		{Blockers: []string{"fs.make_reg"}, Path: p("other")}, // control: learnable with Pinned too
	}
	pinnedFiles := []string{p("policies/sub/policy.toml"), p("ws/learned.toml")}
	got := FromDenials(ds, PolicyClassifier{WS: pw, Pinned: pinnedFiles})
	require.Len(t, got, len(ds))
	for i, r := range got[:5] {
		assert.Contains(t, r.ByDesign, "the --config or --learn file", "%d: %+v", i, r)
	}
	assert.Empty(t, got[5].ByDesign, "a sibling directory of the policy's")
	plan := Decide(got, nil)
	require.Len(t, plan.Add, 1)
	assert.Equal(t, Entry{KeyRW, p("other"), "learned: create refused"}, plan.Add[0])

	// Control: without Pinned every one is learnable, and the file itself
	// is granted rw.
	bare := FromDenials(ds, PolicyClassifier{WS: pw})
	for _, r := range bare {
		assert.Empty(t, r.ByDesign, "%+v", r)
	}
	var keys []string
	for _, e := range Decide(bare, nil).Add {
		keys = append(keys, string(e.Key)+" "+e.Value)
	}
	assert.Contains(t, keys, "rw "+p("policies/sub/policy.toml"))
}
