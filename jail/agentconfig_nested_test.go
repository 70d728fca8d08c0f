package jail_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestAgentConfigNested: WithProtectedAgentConfig protects agent and
// tool configuration at any depth (a repository nested in the
// workspace, created before or during the session), whether it exists
// or not; the same operations succeed without it (unconfined control).
func TestAgentConfigNested(t *testing.T) {
	mk := func(t *testing.T) string {
		root := t.TempDir()
		for _, d := range []string{"a/b/.git/hooks", "old/.git", "vendor/x/.cargo", "p/.vscode", "fresh/.git"} {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		for _, f := range []string{"a/b/.git/config", "old/.git/config", "p/.vscode/tasks.json", "free.txt"} {
			require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
		}
		return root
	}
	write := func(name string) func(ws *jail.Workspace) error {
		return func(ws *jail.Workspace) error {
			return ws.WriteFile(name, []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"), 0o644)
		}
	}
	ops := []struct {
		name string
		op   func(ws *jail.Workspace) error
	}{
		{"WriteFile a/b/.git/config (exists)", write("a/b/.git/config")},
		{"WriteFile fresh/.git/config (new repository)", write("fresh/.git/config")},
		{"WriteFile a/b/.git/hooks/pre-commit", write("a/b/.git/hooks/pre-commit")},
		{"WriteFile a/b/.git/commondir", write("a/b/.git/commondir")},
		{"WriteFile a/b/.git/modules/m/config", func(ws *jail.Workspace) error {
			if err := ws.MkdirAll("a/b/.git/modules/m", 0o755); err != nil {
				return err
			}
			return write("a/b/.git/modules/m/config")(ws)
		}},
		{"WriteFile a/.envrc", write("a/.envrc")},
		{"WriteFile vendor/x/.cargo/config.toml", write("vendor/x/.cargo/config.toml")},
		{"WriteFile p/.vscode/tasks.json", write("p/.vscode/tasks.json")},
		{"WriteFile p/q/.vscode/settings.json", func(ws *jail.Workspace) error {
			if err := ws.MkdirAll("p/q/.vscode", 0o755); err != nil {
				return err
			}
			return write("p/q/.vscode/settings.json")(ws)
		}},
		{"Mkdir p/q/.idea", func(ws *jail.Workspace) error { return ws.MkdirAll("p/q/.idea", 0o755) }},
		{"WriteFile a/.mcp.json", write("a/.mcp.json")},
		{"WriteFile a/.npmrc", write("a/.npmrc")},
		{"WriteFile a/.git (gitfile)", write("a/.git")},
		{"Mkdir a/.git", func(ws *jail.Workspace) error { return ws.Mkdir("a/.git", 0o755) }},
		{"Rename old/.git", func(ws *jail.Workspace) error { return ws.Rename("old/.git", "old/.git-old") }},
		{"Rename free.txt over a/b/.git/config", func(ws *jail.Workspace) error { return ws.Rename("free.txt", "a/b/.git/config") }},
		{"Rename a/b (holds a repository)", func(ws *jail.Workspace) error { return ws.Rename("a/b", "a/c") }},
		{"RemoveAll old", func(ws *jail.Workspace) error { return ws.RemoveAll("old") }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			ws, err := jail.New(mk(t), jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			err = o.op(ws)
			assert.ErrorIs(t, err, jail.ErrReadOnly)
			var pe *fs.PathError
			var le *os.LinkError
			assert.True(t, errors.As(err, &pe) || errors.As(err, &le), "a path error: %v", err)
			// Unconfined control: the same operation without the option.
			ctl, err := jail.New(mk(t))
			require.NoError(t, err)
			defer ctl.Close()
			assert.NoError(t, o.op(ctl), "control")
		})
	}
	t.Run("other writes stay allowed", func(t *testing.T) {
		ws, err := jail.New(mk(t), jail.WithProtectedAgentConfig(), jail.WithDenySecrets())
		require.NoError(t, err)
		defer ws.Close()
		require.NoError(t, ws.MkdirAll("a/b/.git/objects", 0o755))
		require.NoError(t, ws.MkdirAll("a/git", 0o755))
		for _, p := range []string{"new.txt", "a/b/main.go", "a/b/.git/HEAD", "a/b/.git/objects/ab", "a/.bashrc", "p/.vscodex", "a/git/config"} {
			assert.NoError(t, ws.WriteFile(p, []byte("x"), 0o644), p)
		}
		_, err = ws.ReadFile("a/b/.git/config")
		assert.NoError(t, err, "reads stay allowed")
		assert.Equal(t, jail.NarrowAgentConfig, ws.Narrowing(filepath.Join(ws.Root(), "a/b/.git/hooks/x"))&jail.NarrowAgentConfig)
		assert.Zero(t, ws.Narrowing(filepath.Join(ws.Root(), "a/b/.git/HEAD"))&jail.NarrowAgentConfig)
	})
}

// TestAgentConfigWorkspaceInsideHome (red team round 11, R11a-7): a
// workspace inside HOME (~/.config, ~/.ssh) holds HOME's start-up files
// under other names: ~/.config/git/config is the global git
// configuration, ~/.ssh/authorized_keys the login's. They are protected
// where they are; the unconfined control (no WithProtectedAgentConfig)
// writes them.
func TestAgentConfigWorkspaceInsideHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, d := range []string{".config/git", ".config/other", ".config/systemd/user", ".config/direnv", ".config/environment.d", ".config/Code/User", ".config/Claude", ".config/zed", ".ssh"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	for _, f := range []string{".config/git/config", ".config/other/a.json", ".ssh/config", ".ssh/authorized_keys"} {
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte("x"), 0o644))
	}
	for _, tc := range []struct {
		ws        string
		protected []string
		free      []string
	}{
		{".config", []string{"git/config", "git/new", "systemd/user/evil.service", "direnv/direnvrc", "environment.d/x.conf", "Code/User/settings.json", "Claude/claude_desktop_config.json", "zed/settings.json"}, []string{"other/a.json", "new.json"}},
		{".config/git", []string{"config", "ignore"}, nil},
		{".ssh", []string{"authorized_keys", "config", "rc"}, nil},
	} {
		t.Run(tc.ws, func(t *testing.T) {
			for _, protect := range []bool{false, true} {
				var opts []jail.Option
				if protect {
					opts = append(opts, jail.WithProtectedAgentConfig())
				}
				w, err := jail.New(filepath.Join(home, tc.ws), opts...)
				require.NoError(t, err)
				for _, p := range tc.protected {
					err := w.WriteFile(p, []byte("y"), 0o644)
					if protect {
						assert.ErrorIs(t, err, jail.ErrReadOnly, p)
					} else {
						assert.NoError(t, err, "control: %s", p)
					}
				}
				for _, p := range tc.free {
					assert.NoError(t, w.WriteFile(p, []byte("y"), 0o644), p)
				}
				w.Close()
			}
		})
	}
}

