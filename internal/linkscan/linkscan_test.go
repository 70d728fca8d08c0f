package linkscan

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalk: links at each level are found down to maxDepth and not
// below, a directory descend refuses is not read, and the budget stops
// the walk (a directory with more entries than are left is skipped).
func TestWalk(t *testing.T) {
	d := t.TempDir()
	for _, dir := range []string{"a/b/c", "skip"} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, dir), 0o755))
	}
	for _, l := range []string{"l1", "a/l2", "a/b/l3", "a/b/c/l4", "skip/l5"} {
		require.NoError(t, os.Symlink("x", filepath.Join(d, l)))
	}
	var got []string
	budget := 100
	require.NoError(t, Walk(d, 3, &budget, func(p string, _ int) bool { return filepath.Base(p) != "skip" }, func(p string) {
		rel, _ := filepath.Rel(d, p)
		got = append(got, rel)
	}))
	assert.ElementsMatch(t, []string{"l1", "a/l2", "a/b/l3"}, got)
	got, budget = nil, 3 // d has 3 entries: read; a has 2: not, and that is an error
	err := Walk(d, 3, &budget, nil, func(p string) { got = append(got, filepath.Base(p)) })
	require.ErrorIs(t, err, ErrBudget)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, filepath.Join(d, "a"), pe.Path, "the directory that did not fit")
	assert.NotContains(t, got, "l2")
}

// TestWalkCountsWhatLeads (red team round 16, R16-3): plain files and
// directories the walk does not enter are not counted, so a command
// cannot use the budget up with them; a link beyond them is still found.
// Control: the same number of directories the walk enters does exceed it.
func TestWalkCountsWhatLeads(t *testing.T) {
	d := t.TempDir()
	for i := range 300 {
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(i)), nil, 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(d, "dir", "n"+strconv.Itoa(i)), 0o755))
	}
	require.NoError(t, os.Symlink("x", filepath.Join(d, "zlink")))
	var got []string
	budget := 10
	require.NoError(t, Walk(d, 2, &budget, nil, func(p string) { got = append(got, filepath.Base(p)) }))
	assert.Equal(t, []string{"zlink"}, got, "dir's 300 entries are at the last level: not entered, not counted")
	budget = 10
	err := Walk(d, 3, &budget, nil, func(string) {})
	assert.ErrorIs(t, err, ErrBudget, "control: entered, the 300 directories count")
}
