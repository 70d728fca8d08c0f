package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/sandbox"
	"github.com/landjail/landjail/tools"
)

// server builds what landjail-mcp builds: the plan of a server and its
// Toolkit (file tools and bash through the same plan).
func server(t *testing.T, o *cliopts.Options) *tools.Toolkit {
	t.Helper()
	tracker := jail.NewReadTracker()
	var stderr strings.Builder
	plan, err := sandbox.New(o, sandbox.Settings{Stderr: &stderr, JailOptions: []jail.Option{jail.WithReadTracker(tracker)}, Server: true})
	require.NoError(t, err)
	t.Cleanup(plan.Close)
	require.NoError(t, plan.PrepareServer())
	t.Cleanup(func() { exec.Release(plan.Ruleset) })
	k := &tools.Toolkit{WS: plan.WS, Ruleset: plan.Ruleset, Tracker: tracker, Env: plan.Env, Seccomp: plan.Seccomp, NoPIDNamespace: o.NoPIDNamespace}
	k.Compile, k.Network = plan.CompileCall, plan.Network
	return k
}

// TestServerFileToolsReadWhatBashReads: MCP read_file of a system file
// was refused (outside the workspace) while the bash tool read it: the
// file tools' policy now holds the system preset's directories read-only
// (what resolve answers and what the command may read), so both agree;
// writes there stay refused in both. Control: a file outside every root
// stays refused in both.
func TestServerFileToolsReadWhatBashReads(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "o.txt"), []byte("OUT\n"), 0o644))
	k := server(t, &cliopts.Options{Workspace: ws, DenySecrets: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		path string
		read bool
	}{
		{"/etc/os-release", true},
		{"/usr/share/common-licenses/GPL-3", true},
		{filepath.Join(outside, "o.txt"), false},
	} {
		if _, err := os.Stat(tc.path); err != nil {
			continue
		}
		_, ferr := k.ReadFile(tools.ReadFileArgs{Path: tc.path})
		r, berr := k.Bash(ctx, tools.BashArgs{Command: "cat " + tc.path + " >/dev/null"})
		require.NoError(t, berr)
		assert.Equal(t, tc.read, ferr == nil, "read_file %s: %v", tc.path, ferr)
		assert.Equal(t, tc.read, r.ExitCode == 0, "bash cat %s: %s", tc.path, r.Output)
		_, werr := k.WriteFile(tools.WriteFileArgs{Path: tc.path, Content: "x"})
		assert.Error(t, werr, "write_file %s", tc.path)
	}
}

// TestServerBashLimits: landjail-mcp's bash calls each run in a control
// group of their own with the server's limits (--pids here): a bounded
// fork bomb is capped, the result says so, and the next call starts
// fresh. Control: the same call on a server without the limit forks all.
func TestServerBashLimits(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if p := limits.Available(); p.Mechanism != limits.CgroupV1 && p.Mechanism != limits.CgroupV2 {
		kerneltest.Missing(t, "a writable cgroup hierarchy: %s", p.Reason)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	bomb := `n=0; for i in $(seq 40); do (sleep 5) & n=$((n+1)); done 2>/dev/null; echo started; wait`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k := server(t, &cliopts.Options{Workspace: ws, Pids: "15"})
	r, err := k.Bash(ctx, tools.BashArgs{Command: bomb})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Network, "\n"), "refused at --pids 15", r.Output)
	r, err = k.Bash(ctx, tools.BashArgs{Command: "echo fresh"})
	require.NoError(t, err)
	assert.Equal(t, 0, r.ExitCode, r.Output)
	assert.Empty(t, r.Network)

	k = server(t, &cliopts.Options{Workspace: ws})
	r, err = k.Bash(ctx, tools.BashArgs{Command: bomb})
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(r.Network, "\n"), "refused", "control: the default limit is far away")
	assert.Equal(t, 0, r.ExitCode, r.Output)
}

// TestServerLinkVerdictsKept (red team round 15, R15a-24): a secret
// denied only by the name of a link to it (.env -> settings/production
// under --deny-secrets) stays denied for the session once a call removed
// the link: bash and read_file in the next call are refused. Control: a
// new session, started after the link is gone, reads it (nothing names it
// a secret any more). Red before: the second call read it.
func TestServerLinkVerdictsKept(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "settings"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "settings/production"), []byte("DB_PASSWORD=ENVTARGETSECRET\n"), 0o644))
	require.NoError(t, os.Symlink("settings/production", filepath.Join(ws, ".env")))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k := server(t, &cliopts.Options{Workspace: ws, DenySecrets: true})
	r, err := k.Bash(ctx, tools.BashArgs{Command: "cat settings/production; rm .env && echo removed"})
	require.NoError(t, err)
	assert.NotContains(t, r.Output, "ENVTARGETSECRET")
	if !strings.Contains(r.Output, "removed") {
		// Landlock alone (no namespace layer): the workspace's root is
		// frozen by the carve, and the link cannot be removed at all.
		assert.Contains(t, r.Output, "cannot remove")
		return
	}
	r, err = k.Bash(ctx, tools.BashArgs{Command: "cat settings/production"})
	require.NoError(t, err)
	assert.NotContains(t, r.Output, "ENVTARGETSECRET", "bash after the link was removed")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "settings/production"})
	assert.ErrorIs(t, err, jail.ErrDenied, "read_file after the link was removed")

	k = server(t, &cliopts.Options{Workspace: ws, DenySecrets: true})
	res, err := k.ReadFile(tools.ReadFileArgs{Path: "settings/production"})
	require.NoError(t, err, "control: a new session")
	assert.Contains(t, res.Content, "ENVTARGETSECRET")
}
