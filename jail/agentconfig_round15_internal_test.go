package jail

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentConfigHomeLinksRound15 (red team round 15):
//   - R15a-2: a ~/.claude whose file-history used up the look for links
//     left ~/.claude/hooks/pre.sh -> ../../dotfiles/claude/hooks/pre.sh
//     unseen, so the dotfiles workspace's hook stayed writable: beyond the
//     budget New now fails with ErrScanLimit naming the directory;
//     control: a history within the budget, and the hook is protected.
//   - R15a-3: file links in $XDG_CONFIG_HOME's protected directories
//     (~/cfg/git/config -> ../../dotfiles/git/config) were never looked
//     for; control: without XDG_CONFIG_HOME, ~/cfg is nothing.
//   - R15a-11: a protected directory of HOME that is a link out of the
//     policy (~/.claude -> /elsewhere/claude) holding a file link into the
//     workspace (hooks/pre.sh -> dotfiles/claude/hooks/pre.sh); control:
//     no ~/.claude link.
//
// Red before the fix: the over-budget row made no error, the XDG and
// linked-directory rows left the file writable.
func TestAgentConfigHomeLinksRound15(t *testing.T) {
	write := func(t *testing.T, p string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	newHome := func(t *testing.T) (home, ws string) {
		home, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", "")
		return home, filepath.Join(home, "dotfiles")
	}

	t.Run("R15a-2", func(t *testing.T) {
		old := maxAgentLinkScan
		maxAgentLinkScan = 500
		t.Cleanup(func() { maxAgentLinkScan = old })
		for _, n := range []int{100, 600} {
			home, ws := newHome(t)
			write(t, filepath.Join(ws, "claude/hooks/pre.sh"))
			write(t, filepath.Join(ws, "notes.md"))
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude/hooks"), 0o755))
			require.NoError(t, os.Symlink("../../dotfiles/claude/hooks/pre.sh", filepath.Join(home, ".claude/hooks/pre.sh")))
			for i := 0; i < n; i++ { // "file-history" sorts before "hooks"; directories count, plain files not (R16-3)
				require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude/file-history", fmt.Sprint(i), "s"), 0o755))
			}
			w, err := New(ws, WithProtectedAgentConfig())
			if n > maxAgentLinkScan {
				require.ErrorIs(t, err, ErrScanLimit)
				assert.ErrorContains(t, err, filepath.Join(home, ".claude/file-history"))
				continue
			}
			require.NoError(t, err, "control: within the budget")
			assert.ErrorIs(t, w.WriteFile("claude/hooks/pre.sh", []byte("y"), 0o644), ErrReadOnly)
			assert.NoError(t, w.WriteFile("notes.md", []byte("y"), 0o644))
			w.Close()
		}
	})

	t.Run("R15a-3", func(t *testing.T) {
		for _, xdg := range []bool{false, true} {
			home, ws := newHome(t)
			write(t, filepath.Join(ws, "git/config"))
			require.NoError(t, os.MkdirAll(filepath.Join(home, "cfg/git"), 0o755))
			require.NoError(t, os.Symlink("../../dotfiles/git/config", filepath.Join(home, "cfg/git/config")))
			if xdg {
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
			}
			w, err := New(ws, WithProtectedAgentConfig())
			require.NoError(t, err)
			err = w.WriteFile("git/config", []byte("y"), 0o644)
			if xdg {
				assert.ErrorIs(t, err, ErrReadOnly)
			} else {
				assert.NoError(t, err, "control: ~/cfg is not the configuration directory")
			}
			w.Close()
		}
	})

	t.Run("R15a-11", func(t *testing.T) {
		for _, linked := range []bool{false, true} {
			home, ws := newHome(t)
			elsewhere, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			write(t, filepath.Join(ws, "claude/hooks/pre.sh"))
			require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "claude/hooks"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(ws, "claude/hooks/pre.sh"), filepath.Join(elsewhere, "claude/hooks/pre.sh")))
			if linked {
				require.NoError(t, os.Symlink(filepath.Join(elsewhere, "claude"), filepath.Join(home, ".claude")))
			}
			w, err := New(ws, WithProtectedAgentConfig())
			require.NoError(t, err)
			err = w.WriteFile("claude/hooks/pre.sh", []byte("y"), 0o644)
			if linked {
				assert.ErrorIs(t, err, ErrReadOnly)
			} else {
				assert.NoError(t, err, "control: no HOME name leads there")
			}
			w.Close()
		}
	})
}

