package privdirs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBeginRefusesUnsafeLiveDir: Begin records nothing (nil) when the
// live directory is a symbolic link (to a directory of the caller's:
// the marker would land there) or can be written by others; control: the
// same directory, a real one of mode 0700, is used.
// Shown able to fail: with O_NOFOLLOW dropped from openLiveFD the link
// case fails (the marker is written through the link).
func TestBeginRefusesUnsafeLiveDir(t *testing.T) {
	env(t)
	live, err := liveDir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(live), 0o700))
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Mkdir(elsewhere, 0o700))

	require.NoError(t, os.Symlink(elsewhere, live))
	if r := Begin(); r != nil {
		assert.NoError(t, r.Record())
		r.End()
		t.Error("Begin used a live directory that is a symbolic link")
	}
	require.NoError(t, os.Remove(live))

	require.NoError(t, os.Mkdir(live, 0o700))
	require.NoError(t, os.Chmod(live, 0o777))
	assert.Nil(t, Begin(), "a live directory others can write")

	require.NoError(t, os.Chmod(live, 0o700))
	r := Begin()
	require.NotNil(t, r, "control: a safe live directory")
	require.NoError(t, r.Record())
	ents, err := os.ReadDir(live)
	require.NoError(t, err)
	assert.Len(t, ents, 2, ".lock and the marker")
	r.End()
}
