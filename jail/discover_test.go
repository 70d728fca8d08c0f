package jail_test

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// discoverCase is the registry tree of the Discover tests: the classic
// evil skill (README.md => /etc/passwd) next to a good one, and one entry
// per other reason to skip.
var discoverCase = attacktest.Case{
	Name: "discover",
	Tree: []string{
		// my-skill kept, evil-skill skipped.
		".claude/skills/my-skill/SKILL.md=# my skill",
		".claude/skills/my-skill/README.md=readme",
		".claude/skills/evil-skill/SKILL.md=# evil",
		".claude/skills/evil-skill/README.md => /etc/passwd",
		// Nested good entries: subdirectories, an inner symlink that
		// stays inside, a symlinked entry whose target is inside.
		".claude/skills/nested/SKILL.md=# nested",
		".claude/skills/nested/scripts/run.sh=echo",
		".claude/skills/nested/scripts/deeper/x=x",
		".claude/skills/nested/shared => ../../../shared",
		"shared/common.md=common",
		".claude/skills/alias => ../../shared",
		".claude/skills/plain.md=a file entry",
		// Symlinked entry directory out of the workspace.
		".claude/skills/out-dir => $OUT/skilldir",
		// An inner directory symlinked out.
		".claude/skills/inner-out/SKILL.md=x",
		".claude/skills/inner-out/scripts => $OUT/skilldir",
		// Hard links to an outside file: as an entry, and inside an entry.
		".claude/skills/hard.md == $OUT/secret",
		".claude/skills/hard-inside/SKILL.md == $OUT/secret2",
		// Denied: a symlink to a denied file; a file inside an entry
		// symlinked to a denied one; a denied name (invisible).
		".claude/skills/creds => ../../.env",
		".claude/skills/leaky/SKILL.md => ../../../.env",
		".claude/skills/.env=invisible",
		".env=KEY",
		// Unreadable: a dangling symlink, a loop, a FIFO is made below.
		".claude/skills/dangling => missing",
		".claude/skills/loop => loop",
	},
	Outside: []string{"secret=S", "secret2=S2", "skilldir/SKILL.md=outside"},
	Policy:  attacktest.Policy{Deny: []string{".env"}},
}

// discoverMechanisms runs f with openat2 (skipped, via kerneltest, when
// the kernel or the emulation refuses it) and with the O_NOFOLLOW walk.
func discoverMechanisms(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		kerneltest.RequireOpenat2(t)
		f(t)
	})
	t.Run("fallback", func(t *testing.T) {
		defer openat.SetForceFallback(true)()
		f(t)
	})
}

func TestDiscover(t *testing.T) {
	c := discoverCase
	e := attacktest.Build(t, &c)
	require.NoError(t, syscall.Mkfifo(filepath.Join(e.Root, ".claude/skills/fifo"), 0o644))
	w := attacktest.NewWorkspace(t, e, &c)

	discoverMechanisms(t, func(t *testing.T) {
		found, skipped, err := w.Discover(".claude/skills")
		require.NoError(t, err)

		var names []string
		for _, f := range found {
			names = append(names, f.Name)
		}
		assert.Equal(t, []string{"alias", "my-skill", "nested", "plain.md"}, names, "kept entries, sorted")
		want := map[string]jail.DiscoveredEntry{
			"alias":    {Name: "alias", Path: filepath.Join(e.Root, "shared"), IsDir: true},
			"my-skill": {Name: "my-skill", Path: filepath.Join(e.Root, ".claude/skills/my-skill"), IsDir: true},
			"nested":   {Name: "nested", Path: filepath.Join(e.Root, ".claude/skills/nested"), IsDir: true},
			"plain.md": {Name: "plain.md", Path: filepath.Join(e.Root, ".claude/skills/plain.md")},
		}
		for _, f := range found {
			assert.Equal(t, want[f.Name], f)
		}

		reasons := map[string]struct {
			err  error
			path string // the path the reason names, relative to .claude/skills
		}{
			"evil-skill":  {jail.ErrOutsideWorkspace, "evil-skill/README.md"},
			"out-dir":     {jail.ErrOutsideWorkspace, "out-dir"},
			"inner-out":   {jail.ErrOutsideWorkspace, "inner-out/scripts"},
			"hard.md":     {jail.ErrHardlinked, "hard.md"},
			"hard-inside": {jail.ErrHardlinked, "hard-inside/SKILL.md"},
			"creds":       {jail.ErrDenied, "creds"},
			"leaky":       {jail.ErrDenied, "leaky/SKILL.md"},
			"dangling":    {syscall.ENOENT, "dangling"},
			"loop":        {syscall.ELOOP, "loop"},
			"fifo":        {jail.ErrNotRegular, "fifo"},
		}
		var skippedNames []string
		for _, s := range skipped {
			skippedNames = append(skippedNames, s.Name)
			r, ok := reasons[s.Name]
			if !assert.True(t, ok, "unexpected skip %s: %v", s.Name, s.Reason) {
				continue
			}
			assert.Equal(t, ".claude/skills/"+s.Name, s.Path, "as found")
			assert.ErrorIs(t, s.Reason, r.err, s.Name)
			var pe *fs.PathError
			if assert.ErrorAs(t, s.Reason, &pe, s.Name) {
				assert.Equal(t, ".claude/skills/"+r.path, pe.Path, "the reason names the offending path")
			}
		}
		assert.Equal(t, []string{"creds", "dangling", "evil-skill", "fifo", "hard-inside", "hard.md", "inner-out", "leaky", "loop", "out-dir"}, skippedNames, "skipped entries, sorted")
		assert.NotContains(t, skippedNames, ".env", "a denied name is not revealed")
	})
}

func TestDiscoverRegistry(t *testing.T) {
	c := attacktest.Case{
		Name:    "discover-registry",
		Tree:    []string{"agents => $OUT/agents", "empty/", "file=x", "link => .agents", ".agents/a.md=a"},
		Outside: []string{"agents/a.md=out"},
	}
	e := attacktest.Build(t, &c)
	w := attacktest.NewWorkspace(t, e, &c)

	_, _, err := w.Discover(".claude/skills")
	assert.ErrorIs(t, err, fs.ErrNotExist, "no registry")
	_, _, err = w.Discover("agents")
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace, "registry symlinked out")
	_, _, err = w.Discover(filepath.Join(e.Out, "agents"))
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace, "registry outside, absolute")
	_, _, err = w.Discover("file")
	assert.ErrorIs(t, err, syscall.ENOTDIR)

	found, skipped, err := w.Discover("empty")
	assert.NoError(t, err)
	assert.Empty(t, found)
	assert.Empty(t, skipped)

	// A registry reached through a symlink: Path is canonical, the
	// skipped Path keeps the caller's spelling.
	found, skipped, err = w.Discover(e.Root + "/link/")
	require.NoError(t, err)
	assert.Empty(t, skipped)
	assert.Equal(t, []jail.DiscoveredEntry{{Name: "a.md", Path: filepath.Join(e.Root, ".agents/a.md")}}, found)
}