// TestAgentConfigHomeNamesRound15 (red team round 15, R15a-7, R15a-16):
// with HOME as the workspace, the start-up and agent files the round
// found writable are refused under WithProtectedAgentConfig and written
// without it (control); ~/bin is HOME's only: a project's bin/ stays
// writable. Red before: every name was written.
func TestAgentConfigHomeNamesRound15(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	names := []string{".config/tmux/tmux.conf", ".local/lib/python3.11/site-packages/x.pth",
		".ipython/profile_default/startup/00.py", ".config/starship.toml", ".config/wezterm/wezterm.lua",
		".config/i3/config", ".config/hypr/hyprland.conf", ".config/plasma-workspace/env/x.sh", ".screenrc",
		".lldbinit", ".muttrc", "bin/git", ".claude.json", ".config/amp/settings.json",
		".config/Cursor/User/settings.json", ".config/VSCodium/User/settings.json"}
	for _, protect := range []bool{false, true} {
		var opts []Option
		if protect {
			opts = append(opts, WithProtectedAgentConfig())
		}
		w, err := New(home, opts...)
		require.NoError(t, err)
		for _, n := range names {
			require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(n)), 0o755))
			err := w.WriteFile(n, []byte("x"), 0o644)
			if protect {
				assert.ErrorIs(t, err, ErrReadOnly, n)
			} else {
				assert.NoError(t, err, "control: %s", n)
			}
		}
		w.Close()
	}
	proj := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "bin"), 0o755))
	w, err := New(proj, WithProtectedAgentConfig())
	require.NoError(t, err)
	defer w.Close()
	assert.NoError(t, w.WriteFile("bin/run", []byte("x"), 0o755), "a project's bin/ is the project's")
}

// TestAgentConfigLinkChainRound15 (red team round 15, R15a-19): every
// link on the way from a protected name to its target is protected, not
// only the target (.envrc -> env/a -> real.sh; .git/hooks/pre-commit ->
// ../../hooks/pc -> ../impl/pc.sh): re-pointed, env/a or hooks/pc would
// lead the name to the command's file. Control: a link no protected name
// goes through (other -> env/b -> real.sh) is not. Red before: env/a and
// hooks/pc were not protected.
func TestAgentConfigLinkChainRound15(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"env", "impl", "hooks", ".git/hooks"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "real.sh"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "impl/pc.sh"), []byte("x"), 0o755))
	for l, t2 := range map[string]string{".envrc": "env/a", "env/a": "../real.sh", "other": "env/b", "env/b": "../real.sh",
		".git/hooks/pre-commit": "../../hooks/pc", "hooks/pc": "../impl/pc.sh"} {
		require.NoError(t, os.Symlink(t2, filepath.Join(root, l)))
	}
	w, err := New(root, WithProtectedAgentConfig())
	require.NoError(t, err)
	defer w.Close()
	got := w.AgentConfigProtected()
	for _, p := range []string{"env/a", "real.sh", "hooks/pc", "impl/pc.sh"} {
		assert.Contains(t, got, filepath.Join(root, p))
	}
	assert.NotContains(t, got, filepath.Join(root, "env/b"), "control: no protected name leads through it")
}

// TestAgentConfigGitfileLinkRound15 (red team round 15, R15a-21): the
// link on the way to the top repository's gitfile directory (gitdir:
// gitstore/sub.git, gitstore -> stores/v1) is protected; control: a link
// beside it (other -> stores/v1) is not. Red before: gitstore was not.
func TestAgentConfigGitfileLinkRound15(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "stores/v1/sub.git/hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "stores/v1/sub.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.Symlink("stores/v1", filepath.Join(root, "gitstore")))
	require.NoError(t, os.Symlink("stores/v1", filepath.Join(root, "other")))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: gitstore/sub.git\n"), 0o644))
	w, err := New(root, WithProtectedAgentConfig())
	require.NoError(t, err)
	defer w.Close()
	got := w.AgentConfigProtected()
	assert.Contains(t, got, filepath.Join(root, "gitstore"))
	assert.NotContains(t, got, filepath.Join(root, "other"), "control")
}

