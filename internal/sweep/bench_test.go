package sweep_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

// benchTree makes a workspace of n regular files in 100-file directories
// (plus a repository at the root and one nested every 100 directories).
func benchTree(b *testing.B, n int) string {
	root := b.TempDir()
	for i := 0; i < n; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%03d/e%03d", i/10000, (i/100)%100))
		if i%100 == 0 {
			require.NoError(b, os.MkdirAll(d, 0o755))
		}
		require.NoError(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), nil, 0o644))
		if i%10000 == 0 {
			require.NoError(b, os.MkdirAll(filepath.Join(d, ".git/hooks"), 0o755))
			require.NoError(b, os.WriteFile(filepath.Join(d, ".git/config"), []byte("[core]\n"), 0o644))
		}
	}
	require.NoError(b, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]\n"), 0o644))
	return root
}

// BenchmarkSweep100k: Take and Sweep (nothing to neutralise) on a
// 100,000-file tree, warm cache: the cost a supervised run pays twice
// per --protect-agent-config run, landjail-mcp once per bash call.
func BenchmarkSweep100k(b *testing.B) {
	root := benchTree(b, 100_000)
	ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithProtectedAgentConfig())
	require.NoError(b, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(b, err)
	defer snap.Close()
	b.Run("Take", func(b *testing.B) {
		for b.Loop() {
			s, err := sweep.Take(ws, 0)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("Sweep", func(b *testing.B) {
		for b.Loop() {
			q, err := snap.Sweep()
			if err != nil || len(q) != 0 {
				b.Fatal(err, q)
			}
		}
	})
}

// BenchmarkWatch100k: starting and stopping the watch of a
// 100,000-file tree (1,000 directories, 11 repositories): what
// --protect-agent-config adds to a run's start for the live check
// (round 5, N7), on top of Take.
func BenchmarkWatch100k(b *testing.B) {
	root := benchTree(b, 100_000)
	ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithProtectedAgentConfig())
	require.NoError(b, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(b, err)
	defer snap.Close()
	for b.Loop() {
		l, err := snap.Watch(io.Discard, nil, sweep.Throttle{})
		if err != nil {
			b.Fatal(err)
		}
		l.Stop()
	}
}
