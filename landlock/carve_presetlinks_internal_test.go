package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// BenchmarkWalkPresetSelfLinks is red team round 21's R21-1: one
// directory of the workspace holding 50 files and a self-link (name ->
// .) for every directory component of the secrets preset's multi-level
// patterns (.config, gh, .mozilla, firefox, .var, app, ...) and four
// editor-copy spellings, under --deny-secrets. Every path through the
// links is a name of the same directory, walked once for each key the
// names reach (BelowKeyOf): ~30,000 link walks. Each entry was
// matched whole with each of its parents (a name 90 components deep):
// 81 s a walk here, 256 s for the reviewer's run to start. Now each at
// its own level: ~3 s. Reports the link walks begun (walks/op;
// carried_internal_test.go's check, a whole match each, is off here).
func BenchmarkWalkPresetSelfLinks(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	p := filepath.Join(root, "p")
	require.NoError(b, os.Mkdir(p, 0o755))
	var comps []string
	for _, pat := range jail.SecretPatterns {
		rest, ok := strings.CutPrefix(pat, "**/")
		if !ok || !strings.Contains(rest, "/") {
			continue
		}
		parts := strings.Split(rest, "/")
		for _, c := range parts[:len(parts)-1] {
			if !strings.ContainsAny(c, "*?[ ") && c != "" && !slices.Contains(comps, c) {
				comps = append(comps, c)
			}
		}
	}
	comps = append(comps, ".config.bak", "gh~", "#.kube#", ".ssh.swp")
	for _, c := range comps {
		require.NoError(b, os.Symlink(".", filepath.Join(p, c)))
	}
	for i := range 50 {
		require.NoError(b, os.WriteFile(filepath.Join(p, fmt.Sprint("f", i)), nil, 0o644))
	}
	ws, err := jail.New(root, jail.WithDenySecrets())
	require.NoError(b, err)
	defer ws.Close()
	var walks atomic.Int64
	old := carried
	carried = func(*jail.Workspace, string, jail.Narrowing, bool) { walks.Add(1) }
	defer func() { carried = old }()
	b.ReportAllocs()
	for b.Loop() {
		_, err := walkCarves(ws, []string{root}, 10_000_000)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(len(comps)), "links")
	b.ReportMetric(float64(walks.Load())/float64(b.N), "walks/op")
}