// TestRelocatedSecretsRound15 (red team round 15, R15a-23): credentials
// moved by their tools' environment variables (DOCKER_CONFIG, CARGO_HOME,
// KUBECONFIG's list, AWS_SHARED_CREDENTIALS_FILE, GNUPGHOME) are denied by
// WithDenySecrets where they are; control: the same files with the
// variables unset are readable (their names are no secret's), and a
// relative value that names no file denies nothing there. Red before: all five were readable.
func TestRelocatedSecretsRound15(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	files := map[string]string{
		"DOCKER_CONFIG":               "cfg/docker/config.json",
		"CARGO_HOME":                  "share/cargo/credentials.toml",
		"KUBECONFIG":                  "cfg/kube/main",
		"AWS_SHARED_CREDENTIALS_FILE": "cfg/aws/creds",
		"GNUPGHOME":                   "share/gnupg/private-keys-v1.d/A.key2",
	}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("SECRET"), 0o600))
	}
	for _, set := range []bool{false, true} {
		for env := range files {
			t.Setenv(env, "")
		}
		if set {
			t.Setenv("DOCKER_CONFIG", filepath.Join(root, "cfg/docker"))
			t.Setenv("CARGO_HOME", filepath.Join(root, "share/cargo"))
			t.Setenv("KUBECONFIG", "relative/x:"+filepath.Join(root, "cfg/kube/other")+":"+filepath.Join(root, "cfg/kube/main"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(root, "cfg/aws/creds"))
			t.Setenv("GNUPGHOME", filepath.Join(root, "share/gnupg"))
		}
		w, err := New(root, WithDenySecrets())
		require.NoError(t, err)
		for env, f := range files {
			_, err := w.ReadFile(f)
			if set {
				assert.ErrorIs(t, err, ErrDenied, env)
			} else {
				assert.NoError(t, err, "control: %s unset", env)
			}
		}
		w.Close()
	}
}

// TestRelocatedAgentConfigRound15 (red team round 15, R15a-22): tool
// configuration the environment moves into the workspace (a dotfiles
// repository: GIT_CONFIG_GLOBAL, CARGO_HOME, ZDOTDIR, NPM_CONFIG_USERCONFIG,
// GRADLE_USER_HOME, BASH_ENV) is protected there; control: the same files
// with the variables unset are the workspace's own. Red before: all
// written.
func TestRelocatedAgentConfigRound15(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	files := []string{"gitconfig", "cargo/config.toml", "zsh/.zshrc", "npm/npmrc", "gradle/init.d/x.gradle", "bash_env.sh"}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644))
	}
	envs := map[string]string{"GIT_CONFIG_GLOBAL": "gitconfig", "CARGO_HOME": "cargo", "ZDOTDIR": "zsh",
		"NPM_CONFIG_USERCONFIG": "npm/npmrc", "GRADLE_USER_HOME": "gradle", "BASH_ENV": "bash_env.sh"}
	for _, set := range []bool{false, true} {
		for e, rel := range envs {
			v := ""
			if set {
				v = filepath.Join(ws, rel)
			}
			t.Setenv(e, v)
		}
		w, err := New(ws, WithProtectedAgentConfig())
		require.NoError(t, err)
		for _, f := range files {
			err := w.WriteFile(f, []byte("y"), 0o644)
			if set {
				assert.ErrorIs(t, err, ErrReadOnly, f)
			} else {
				assert.NoError(t, err, "control: %s", f)
			}
		}
		w.Close()
	}
}

