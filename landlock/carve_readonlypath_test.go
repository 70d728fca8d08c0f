package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestCollectCarvesReadOnlyPathNoWalk: absolute read-only paths alone
// (no pattern: the --config file made read-only under a writable root)
// are carved without walking the roots, so a policy granting "/" with
// one read-only file compiles (the walk of "/" failed on /proc, or ran
// into the walk limit). The carve is the same one path. The control: the
// same tree with a deny pattern is walked, and fails at the limit. Red
// before: ErrWalkLimit for both.
func TestCollectCarvesReadOnlyPathNoWalk(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d", i)), nil, 0o644))
	}
	cfg := filepath.Join(root, "policy.toml")
	require.NoError(t, os.WriteFile(cfg, nil, 0o644))
	roots := []Rule{{Path: root, Access: RightsAll}}

	ws, err := jail.New(root, jail.WithReadOnly(cfg))
	require.NoError(t, err)
	defer ws.Close()
	got, err := collectCarves(ws, Options{WalkLimit: 2}, roots)
	require.NoError(t, err)
	assert.Equal(t, []carve{{path: cfg, access: RightsReadExec, source: SourceReadOnly, exists: true}}, got)

	withDeny, err := jail.New(root, jail.WithReadOnly(cfg), jail.WithDeny(".env"))
	require.NoError(t, err)
	defer withDeny.Close()
	_, err = collectCarves(withDeny, Options{WalkLimit: 2}, roots)
	assert.ErrorIs(t, err, ErrWalkLimit, "control: a pattern is expanded by the walk")
}

// TestCarveAllCarveBelow: an Extra rule marked CarveBelow (the command's
// HOME) is carved like a policy root: the read-only file below it gets
// read rights only, its directory read_dir (a chain), the sibling every
// right. The control: the same carve below an Extra rule without it
// leaves the rule whole (widened, as before). Red before: the HOME rule
// was kept whole too.
func TestCarveAllCarveBelow(t *testing.T) {
	list := func(dir string) ([]dirEntry, error) {
		return []dirEntry{{"policy.toml", kindFile}, {"sub", kindDir}}, nil
	}
	rules := []Rule{
		{Path: "/ws", Access: RightsAll, Source: "workspace"},
		{Path: "/h", Access: RightsAll, Source: "home", CarveBelow: true},
		{Path: "/o", Access: RightsAll, Source: "extra"},
	}
	carves := []carve{
		{path: "/h/policy.toml", access: RightsReadExec, source: SourceReadOnly, exists: true},
		{path: "/o/policy.toml", access: RightsReadExec, source: SourceReadOnly, exists: true},
	}
	out, chains, _, err := carveAll(rules, 1, carves, list)
	require.NoError(t, err)
	assert.Equal(t, 1, chains)
	assert.Equal(t, []Rule{
		{Path: "/ws", Access: RightsAll, Source: "workspace"},
		{Path: "/h", Access: chainRights, Source: "chain"},
		{Path: "/h/policy.toml", Access: RightsReadExec & fileRights, Source: SourceReadOnly},
		{Path: "/h/sub", Access: RightsAll, Source: "home"},
		{Path: "/o", Access: RightsAll, Source: "extra"},
	}, out)
}
