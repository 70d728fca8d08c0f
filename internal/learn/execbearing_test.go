package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepositoryBelowBound: a directory with more entries below it than
// maxRepoScan is refused without being searched to the end (here the
// repository lies past the bound, so only the bound finds it refused);
// the control: with the bound above the tree's size the repository is
// found and named, and a tree without one is learnable.
func TestRepositoryBelowBound(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("a%d", i)), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "z/repo/.git"), 0o755))
	clean := filepath.Join(t.TempDir(), "clean")
	require.NoError(t, os.MkdirAll(filepath.Join(clean, "d"), 0o755))

	old := maxRepoScan
	t.Cleanup(func() { maxRepoScan = old })
	maxRepoScan = 3
	assert.Contains(t, repositoryBelow(root), "more than 3 entries below it")
	maxRepoScan = 100
	assert.Equal(t, "the git repository "+filepath.Join(root, "z/repo")+" lies below it (its .git, hooks and agent configuration)", repositoryBelow(root))
	assert.Equal(t, "", repositoryBelow(clean))
}
