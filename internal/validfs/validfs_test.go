package validfs_test

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/validfs"
)

// recDir is an os.Root that records every name it is asked about.
type recDir struct {
	*os.Root
	asked []string
}

func (d *recDir) Open(name string) (*os.File, error) {
	d.asked = append(d.asked, name)
	return d.Root.Open(name)
}

func (d *recDir) Stat(name string) (fs.FileInfo, error) {
	d.asked = append(d.asked, name)
	return d.Root.Stat(name)
}

func (d *recDir) ReadFile(name string) ([]byte, error) {
	d.asked = append(d.asked, name)
	return d.Root.ReadFile(name)
}

func (d *recDir) ReadDir(name string) ([]fs.DirEntry, error) {
	d.asked = append(d.asked, name)
	f, err := d.Root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func newDir(t *testing.T) *recDir {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(dir+"/d", 0o755))
	require.NoError(t, os.WriteFile(dir+"/d/f", []byte("x"), 0o644))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return &recDir{Root: r}
}

// TestInvalidNames: a name fs.ValidPath refuses fails with fs.ErrInvalid
// in every method and never reaches the Dir; a failed Open is an untyped
// nil fs.File.
func TestInvalidNames(t *testing.T) {
	d := newDir(t)
	fsys := validfs.New(d)
	for _, name := range []string{"/d/f", "../d", "d/../d", "d/", "", "./d", "d//f"} {
		f, err := fsys.Open(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "open %q", name)
		assert.True(t, f == nil, "open %q: typed nil", name)
		_, err = fsys.Stat(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "stat %q", name)
		_, err = fsys.ReadFile(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "readfile %q", name)
		_, err = fsys.ReadDir(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "readdir %q", name)
	}
	assert.Empty(t, d.asked, "invalid names reached the Dir")

	f, err := fsys.Open("missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.True(t, f == nil, "a failed open returned a typed nil")
	assert.Equal(t, []string{"missing"}, d.asked)
}

// TestFSConformance runs testing/fstest over the adapter.
func TestFSConformance(t *testing.T) {
	require.NoError(t, fstest.TestFS(validfs.New(newDir(t)), "d", "d/f"))
}