// TestRelocatedThroughLinkRound16 (red team round 16, R16-1): a variable
// whose value goes through a symbolic link (HOME on another disk,
// /home/u -> /data/home/u, with DOCKER_CONFIG=$HOME/.config/docker) names
// the credentials by a path the patterns, matching real paths, never
// met: denied now by the resolved form too. Control: the value by its
// real path was denied before and still is. Red before: the linked form
// read the file.
func TestRelocatedThroughLinkRound16(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(base, "data/home")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "cfg/docker"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "cfg/docker/config.json"), []byte("SECRET"), 0o600))
	require.NoError(t, os.Symlink(real, filepath.Join(base, "home")))
	for _, dir := range []string{filepath.Join(base, "home/cfg/docker"), filepath.Join(real, "cfg/docker")} {
		t.Setenv("DOCKER_CONFIG", dir)
		w, err := New(real, WithDenySecrets())
		require.NoError(t, err)
		_, err = w.ReadFile("cfg/docker/config.json")
		assert.ErrorIs(t, err, ErrDenied, dir)
		w.Close()
	}
}

// TestAgentConfigRound16 (red team round 16):
//   - R16-8: with ~/.config granted read-write, its links into the
//     dotfiles workspace (~/.config/git/config -> dotfiles/git/config) are
//     still followed (a skip of writable roots left the target writable);
//     control: no link.
//   - R16-9: with HOME as the workspace, a $PATH directory inside it
//     (~/.mytool/bin) is protected; control: the same directory not on
//     PATH. A PATH entry above the workspace does not freeze it.
//   - R16-7: a top-level gitfile whose gitdir goes through a link and
//     "..": git resolves it physically (lnk/../stores/sub.git with lnk ->
//     deep/d1 is deep/stores/sub.git), so does the protection.
//
// Red before: each row but the controls was writable.
func TestAgentConfigRound16(t *testing.T) {
	t.Run("R16-8", func(t *testing.T) {
		for _, linked := range []bool{false, true} {
			home, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", "")
			ws := filepath.Join(home, "dotfiles")
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "git"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "git/config"), []byte("x"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".config/git"), 0o755))
			if linked {
				require.NoError(t, os.Symlink("../../dotfiles/git/config", filepath.Join(home, ".config/git/config")))
			}
			w, err := New(ws, WithProtectedAgentConfig(), WithAllowed(filepath.Join(home, ".config"), ReadWrite))
			require.NoError(t, err)
			err = w.WriteFile("git/config", []byte("y"), 0o644)
			if linked {
				assert.ErrorIs(t, err, ErrReadOnly)
			} else {
				assert.NoError(t, err, "control: no link")
			}
			w.Close()
		}
	})
	t.Run("R16-9", func(t *testing.T) {
		home, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		t.Setenv("HOME", home)
		// The toolchains' own directories, whatever PATH is.
		for _, d := range []string{".cargo/bin", ".pyenv/shims", "go/bin"} {
			require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
			t.Setenv("PATH", "/usr/bin:/bin")
			w, err := New(home, WithProtectedAgentConfig())
			require.NoError(t, err)
			assert.ErrorIs(t, w.WriteFile(filepath.Join(d, "x"), []byte("x"), 0o755), ErrReadOnly, d)
			w.Close()
		}
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".mytool/bin"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(home, "work/proj"), 0o755))
		for _, onPath := range []bool{false, true} {
			path := "/usr/bin:/bin"
			if onPath {
				path = filepath.Join(home, ".mytool/bin") + ":" + filepath.Join(home, "work") + ":" + path
			}
			t.Setenv("PATH", path)
			w, err := New(home, WithProtectedAgentConfig())
			require.NoError(t, err)
			err = w.WriteFile(".mytool/bin/git", []byte("x"), 0o755)
			if onPath {
				assert.ErrorIs(t, err, ErrReadOnly)
			} else {
				assert.NoError(t, err, "control: not on PATH")
			}
			w.Close()
			p, err := New(filepath.Join(home, "work/proj"), WithProtectedAgentConfig())
			require.NoError(t, err)
			assert.NoError(t, p.WriteFile("main.go", []byte("x"), 0o644), "a PATH entry above the workspace does not freeze it")
			p.Close()
		}
	})
	t.Run("R16-7", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		root, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "deep/d1"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "deep/stores/sub.git/hooks"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "deep/stores/sub.git/config"), []byte("[core]\n"), 0o644))
		require.NoError(t, os.Symlink("deep/d1", filepath.Join(root, "lnk")))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: lnk/../stores/sub.git\n"), 0o644))
		w, err := New(root, WithProtectedAgentConfig())
		require.NoError(t, err)
		defer w.Close()
		assert.ErrorIs(t, w.WriteFile("deep/stores/sub.git/config", []byte("y"), 0o644), ErrReadOnly)
		assert.Contains(t, w.AgentConfigProtected(), filepath.Join(root, "lnk"), "the link on the way")
	})
}

