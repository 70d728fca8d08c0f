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