// TestAgentConfigStowedDotfiles (red team round 12, R12-3): a workspace
// that is the user's dotfiles repository, linked into HOME (GNU stow:
// ~/.bashrc -> dotfiles/bash/.bashrc, ~/.config/git -> ../dotfiles/git),
// has the files HOME's links lead to protected. Control: without the
// option they are written, and a file no link of HOME names is free.
func TestAgentConfigStowedDotfiles(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "dotfiles")
	for _, d := range []string{"bash", "git", "notes"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bash/.bashrc"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "git/config"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
	require.NoError(t, os.Symlink("dotfiles/bash/.bashrc", filepath.Join(home, ".bashrc")))
	require.NoError(t, os.Symlink("../dotfiles/git", filepath.Join(home, ".config/git")))
	// Red team round 13, R13-6: HOME's agent configuration (~/.claude)
	// and a link inside a protected directory of HOME that is real
	// (~/.ssh/config -> ../dotfiles/ssh/config, stow --no-folding).
	for _, d := range []string{"claude", "ssh", "nvim/lua"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	// Three levels down in a protected directory of HOME (R14-2).
	require.NoError(t, os.WriteFile(filepath.Join(ws, "nvim/lua/init.lua"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config/nvim/lua"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(ws, "nvim/lua/init.lua"), filepath.Join(home, ".config/nvim/lua/init.lua")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "claude/settings.json"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ssh/config"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("dotfiles/claude", filepath.Join(home, ".claude")))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.Symlink("../dotfiles/ssh/config", filepath.Join(home, ".ssh/config")))
	for _, protect := range []bool{false, true} {
		var opts []jail.Option
		if protect {
			opts = append(opts, jail.WithProtectedAgentConfig())
		}
		w, err := jail.New(ws, opts...)
		require.NoError(t, err)
		for _, p := range []string{"bash/.bashrc", "git/config", "git/new", "claude/settings.json", "ssh/config", "nvim/lua/init.lua"} {
			err := w.WriteFile(p, []byte("y"), 0o644)
			if protect {
				assert.ErrorIs(t, err, jail.ErrReadOnly, p)
			} else {
				assert.NoError(t, err, "control: %s", p)
			}
		}
		assert.NoError(t, w.WriteFile("notes/a.md", []byte("y"), 0o644))
		w.Close()
	}
}

// TestAgentConfigXDGConfigHome (red team round 12, R12-11): with
// XDG_CONFIG_HOME=~/.xdg, git reads ~/.xdg/git/config as the global
// configuration: protected whether the workspace is HOME or ~/.xdg.
// Control: ~/.xdg/other stays writable.
func TestAgentConfigXDGConfigHome(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".xdg"))
	for _, d := range []string{".xdg/git", ".xdg/other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	for _, ws := range []string{home, filepath.Join(home, ".xdg")} {
		w, err := jail.New(ws, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		assert.ErrorIs(t, w.WriteFile(filepath.Join(home, ".xdg/git/config"), []byte("y"), 0o644), jail.ErrReadOnly, ws)
		assert.NoError(t, w.WriteFile(filepath.Join(home, ".xdg/other/a"), []byte("y"), 0o644), ws)
		w.Close()
	}
}
