package landlock

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinksResolveSameAsEvalSymlinks (red team round 17, R17b-5): the
// memoised resolve of the carve walk answers what filepath.EvalSymlinks
// answers, for random trees of links: chains of sibling names, "..",
// links to directories on the way, absolute targets, loops, dangling
// ones, in random order of resolution (each link resolved twice: from
// the memo too).
func TestLinksResolveSameAsEvalSymlinks(t *testing.T) {
	for seed := range uint64(40) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(seed, 17))
		dirs := []string{"", "a", "a/b", "c", "c/d"}
		for _, d := range dirs[1:] {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		require.NoError(t, os.Symlink("../a", filepath.Join(root, "c/la"))) // a directory link on the way
		var files, lns []string
		for i := range 6 {
			f := filepath.Join(dirs[r.IntN(len(dirs))], fmt.Sprintf("f%d", i))
			require.NoError(t, os.WriteFile(filepath.Join(root, f), nil, 0o644))
			files = append(files, f)
		}
		for i := range 30 {
			lns = append(lns, filepath.Join(dirs[r.IntN(len(dirs))], fmt.Sprintf("l%d", i)))
		}
		names := append(append([]string{}, files...), lns...)
		names = append(names, "missing", "c/la", "a/b")
		for _, l := range lns {
			to := names[r.IntN(len(names))]
			from := filepath.Dir(filepath.Join(root, l))
			var dest string
			switch r.IntN(4) {
			case 0:
				dest = filepath.Join(root, to) // absolute
			case 1:
				dest, _ = filepath.Rel(from, filepath.Join(root, to)) // with ".."
			case 2:
				dest = "../" + filepath.Base(from) + "/" + filepath.Base(to) // maybe nothing
			default:
				dest = "c/la/../" + filepath.Base(to) // through a link, then ".."
			}
			require.NoError(t, os.Symlink(dest, filepath.Join(root, l)))
		}
		lk := &links{}
		for pass := range 2 {
			for _, i := range r.Perm(len(lns)) {
				p := filepath.Join(root, lns[i])
				want, werr := filepath.EvalSymlinks(p)
				got, gerr := lk.resolve(p)
				if werr != nil {
					assert.Error(t, gerr, "seed %d pass %d %s -> %s", seed, pass, lns[i], readlink(p))
					continue
				}
				if assert.NoError(t, gerr, "seed %d %s", seed, lns[i]) {
					assert.Equal(t, want, got, "seed %d pass %d %s -> %s", seed, pass, lns[i], readlink(p))
				}
			}
		}
	}
}

func readlink(p string) string { s, _ := os.Readlink(p); return s }

// BenchmarkLinksResolveChain: a chain of 2,000 sibling links, each
// resolved as the carve walk meets them (R17b-5: 1 ms a link with
// EvalSymlinks each).
func BenchmarkLinksResolveChain(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	const n = 2000
	require.NoError(b, os.WriteFile(filepath.Join(root, "real"), nil, 0o644))
	for i := range n {
		to := "real"
		if i+1 < n {
			to = fmt.Sprintf("f%d.key", i+1)
		}
		require.NoError(b, os.Symlink(to, filepath.Join(root, fmt.Sprintf("f%d.key", i))))
	}
	for _, mode := range []string{"EvalSymlinks", "resolve"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				lk := &links{}
				for i := range n {
					p := filepath.Join(root, fmt.Sprintf("f%d.key", i))
					if mode == "resolve" {
						lk.resolve(p)
					} else {
						filepath.EvalSymlinks(p)
					}
				}
			}
		})
	}
}
