package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestWalkCarvesPlantedLoops (red team round 20, R20a-1, R20a-3): three
// directories under config/, each with links to all three, under
// patterns that keep every name open (**/secrets/**, config/**/x) and
// the secrets preset: the walk ends within a small limit (each target
// once per BelowKey, and the keys are finitely many), and a secret reached
// only through the loops is still found. Before: the names grew as
// 3^(3*turns) (forty minutes to --walk-limit), and a bound on a loop's
// turns let a decoy register a key with its turns used up. Red before:
// ErrWalkLimit.
func TestWalkCarvesPlantedLoops(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range 3 {
		d := filepath.Join(root, "config", "d"+string(rune('0'+i)))
		require.NoError(t, os.MkdirAll(d, 0o755))
		for j := range 3 {
			require.NoError(t, os.Symlink("../d"+string(rune('0'+j)), filepath.Join(d, "l"+string(rune('0'+j)))))
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "store/secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "store/secrets/x"), []byte("S"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "store/plain"), nil, 0o644))
	require.NoError(t, os.Symlink("../../store", filepath.Join(root, "config/d2/x")))
	ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithDeny("**/secrets/**", "config/**/x/plain"))
	require.NoError(t, err)
	defer ws.Close()
	carves, err := walkCarves(ws, []string{root}, 2000)
	require.NoError(t, err)
	got := map[string]bool{}
	for _, c := range carves {
		if c.source == SourceDenyPattern {
			got[c.path] = true
		}
	}
	assert.True(t, got[filepath.Join(root, "store/plain")], "config/**/x/plain through the loops: %v", carves)
	assert.True(t, got[filepath.Join(root, "store/secrets")] || got[filepath.Join(root, "store/secrets/x")], "%v", carves)
}
