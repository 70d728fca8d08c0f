package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// presetSelfLinks makes red team round 21's R21-1 plant below a new
// workspace: one directory p holding files plain files and a self-link
// (name -> .) for each of the first n directory components of the
// secrets preset's multi-level patterns (.config, gh, .mozilla, firefox,
// .var, app, ...; n < 0: all 83) and, with copies, each one's editor
// copy NAME.bak too (round 22, R22a-1). It returns the workspace root and
// the number of links.
func presetSelfLinks(t testing.TB, n, files int, copies bool) (string, int) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := filepath.Join(root, "p")
	require.NoError(t, os.Mkdir(p, 0o755))
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
	if n >= 0 {
		comps = comps[:n]
	}
	if copies {
		for _, c := range slices.Clone(comps) {
			comps = append(comps, c+".bak")
		}
	}
	for _, c := range comps {
		require.NoError(t, os.Symlink(".", filepath.Join(p, c)))
	}
	for i := range files {
		require.NoError(t, os.WriteFile(filepath.Join(p, fmt.Sprint("f", i)), nil, 0o644))
	}
	return root, len(comps)
}

// TestWalkCarvesLinkNamesLimit: a directory reached through planted
// self-links by more than MaxLinkNames names the patterns tell apart
// fails the walk with ErrLinkNames naming it (R21-1's plant: 347 keys;
// with editor copies, R22a-1: 938, 48 s before), at once and before its
// walk limit; control: the same plant with 8 components stays under it
// and the walk ends.
func TestWalkCarvesLinkNamesLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n      int
		copies bool
		fails  bool
	}{{8, false, false}, {-1, false, true}, {-1, true, true}} {
		t.Run(fmt.Sprint(tc.n, tc.copies), func(t *testing.T) {
			t.Parallel()
			root, _ := presetSelfLinks(t, tc.n, 50, tc.copies)
			ws, err := jail.New(root, jail.WithDenySecrets())
			require.NoError(t, err)
			defer ws.Close()
			_, err = walkCarves(ws, []string{root}, DefaultWalkLimit)
			if !tc.fails {
				assert.NoError(t, err, "control: a few names")
				return
			}
			assert.ErrorIs(t, err, ErrLinkNames)
			assert.NotErrorIs(t, err, ErrWalkLimit)
			assert.ErrorContains(t, err, filepath.Join(root, "p"))
		})
	}
}

// BenchmarkWalkPresetSelfLinks is R21-1's and R22a-1's plant (files: 50)
// under --deny-secrets, with n components: every path through the links
// is a name of the same directory, walked once for each key the names
// reach (BelowKeyOf). Each entry was matched whole with each of its
// parents, in names hundreds of components deep: 81 s for all 83 here,
// 256 s for the reviewer's run to start; with the copies 48 s (938 keys)
// once entries were matched at their own level. Walks are now queued,
// shortest names first, and fail with ErrLinkNames past MaxLinkNames
// keys. Reports the link walks begun (walks/op; carried_internal_test.go's
// check, a whole match each, is off here) and whether the walk failed
// closed (failed/op).
func BenchmarkWalkPresetSelfLinks(b *testing.B) {
	for _, tc := range []struct {
		n      int
		copies bool
	}{{8, false}, {16, false}, {-1, false}, {-1, true}} {
		root, links := presetSelfLinks(b, tc.n, 50, tc.copies)
		b.Run(fmt.Sprintf("links=%d", links), func(b *testing.B) {
			ws, err := jail.New(root, jail.WithDenySecrets())
			require.NoError(b, err)
			defer ws.Close()
			var walks atomic.Int64
			old := carried
			carried = func(*jail.Workspace, string, jail.Narrowing, bool) { walks.Add(1) }
			defer func() { carried = old }()
			failed := 0
			b.ReportAllocs()
			for b.Loop() {
				_, err := walkCarves(ws, []string{root}, 10_000_000)
				if err != nil {
					require.ErrorIs(b, err, ErrLinkNames)
					failed++
				}
			}
			b.ReportMetric(float64(walks.Load())/float64(b.N), "walks/op")
			b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
		})
	}
}

// TestWalkCarvesLinkWalksInAll: the walks by link names are bounded in
// all, not only per directory (red team round 22, R22c-5: 100
// directories cross-linked by links named like 48 of the preset's
// components, each directory under MaxLinkNames, 45 s before the run
// started). Twenty such directories, each linking to the next by the
// first 8 components, under maxLinkWalks lowered to 64: ErrLinkNames;
// control: the default bound, and 2 directories under 64.
func TestWalkCarvesLinkWalksInAll(t *testing.T) {
	root, _ := presetSelfLinks(t, 0, 0, false)
	comps := []string{".config", "gh", ".kube", ".aws", ".docker", ".ssh", ".gnupg", ".mozilla"}
	build := func(n int) string {
		dir := filepath.Join(root, fmt.Sprint("x", n))
		for i := range n {
			d := filepath.Join(dir, fmt.Sprint("d", i))
			require.NoError(t, os.MkdirAll(d, 0o755))
			for _, c := range comps {
				require.NoError(t, os.Symlink(fmt.Sprint("../d", (i+1)%n), filepath.Join(d, c)))
			}
			for j := range 20 {
				require.NoError(t, os.WriteFile(filepath.Join(d, fmt.Sprint("f", j)), nil, 0o644))
			}
		}
		return dir
	}
	walk := func(dir string, limit int) error {
		old := maxLinkWalks
		maxLinkWalks = limit
		defer func() { maxLinkWalks = old }()
		ws, err := jail.New(dir, jail.WithDenySecrets())
		require.NoError(t, err)
		defer ws.Close()
		_, err = walkCarves(ws, []string{dir}, DefaultWalkLimit)
		return err
	}
	many := build(20)
	err := walk(many, 64)
	assert.ErrorIs(t, err, ErrLinkNames)
	assert.ErrorContains(t, err, "walks by link names in all")
	assert.NoError(t, walk(many, 16*MaxLinkNames), "control: the default bound")
	assert.NoError(t, walk(build(2), 64), "control: two directories")
}

// TestOutsideLiteralLeads: the directories above a workspace, and those
// out of the policy, are read for links only below names a pattern
// spells literally: "cfg/[!a]*/secret.txt"'s "[!a]*" matches nearly
// every name, and CI's fresh runner failed the R18a-12 carveouts row
// with ErrLinkNames after walking 4,096 directories of /tmp. 5,000
// directories beside the workspace, each holding one: the walk ends;
// control: .kube beside it, with a config link into the workspace under
// --deny-secrets, is still read (R22a-5).
func TestOutsideLiteralLeads(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "private"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "private/kc"), []byte("KC"), 0o600))
	for i := range 5000 {
		require.NoError(t, os.MkdirAll(filepath.Join(base, fmt.Sprint("d", i), "x"), 0o755))
	}
	w, err := jail.New(ws, jail.WithDeny("cfg/[!a]*/secret.txt"))
	require.NoError(t, err)
	defer w.Close()
	_, err = walkCarves(w, []string{ws}, DefaultWalkLimit)
	assert.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(base, ".kube"), 0o755))
	require.NoError(t, os.Symlink("../ws/private/kc", filepath.Join(base, ".kube/config")))
	s, err := jail.New(ws, jail.WithDenySecrets())
	require.NoError(t, err)
	defer s.Close()
	carves, err := walkCarves(s, []string{ws}, DefaultWalkLimit)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(carves, func(c carve) bool { return c.path == filepath.Join(ws, "private/kc") }), "control: .kube/config above the workspace")
}
