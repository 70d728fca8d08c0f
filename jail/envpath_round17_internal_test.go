package jail

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelativeEnvValuesRound17 (red team round 17, R17a-1): a relative
// value of a variable that moves credentials (KUBECONFIG=./kubeconfig,
// DOCKER_CONFIG=.docker-ci) or agent configuration
// (GIT_CONFIG_GLOBAL=./gitconfig-ci, CARGO_HOME, CLAUDE_CONFIG_DIR) names
// the path from the working directory, where the tools resolve it, and
// from the workspace, where landjail starts the command: denied and
// protected there, whichever directory landjail was started in. Control: the
// same files with the variables unset are the workspace's own. Red
// before: relative values were skipped, every file read and written.
func TestRelativeEnvValuesRound17(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, wd := range []string{"the workspace", "elsewhere"} {
		t.Run(wd, func(t *testing.T) {
			if wd == "the workspace" {
				t.Chdir(root)
			} else {
				t.Chdir(t.TempDir()) // an MCP client starting landjail-mcp in HOME or "/"
			}
			relativeEnvValues(t, root)
		})
	}
}

func relativeEnvValues(t *testing.T, root string) {
	secrets := map[string]string{
		"KUBECONFIG":                  "kubeconfig",
		"DOCKER_CONFIG":               ".docker-ci/config.json",
		"AWS_SHARED_CREDENTIALS_FILE": "aws/creds",
	}
	config := map[string]string{
		"GIT_CONFIG_GLOBAL": "gitconfig-ci",
		"CARGO_HOME":        "cargo-home/config.toml",
		"CLAUDE_CONFIG_DIR": "claude-cfg/settings.json",
	}
	value := map[string]string{
		"KUBECONFIG": "./kubeconfig", "DOCKER_CONFIG": ".docker-ci", "AWS_SHARED_CREDENTIALS_FILE": "aws/../aws/creds",
		"GIT_CONFIG_GLOBAL": "./gitconfig-ci", "CARGO_HOME": "cargo-home", "CLAUDE_CONFIG_DIR": "./claude-cfg/",
	}
	for _, m := range []map[string]string{secrets, config} {
		for _, f := range m {
			require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("S"), 0o600))
		}
	}
	for _, set := range []bool{false, true} {
		for env, v := range value {
			if !set {
				v = ""
			}
			t.Setenv(env, v)
		}
		w, err := New(root, WithDenySecrets(), WithProtectedAgentConfig())
		require.NoError(t, err)
		for env, f := range secrets {
			_, err := w.ReadFile(f)
			if set {
				assert.ErrorIs(t, err, ErrDenied, env)
			} else {
				assert.NoError(t, err, "control: %s unset", env)
			}
		}
		for env, f := range config {
			err := w.WriteFile(f, []byte("x"), 0o600)
			if set {
				assert.ErrorIs(t, err, ErrReadOnly, env)
			} else {
				assert.NoError(t, err, "control: %s unset", env)
			}
		}
		w.Close()
	}
}
