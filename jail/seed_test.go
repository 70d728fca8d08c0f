package jail_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
)

const seedsFile = "../testdata/seeds.toml"

// TestSeedTables runs the tables of seeds 000, 003 and 004
// (testdata/seeds.toml, each row citing its seed) through Resolve and the
// Workspace op, with both mechanisms.
func TestSeedTables(t *testing.T) {
	cases := attacktest.Load(t, seedsFile)
	for _, c := range cases {
		require.NotEmpty(t, c.Seed, "row %s cites no seed", c.Name)
	}
	runCorpus(t, cases)
}

// Seed 000: New canonicalises the root (must be absolute, must exist,
// must be a directory; distinct errors) and compares against the
// canonical path.
func TestSeed000New(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(base, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(base, "alias")))
	require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(real, "f"), []byte("F"), 0o644))

	for _, tc := range []struct {
		root string
		want error
	}{
		{"relative/dir", jail.ErrNotAbsolute},
		{filepath.Join(base, "missing"), fs.ErrNotExist},
		{filepath.Join(base, "file"), jail.ErrNotDirectory},
	} {
		w, err := jail.New(tc.root)
		assert.ErrorIs(t, err, tc.want, "New(%q)", tc.root)
		assert.Nil(t, w)
	}

	w, err := jail.New(filepath.Join(base, "alias"))
	require.NoError(t, err)
	defer w.Close()
	assert.Equal(t, real, w.Root(), "Root must be the canonical path")
	got, err := w.Resolve(filepath.Join(base, "alias", "f"))
	assert.NoError(t, err, "the root's own alias spelling resolves inside")
	assert.Equal(t, filepath.Join(real, "f"), got)
}

// Seed 000: the ReadTracker is keyed by the canonical path, so reading
// through a symlink and writing by the real name (or the reverse) is the
// same file; overwriting an unread file fails (ErrNotRead); going beyond
// the seed, a file changed on disk since it was read fails (ErrStale).
func TestSeed000ReadTracker(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("v1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "g"), []byte("g1"), 0o644))
	require.NoError(t, os.Symlink("f", filepath.Join(root, "link")))
	tr := jail.NewReadTracker()
	w, err := jail.New(root, jail.WithReadTracker(tr))
	require.NoError(t, err)
	defer w.Close()

	assert.ErrorIs(t, w.WriteFile("f", []byte("x"), 0o644), jail.ErrNotRead, "overwrite before any read")
	assert.ErrorIs(t, w.WriteFile("link", []byte("x"), 0o644), jail.ErrNotRead, "overwrite through a link before any read")

	b, err := w.ReadFile("link")
	require.NoError(t, err)
	assert.Equal(t, "v1", string(b))
	assert.True(t, tr.HasBeenRead(filepath.Join(root, "f")), "a read through a link marks the canonical path")
	assert.False(t, tr.HasBeenRead(filepath.Join(root, "g")))
	assert.NoError(t, w.WriteFile("f", []byte("v2"), 0o644), "read via link, write via real name")

	// ErrStale: g read, then changed behind the workspace's back.
	_, err = w.ReadFile("g")
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond) // distinct mtime even on coarse clocks
	require.NoError(t, os.WriteFile(filepath.Join(root, "g"), []byte("changed on disk"), 0o644))
	assert.ErrorIs(t, w.WriteFile("g", []byte("x"), 0o644), jail.ErrStale)

	// New files need no read.
	assert.NoError(t, w.WriteFile("brand-new", []byte("n"), 0o644))
}

// Seed 004: Check's decision per root mode.
func TestSeed004CheckModes(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"ws", "project-a", "project-b", "tools"} {
		require.NoError(t, os.Mkdir(filepath.Join(base, d), 0o755))
	}
	w, err := jail.New(filepath.Join(base, "ws"),
		jail.WithAllowed(filepath.Join(base, "project-a"), jail.ReadOnly),
		jail.WithAllowed(filepath.Join(base, "project-b"), jail.ReadWrite),
		jail.WithAllowed(filepath.Join(base, "tools"), jail.ReadExec),
	)
	require.NoError(t, err)
	defer w.Close()
	for _, tc := range []struct {
		dir    string
		access jail.Access
		want   error
	}{
		{"ws", jail.Read, nil},
		{"ws", jail.Write, nil},
		{"ws", jail.Execute, nil},
		{"project-a", jail.Read, nil},
		{"project-a", jail.Write, jail.ErrReadOnly},
		{"project-a", jail.Execute, jail.ErrNotExecutable},
		{"project-b", jail.Read, nil},
		{"project-b", jail.Write, nil},
		{"project-b", jail.Execute, nil},
		{"tools", jail.Read, nil},
		{"tools", jail.Write, jail.ErrReadOnly},
		{"tools", jail.Execute, nil},
	} {
		p := filepath.Join(base, tc.dir, "x")
		got, err := w.Check(p, tc.access)
		if tc.want == nil {
			assert.NoError(t, err, "Check(%s, %s)", tc.dir, tc.access)
			assert.Equal(t, p, got)
		} else {
			assert.ErrorIs(t, err, tc.want, "Check(%s, %s)", tc.dir, tc.access)
		}
	}
	_, err = w.Check(filepath.Join(base, "project-a-evil", "x"), jail.Read)
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace, "seed 004 startsWith prefix sibling")
}

// Seed 003: glob and list_directory stay rooted. FS() walks and globs
// never leave the workspace, even across a symlink to outside.
func TestSeed003FSStaysRooted(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		c := &attacktest.Case{
			Name:    "fs",
			Tree:    []string{"src/main.rs=M", "out => $OUT", "etc => /etc"},
			Outside: []string{"secret=OUTSIDE", "more/x=X"},
		}
		e := attacktest.Build(t, c)
		w, err := jail.New(e.Root)
		require.NoError(t, err)
		defer w.Close()
		fsys := w.FS()

		var seen []string
		require.NoError(t, fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			seen = append(seen, p)
			return nil
		}))
		assert.ElementsMatch(t, []string{".", "etc", "out", "src", "src/main.rs"}, seen, "WalkDir must not descend through symlinks")

		m, err := fs.Glob(fsys, "out/*")
		if err == nil {
			assert.Empty(t, m, "Glob through a link to outside")
		}
		m, err = fs.Glob(fsys, "*/*")
		require.NoError(t, err)
		assert.Equal(t, []string{"src/main.rs"}, m)

		_, err = fs.ReadFile(fsys, "out/secret")
		assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
		_, err = fs.ReadDir(fsys, "etc")
		assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
		_, err = fs.Stat(fsys, "../out/secret")
		assert.ErrorIs(t, err, fs.ErrInvalid, "fs.ValidPath rejects ..")
		b, err := fs.ReadFile(fsys, "src/main.rs")
		assert.NoError(t, err)
		assert.Equal(t, "M", string(b))
	})
}
