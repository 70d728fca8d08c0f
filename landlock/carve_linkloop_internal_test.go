package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestWalkCarvesLinkLoops (red team round 10, R10-3): directory links
// that lead back (sub/.kube -> ., four of them, and into each other) under a pattern whose
// components they match walk each target once for each name the
// patterns tell apart (BelowKey: s4/.kube/.kube is s4/.kube again): a
// 200-entry limit is enough for a 50-entry tree (before, every path
// through the loops was walked: minutes for four links). Control: the
// secret behind the pattern is still found through a link.
func TestWalkCarvesLinkLoops(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, os.WriteFile(filepath.Join(root, "f"+string(rune('a'+i))), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d/kube"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d/kube/config"), []byte("token"), 0o600))
	require.NoError(t, os.Symlink("d/kube", filepath.Join(root, ".kube")))
	// s1/.kube -> . (itself), and each next one into the one before and
	// into itself: every path through them is another name of the same
	// directories.
	prev := "."
	for _, sub := range []string{"s1", "s2", "s3", "s4"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, sub), 0o755))
		for j := range 3 {
			require.NoError(t, os.WriteFile(filepath.Join(root, sub, "x"+string(rune('0'+j))), nil, 0o644))
		}
		require.NoError(t, os.Symlink(".", filepath.Join(root, sub, ".kube")))
		if prev != "." {
			require.NoError(t, os.Symlink(filepath.Join("..", prev), filepath.Join(root, sub, "kube")))
		}
		prev = sub
	}
	ws, err := jail.New(root, jail.WithDeny(".kube/config"))
	require.NoError(t, err)
	defer ws.Close()
	carves, err := walkCarves(ws, []string{root}, 200)
	require.NoError(t, err)
	found := false
	for _, c := range carves {
		if c.path == filepath.Join(root, "d/kube/config") && c.source == SourceDenyPattern {
			found = true
		}
	}
	require.True(t, found, "%v", carves)
}

// TestEnterClosedKeyNotCut (red team round 20, R20a-1): a visit under a
// closed key (BelowKey: no anchored pattern can match below the name)
// stands for every name with that key, so it is never cut by the loop
// bound: a decoy that reached .config's target after a planted loop's
// turns registered the key with none left, and the user's .config was
// skipped. An open key (the name itself) is still cut at the bound.
// Red before: the closed row was refused.
func TestEnterClosedKeyNotCut(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithDeny("config/*/secret.txt"))
	require.NoError(t, err)
	defer ws.Close()
	l := &links{ws: ws, turns: 2}
	tgt := filepath.Join(root, "private/gh")
	full := []string{tgt, tgt}
	_, ok := l.enter("tree", tgt, filepath.Join(root, ".m2/.kube/.gem/.config"), full)
	require.True(t, ok, "closed key: entered whatever the chain")
	_, ok = l.enter("tree", tgt, filepath.Join(root, ".config"), nil)
	require.False(t, ok, "the same key: walked once")
	_, ok = l.enter("tree", tgt, filepath.Join(root, "config/loop"), full)
	require.False(t, ok, "open key: cut at the bound")
	_, ok = l.enter("tree", tgt, filepath.Join(root, "config/loop"), nil)
	require.True(t, ok, "open key, turns left")
}