// TestNamesRound16 (red team round 16, R16-9, R16-10): with HOME as the
// workspace, more start-up files are protected under
// WithProtectedAgentConfig and more agents' and tools' tokens denied by
// WithDenySecrets; controls: the same names without the option, and a
// file beside each token. Red before: every name was writable or
// readable.
func TestNamesRound16(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	startup := []string{".config/kitty/kitty.conf", ".config/alacritty/alacritty.toml", ".config/ghostty/config",
		".config/zellij/config.kdl", ".config/gdb/gdbinit", ".bash_completion", ".local/share/bash-completion/completions/git",
		".psqlrc", ".sqliterc", ".julia/config/startup.jl", ".bunfig.toml", ".tmux/plugins/x/x.tmux",
		".local/share/nvim/lazy/p/plugin/x.lua", ".config/ranger/rc.conf", ".config/lf/lfrc"}
	for _, protect := range []bool{false, true} {
		var opts []Option
		if protect {
			opts = append(opts, WithProtectedAgentConfig())
		}
		w, err := New(home, opts...)
		require.NoError(t, err)
		assertWrites(t, w, startup, protect)
		w.Close()
	}
	tokens := []string{".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot/apps.json",
		".config/sops/age/keys.txt", ".config/containers/auth.json", ".cache/huggingface/token",
		".config/glab-cli/config.yml", ".config/hub", ".m2/settings.xml"}
	for _, n := range tokens {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, n), []byte("SECRET"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(home, filepath.Dir(n), "beside.txt"), []byte("x"), 0o644))
	}
	w, err := New(home, WithDenySecrets())
	require.NoError(t, err)
	defer w.Close()
	for _, n := range tokens {
		_, err := w.ReadFile(n)
		assert.ErrorIs(t, err, ErrDenied, n)
		if filepath.Dir(n) != ".config/github-copilot" {
			_, err = w.ReadFile(filepath.Join(filepath.Dir(n), "beside.txt"))
			assert.NoError(t, err, "control: beside %s", n)
		}
	}
}

// TestPatternSpellingsRound16 (red team round 16, R16-17, R16-15): deny
// and read-only patterns written as a shell or a policy file leaves them
// (./x, sub/../x, config/./x, ~/x, an absolute path with "." or "..",
// ../sibling for --read-only, an absolute path through a symbolic link)
// mean the file they name; control: the plain spelling, which already
// worked, and a file beside. Red before: every odd spelling matched
// nothing.
func TestPatternSpellingsRound16(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(base, "realhome")
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.Symlink(home, filepath.Join(base, "home")))
	t.Setenv("HOME", filepath.Join(base, "home"))
	root := filepath.Join(home, "proj")
	for _, f := range []string{"config/prod.key.txt", "config/other.txt", "deploy/run.sh", "sub/x"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("S"), 0o644))
	}
	for _, spelling := range []string{"config/prod.key.txt", "./config/prod.key.txt", "config/./prod.key.txt",
		"sub/../config/prod.key.txt", "~/proj/config/prod.key.txt", root + "/./config/prod.key.txt",
		filepath.Join(base, "home/proj/config/prod.key.txt")} {
		w, err := New(root, WithDeny(spelling))
		require.NoError(t, err, spelling)
		_, err = w.ReadFile("config/prod.key.txt")
		assert.ErrorIs(t, err, ErrDenied, spelling)
		_, err = w.ReadFile("config/other.txt")
		assert.NoError(t, err, "control, beside: %s", spelling)
		w.Close()
	}
	for _, spelling := range []string{"deploy/", "./deploy/", "sub/../deploy/"} {
		w, err := New(root, WithReadOnly(spelling))
		require.NoError(t, err, spelling)
		assert.ErrorIs(t, w.WriteFile("deploy/run.sh", []byte("x"), 0o755), ErrReadOnly, spelling)
		assert.NoError(t, w.WriteFile("sub/x", []byte("x"), 0o644), "control: %s", spelling)
		w.Close()
	}
}

