package tools_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// TestAgentConfigToolsAgreeWithBash (issue 21): with the agent defaults
// (--deny-secrets --protect-agent-config), the namespace layer and the
// sweep wired as landjail-mcp wires it (sweep.AfterEach around
// Toolkit.Network), write_file and bash agree on every name: what
// write_file may create, bash may create (a new file at the root
// included: nothing is frozen), and what write_file refuses as
// agent configuration, at any depth, does not survive a bash call
// either (bash creates it, the sweep after the call renames it away and
// says so in the result). Landlock-only (namespaces unavailable) the root
// is frozen for bash: new.txt is the documented difference there. Red
// before: write_file refused nested names nowhere, and bash could not
// create new.txt under the namespace layer (the root was frozen).
func TestAgentConfigToolsAgreeWithBash(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	names := []struct {
		name      string
		protected bool
	}{
		{"new.txt", false},
		{"src/new.txt", false},
		{"src/.git/HEAD", false},
		{".envrc", true},
		{".mcp.json", true},
		{"src/.envrc", true},
		{"src/.git/config", true},
		{"src/.git/hooks/pre-commit", true},
		{"src/pkg/.vscode/tasks.json", true},
		{"src/pkg/.cargo/config.toml", true},
		{"src/.git/modules/m/config", true},
	}
	e := newEnv(t, []string{"src/pkg/", "src/.git/", ".git/hooks/", ".git/config=[core]\n"}, jail.WithDenySecrets(), jail.WithProtectedAgentConfig())
	snap, err := sweep.Take(e.ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	opts := landlock.Options{System: true, Namespaces: true, SweepAgentConfig: true}
	e.k.Compile = func() (*landlock.Ruleset, error) { return landlock.Compile(e.ws, opts) }
	e.k.Network = sweep.AfterEach[*landlock.Ruleset, *exec.Cmd](snap, io.Discard, nil)
	rs, err := e.k.Compile()
	require.NoError(t, err)
	layer := rs.Report().Layer
	rs.Close()
	ctx := context.Background()

	for _, n := range names {
		// write_file first (what it made is removed), then bash on the
		// same name.
		_, toolErr := e.k.WriteFile(tools.WriteFileArgs{Path: n.name, Content: "x\n"})
		switch {
		case filepath.Base(n.name) == ".envrc":
			// Denied too: --deny-secrets' .env* (direnv's exports:
			// red team round 17, R17a-9).
			assertToolErr(t, toolErr, jail.ErrDenied)
		case n.protected:
			assertToolErr(t, toolErr, jail.ErrReadOnly)
		default:
			require.NoError(t, toolErr, n.name)
			require.NoError(t, os.Remove(filepath.Join(e.root, n.name)))
		}

		r, err := e.k.Bash(ctx, tools.BashArgs{Command: "mkdir -p \"$(dirname '" + n.name + "')\" && echo x > '" + n.name + "' && echo made"})
		require.NoError(t, err, n.name)
		_, statErr := os.Lstat(filepath.Join(e.root, n.name))
		frozenRoot := layer != landlock.LayerNamespaces && !strings.Contains(n.name, "/")
		switch {
		case n.protected:
			assert.ErrorIs(t, statErr, os.ErrNotExist, "%s survived a bash call: %s", n.name, r)
			if r.ExitCode == 0 { // created, then renamed away (it or its protected directory)
				assert.Contains(t, r.String(), "[landjail: quarantined ", "the model is told")
			}
		case frozenRoot:
			assert.NotEqual(t, 0, r.ExitCode, "Landlock-only: the root is frozen: %s", r)
		default:
			assert.NoError(t, statErr, "bash may create what write_file may: %s", r)
			assert.Equal(t, 0, r.ExitCode, r.String())
		}
	}
	t.Logf("layer %s", layer)
}
