package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestSearchStopsWhenCanceled: a glob or grep whose call is canceled
// (MCP notifications/cancelled, the session ending) stops its walk at the
// next read, stat or open, within ~100 ms of the cancel, and returns
// ErrCanceled; before, it ran on to its budget of directory reads (README
// "left open": a canceled call on a chain of 80 directories took ~9 s of
// the server's CPU). Control: the same call uncanceled runs on well past
// the cancel (glob to its budget, grep through every file).
func TestSearchStopsWhenCanceled(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	// glob: a chain of directories and a wide one (pattern alternatives
	// times depth); grep: 1 MiB of text under 300 names (hard links of
	// one file: the page cache holds it once).
	require.NoError(t, os.MkdirAll(filepath.Join(root, "chain", strings.Repeat("d/", 40)), 0o755))
	for i := range 2000 {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "chain", "d", "w", fmt.Sprintf("%c%d", 'a'+i%26, i)), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "many"), 0o755))
	text := filepath.Join(root, "many", "f0.txt")
	require.NoError(t, os.WriteFile(text, bytes.Repeat([]byte("haystack haystack haystack haystack\n"), 1<<20/36), 0o644))
	for i := 1; i < 300; i++ {
		require.NoError(t, os.Link(text, filepath.Join(root, "many", fmt.Sprintf("f%d.txt", i))))
	}
	ws, err := jail.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	k := &Toolkit{WS: ws}
	k.Limits.WalkOps = 600000 // spent in seconds by this glob
	const cancelAfter = 150 * time.Millisecond
	calls := map[string]func(context.Context) error{
		ToolGlob: func(ctx context.Context) error {
			g, err := k.glob(ctx, GlobArgs{Path: "chain", Pattern: "**/d/**/d/**/*{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}"})
			if err == nil {
				assert.True(t, g.BudgetSpent, "control: the uncanceled glob runs to its budget")
			}
			return err
		},
		ToolGrep: func(ctx context.Context) error {
			r, err := k.grep(ctx, GrepArgs{Path: "many", Pattern: "needle"})
			if err == nil {
				assert.Equal(t, 300, r.Files, "control: the uncanceled grep reads every file")
			}
			return err
		},
	}
	for _, tool := range []string{ToolGlob, ToolGrep} {
		start := time.Now()
		require.NoError(t, calls[tool](context.Background()))
		control := time.Since(start)
		t.Logf("control: uncanceled %s ran %v", tool, control)
		require.Greater(t, control, 3*cancelAfter, "the tree is too small for the test on this machine")

		ctx, cancel := context.WithCancel(context.Background())
		canceledAt := make(chan time.Time, 1)
		time.AfterFunc(cancelAfter, func() { canceledAt <- time.Now(); cancel() })
		err := calls[tool](ctx)
		ended := time.Now()
		assert.ErrorIs(t, err, ErrCanceled, tool)
		after := ended.Sub(<-canceledAt)
		t.Logf("%s returned %v after the cancel", tool, after)
		assert.Less(t, after, 2*time.Second, "%s ran on after the cancel", tool)
	}
}
