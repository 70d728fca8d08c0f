package cliopts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// loadRun parses args with run's flags and returns Load's options.
func mustLoadRun(t *testing.T, args ...string) *Options {
	t.Helper()
	o, err := loadRun(t, args...)
	require.NoError(t, err)
	return o
}

// TestLearnFlag: --learn is a flag, never a config key (a file naming
// where the next policy is written is refused as an unknown key); Learn
// returns it absolute; an existing --learn file in the workspace is
// read-only for the command, as the --config file is. The control: the
// same file without --learn is writable.
func TestLearnFlag(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := filepath.Join(ws, "learned.toml")
	require.NoError(t, os.WriteFile(f, []byte("ro = []\n"), 0o644))

	bad := filepath.Join(t.TempDir(), "c.toml")
	require.NoError(t, os.WriteFile(bad, []byte("learn = \"x.toml\"\n"), 0o644))
	_, err = ReadConfig(bad)
	assert.ErrorContains(t, err, "unknown keys: learn")
	assert.NotContains(t, ConfigKeys(RunFlags()), "learn")

	o := mustLoadRun(t, "--workspace", ws, "--learn", f)
	assert.Equal(t, f, o.Learn())
	w, err := o.Policy()
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Check(f, jail.Write)
	assert.ErrorIs(t, err, jail.ErrReadOnly)

	o = mustLoadRun(t, "--workspace", ws)
	assert.Equal(t, "", o.Learn())
	w2, err := o.Policy()
	require.NoError(t, err)
	defer w2.Close()
	_, err = w2.Check(f, jail.Write)
	assert.NoError(t, err, "control: without --learn the file is writable")
}
