package tools_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestLargeDirectories: glob and grep do not walk a directory of more
// than Limits.DirEntries entries (they count it and say so), and
// list_directory shows the first ListEntries of any directory while
// counting all, so that a command filling a directory with millions of
// names cannot make the server hold them (red team round 25, R25c-10).
// Control: at exactly DirEntries entries the directory is walked; denied
// names are neither shown nor counted.
func TestLargeDirectories(t *testing.T) {
	t.Parallel()
	tree := []string{"small/a.txt=needle", "small/b.txt=needle", "big/.env=needle"}
	for i := range 60 {
		tree = append(tree, fmt.Sprintf("big/x%02d.txt=needle", i))
	}
	e := newEnv(t, tree, jail.WithDeny(".env"))
	e.k.Limits.DirEntries = 59

	g, err := e.k.Glob(tools.GlobArgs{Pattern: "**/*.txt"})
	require.NoError(t, err)
	assert.Equal(t, []string{"small/a.txt", "small/b.txt"}, g.Matches)
	assert.Equal(t, 1, g.SkippedLargeDirs)
	assert.Contains(t, g.String(), "1 directories not walked")

	r, err := e.k.Grep(tools.GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 2)
	assert.Equal(t, 1, r.SkippedLargeDirs)
	assert.Contains(t, r.String(), "1 directories skipped as holding more entries")

	e.k.Limits.DirEntries = 60 // control: .env is not counted
	g, err = e.k.Glob(tools.GlobArgs{Pattern: "**/*.txt"})
	require.NoError(t, err)
	assert.Len(t, g.Matches, 62)
	assert.Zero(t, g.SkippedLargeDirs)
	assert.NotContains(t, g.String(), "not walked")
	r, err = e.k.Grep(tools.GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 62)
	assert.Zero(t, r.SkippedLargeDirs)

	e.k.Limits.ListEntries = 3
	l, err := e.k.ListDirectory(tools.ListDirectoryArgs{Path: "big"})
	require.NoError(t, err)
	assert.Equal(t, 60, l.Total)
	assert.True(t, l.Truncated)
	require.Len(t, l.Entries, 3)
	assert.Equal(t, []string{"x00.txt", "x01.txt", "x02.txt"}, []string{l.Entries[0].Name, l.Entries[1].Name, l.Entries[2].Name})
	assert.Equal(t, int64(6), l.Entries[0].Size)
}

// TestWalkBudget: one glob or grep call makes at most Limits.WalkOps
// directory reads and stats, then stops and says its result is cut (red
// team round 26, R26a-8: three ** and 256 alternatives on a chain of 41
// directories took 347 s, and went on after the client canceled).
// Control: the same calls under the default budget finish whole.
func TestWalkBudget(t *testing.T) {
	t.Parallel()
	chain := "d"
	for range 30 {
		chain += "/d"
	}
	e := newEnv(t, []string{chain + "/x.txt=needle", "top.txt=needle"})
	pattern := "**/d/**/d/**/*{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}"

	g, err := e.k.Glob(tools.GlobArgs{Pattern: "**/*.txt"})
	require.NoError(t, err)
	assert.Len(t, g.Matches, 2, "control")
	assert.False(t, g.BudgetSpent, "control")

	e.k.Limits.WalkOps = 500
	start := time.Now()
	g, err = e.k.Glob(tools.GlobArgs{Pattern: pattern})
	require.NoError(t, err)
	assert.True(t, g.BudgetSpent)
	assert.Contains(t, g.String(), "the walk stopped")
	t.Logf("glob within 500 reads: %v", time.Since(start))

	e.k.Limits.WalkOps = 10
	r, err := e.k.Grep(tools.GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	assert.True(t, r.BudgetSpent)
	assert.Contains(t, r.String(), "the walk stopped")
	e.k.Limits.WalkOps = 0 // the default
	r, err = e.k.Grep(tools.GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 2, "control")
	assert.False(t, r.BudgetSpent, "control")
}

// TestWalkTime: a glob or grep call's walk stops at Limits.WalkTime
// whatever its budget of units left (red team round 27, R27d-9: on a
// chain of 1,500 directories one glob took 125 s of the server's CPU
// within its units). Control: the same call with the default time
// answers whole.
func TestWalkTime(t *testing.T) {
	t.Parallel()
	chain := "d"
	for range 8 {
		chain += "/d"
	}
	e := newEnv(t, []string{chain + "/x.txt=needle", "top.txt=needle"})
	pattern := "**/d/**/d/**/*{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}"
	e.k.Limits.WalkOps = 1 << 40 // units never run out here
	e.k.Limits.WalkTime = 5 * time.Minute
	g, err := e.k.Glob(tools.GlobArgs{Pattern: pattern})
	require.NoError(t, err)
	assert.False(t, g.BudgetSpent, "control: the whole walk in a long time")
	e.k.Limits.WalkTime = time.Millisecond
	g, err = e.k.Glob(tools.GlobArgs{Pattern: pattern})
	require.NoError(t, err)
	assert.True(t, g.BudgetSpent, "stopped by its time")
	assert.Contains(t, g.String(), "the walk stopped")
}
