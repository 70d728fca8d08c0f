// Package wstest builds the directory tree the exec and landlock tests
// confine children to: a workspace, a read-only and a read-exec root, a
// directory outside every root holding a secret, and a private temporary
// directory, side by side under one fresh canonical temporary directory.
package wstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Secret is the content (with a newline) of Outside/secret: a marker that
// no confined child may ever print.
const Secret = "LANDJAIL-OUTSIDE-SECRET"

// Dirs are the canonical absolute paths of the tree New made.
type Dirs struct {
	Root    string // ws: in.txt ("inside\n")
	RO      string // ro: ro.txt ("readonly\n"), run.sh (prints "ran")
	ROX     string // rox: run.sh (prints "ran")
	Outside string // outside: secret (Secret)
	Tmp     string // tmp: empty
}

// New creates the tree under t.TempDir() with symlinks resolved (so
// paths compare equal to what the kernel reports), removed when the test
// ends.
func New(t testing.TB) Dirs {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	d := Dirs{
		Root:    filepath.Join(base, "ws"),
		RO:      filepath.Join(base, "ro"),
		ROX:     filepath.Join(base, "rox"),
		Outside: filepath.Join(base, "outside"),
		Tmp:     filepath.Join(base, "tmp"),
	}
	for _, p := range []string{d.Root, d.RO, d.ROX, d.Outside, d.Tmp} {
		require.NoError(t, os.Mkdir(p, 0o755))
	}
	for _, f := range []struct {
		path, content string
		mode          os.FileMode
	}{
		{filepath.Join(d.Root, "in.txt"), "inside\n", 0o644},
		{filepath.Join(d.RO, "ro.txt"), "readonly\n", 0o644},
		{filepath.Join(d.RO, "run.sh"), "#!/bin/sh\necho ran\n", 0o755},
		{filepath.Join(d.ROX, "run.sh"), "#!/bin/sh\necho ran\n", 0o755},
		{filepath.Join(d.Outside, "secret"), Secret + "\n", 0o644},
	} {
		require.NoError(t, os.WriteFile(f.path, []byte(f.content), f.mode))
	}
	return d
}
