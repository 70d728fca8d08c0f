package cliopts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/preset"
	"github.com/landjail/landjail/landlock"
)

// loadRun parses args as run's flags.
func loadRun(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	var o *Options
	cmd := &cli.Command{Name: "run", Flags: RunFlags(), Action: func(_ context.Context, cmd *cli.Command) (err error) {
		o, err = Load(cmd)
		return err
	}}
	err := cmd.Run(context.Background(), append([]string{"run"}, args...))
	return o, err
}

// TestPresetOptions: --preset and the TOML key preset reach Options, an
// unknown name is refused naming it, the presets' roots become Landlock
// rules labelled preset:NAME, and a pyenv root inside the workspace (a
// writable root) is not granted while the same tree outside it is.
func TestPresetOptions(t *testing.T) {
	_, err := loadRun(t, "--workspace", t.TempDir(), "--preset", "ruby")
	require.ErrorIs(t, err, preset.ErrUnknown)
	assert.Contains(t, err.Error(), `"ruby"`)

	cfg := writeConfig(t, `preset = ["python"]`)
	home, ws := t.TempDir(), t.TempDir()
	shim := filepath.Join(home, ".pyenv", "shims", "python3")
	require.NoError(t, os.MkdirAll(filepath.Dir(shim), 0o755))
	require.NoError(t, os.WriteFile(shim, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("HOME", home)
	t.Setenv("PYENV_ROOT", "")
	t.Setenv("PATH", filepath.Dir(shim)+":/usr/bin:/bin")
	o, err := loadRun(t, "--workspace", ws, "--config", cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"python"}, o.Preset)
	root, err := filepath.EvalSymlinks(filepath.Join(home, ".pyenv"))
	require.NoError(t, err)
	var got []landlock.Rule
	for _, r := range o.LandlockOptions("").Extra {
		if strings.HasPrefix(r.Source, "preset:") {
			got = append(got, r)
		}
	}
	assert.Equal(t, []landlock.Rule{{Path: root, Access: landlock.RightsReadExec, Source: "preset:python"}}, got)
	assert.Len(t, o.PresetRoots(), 1)
	assert.Contains(t, o.PresetEnv("/H"), "PYENV_ROOT="+root)

	// The same tree as a --rw root: a command could have written it.
	o, err = loadRun(t, "--workspace", ws, "--rw", home, "--preset", "python")
	require.NoError(t, err)
	assert.Empty(t, o.presetRules(), "a pyenv root inside a --rw root is granted")
}

// TestPresetProxyEnvAndRegistries: the proxy variables replace any given
// with --env (a command line cannot route npm around the proxy), and the
// registries left for the hints are those --allow-domain does not reach
// (an exact entry, or a wildcard above the name).
func TestPresetProxyEnvAndRegistries(t *testing.T) {
	t.Setenv("PATH", "/nonexistent")
	o, err := loadRun(t, "--workspace", t.TempDir(), "--preset", "node", "--preset", "python",
		"--allow-domain", "registry.npmjs.org", "--allow-domain", "*.pythonhosted.org")
	require.NoError(t, err)
	env := o.PresetProxyEnv([]string{"npm_config_proxy=http://elsewhere:1", "A=1"}, "127.0.0.1:9")
	assert.Contains(t, env, "npm_config_proxy=http://127.0.0.1:9")
	assert.NotContains(t, env, "npm_config_proxy=http://elsewhere:1")
	assert.Contains(t, env, "PIP_PROXY=http://127.0.0.1:9")
	assert.Contains(t, env, "A=1")
	assert.Equal(t, map[string][]string{"python": {"pypi.org"}}, o.PresetRegistries())
}

// TestPrivateTmpsSkipsLinks: a /tmp/landjail-* entry that is a symbolic
// link (any local user can make one) is not a private directory: followed,
// /etc became untrusted for every preset and --preset java lost the
// JDK's configuration. Control: a real landjail-* directory is listed.
func TestPrivateTmpsSkipsLinks(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Symlink("/etc", filepath.Join(tmp, "landjail-squat")))
	require.NoError(t, os.Mkdir(filepath.Join(tmp, "landjail-0-abc"), 0o700))
	assert.Equal(t, []string{filepath.Join(tmp, "landjail-0-abc")}, privateTmps(tmp))
}