// TestGitReferencesPhysicalRound16 (red team round 16, R16-12): git
// resolves core.hooksPath = lnk/../githooks and include.path =
// ../lnk/../inc.cfg physically (lnk -> deep/d1: deep/githooks,
// deep/inc.cfg); the references name those, and the lexical forms too.
// Red before: only the lexical ones (githooks/, inc.cfg at the top).
func TestGitReferencesPhysicalRound16(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "deep/d1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.Symlink("deep/d1", filepath.Join(root, "lnk")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "deep/inc.cfg"), []byte("[core]\n"), 0o644))
	cfg := filepath.Join(root, ".git/config")
	require.NoError(t, os.WriteFile(cfg, []byte("[core]\n\thooksPath = lnk/../githooks\n[include]\n\tpath = ../lnk/../inc.cfg\n"), 0o644))
	refs := GitConfigReferences([]string{cfg}, root, "")
	assert.Contains(t, refs, filepath.Join(root, "deep/githooks"), "physical hooksPath")
	assert.Contains(t, refs, filepath.Join(root, "deep/inc.cfg"), "physical include")
	assert.Contains(t, refs, filepath.Join(root, "githooks"), "the lexical form too")
}

// TestAgentDirsMovedRound16 (red team round 16, R16-13): CLAUDE_CONFIG_DIR
// and CODEX_HOME move the agents' directories: their tokens are denied by
// WithDenySecrets and their settings protected by
// WithProtectedAgentConfig where they are; control: the same files with
// the variables unset. Red before: read and written.
func TestAgentDirsMovedRound16(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, f := range []string{"cl/.credentials.json", "cl/settings.json", "cx/auth.json", "cx/config.toml"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("S"), 0o600))
	}
	for _, set := range []bool{false, true} {
		cl, cx := "", ""
		if set {
			cl, cx = filepath.Join(root, "cl"), filepath.Join(root, "cx")
		}
		t.Setenv("CLAUDE_CONFIG_DIR", cl)
		t.Setenv("CODEX_HOME", cx)
		w, err := New(root, WithDenySecrets(), WithProtectedAgentConfig())
		require.NoError(t, err)
		for _, f := range []string{"cl/.credentials.json", "cx/auth.json"} {
			_, err := w.ReadFile(f)
			if set {
				assert.ErrorIs(t, err, ErrDenied, f)
			} else {
				assert.NoError(t, err, "control: %s", f)
			}
		}
		for _, f := range []string{"cl/settings.json", "cx/config.toml"} {
			err := w.WriteFile(f, []byte("x"), 0o600)
			if set {
				assert.ErrorIs(t, err, ErrReadOnly, f)
			} else {
				assert.NoError(t, err, "control: %s", f)
			}
		}
		w.Close()
	}
}

// TestHomeDirUnsetRound16 (red team round 16, R16-16): with HOME unset
// (or relative) HomeDir falls back to the user database, so HOME's link
// scans are not skipped; control: with HOME set, HOME wins.
func TestHomeDirUnsetRound16(t *testing.T) {
	u, err := user.Current()
	require.NoError(t, err)
	for _, v := range []string{"", "relative/home"} {
		t.Setenv("HOME", v)
		assert.Equal(t, u.HomeDir, HomeDir(), "HOME=%q", v)
	}
	d := t.TempDir()
	t.Setenv("HOME", d)
	assert.Equal(t, d, HomeDir(), "control")
}
