package jail

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertWrites writes each of names (relative to w's root, its directory
// made first) through w and asserts ErrReadOnly when refused, success
// (the control) otherwise.
func assertWrites(t *testing.T, w *Workspace, names []string, refused bool) {
	t.Helper()
	for _, n := range names {
		require.NoError(t, os.MkdirAll(filepath.Join(w.Root(), filepath.Dir(n)), 0o755))
		err := w.WriteFile(n, []byte("x"), 0o644)
		if refused {
			assert.ErrorIs(t, err, ErrReadOnly, n)
		} else {
			assert.NoError(t, err, "control: %s", n)
		}
	}
}

// TestSecretNamesRound17 (red team round 17, R17a-3, R17a-9, R17a-11):
// more tools' credentials at their default places, moved by their
// variables, and HOME-only names are denied by WithDenySecrets; controls:
// a file beside each is readable, and a project's own .yarnrc.yml and
// .bundle/config (its tools' configuration) are not denied. Red before:
// every name was read.
func TestSecretNamesRound17(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	moved := map[string]string{
		"HF_HOME": "data/hf", "XDG_CACHE_HOME": "data/cache", "PULUMI_HOME": "data/pulumi",
		"GLAB_CONFIG_DIR": "data/glab", "COMPOSER_HOME": "data/composer", "GRADLE_USER_HOME": "data/gradle",
	}
	for env, d := range moved {
		t.Setenv(env, filepath.Join(home, d))
	}
	for _, env := range []string{"ANSIBLE_VAULT_PASSWORD_FILE", "TALOSCONFIG", "PIP_CONFIG_FILE", "DATABRICKS_CONFIG_FILE", "NGROK_CONFIG"} {
		t.Setenv(env, filepath.Join(home, "data/files", env))
	}
	tokens := []string{".config/git/credentials", ".terraformrc", "infra/prod.tfvars", ".config/composer/auth.json",
		".config/stripe/config.toml", ".config/ngrok/ngrok.yml", ".pulumi/credentials.json", ".fly/config.yml",
		".config/doctl/config.yaml", ".gradle/gradle.properties", ".databrickscfg", ".config/pip/pip.conf",
		".mc/config.json", "app/token.pickle", "app/client_secret_123.json", "web/.htpasswd",
		".microsoft/usersecrets/abc/secrets.json", ".dockercfg",
		".mozilla/firefox/x.default/logins.json", ".mozilla/firefox/x.default/key4.db",
		".config/google-chrome/Default/Login Data", ".config/chromium/Default/Network/Cookies",
		".config/google-chrome/Default/Login Data For Account", ".config/microsoft-edge/Profile 1/Cookies",
		"snap/chromium/common/chromium/Default/Login Data", ".var/app/com.google.Chrome/config/google-chrome/Default/Network/Cookies",
		".config/vivaldi/Default/Login Data", ".config/opera/Default/Cookies",
		// Round 18 (R18a-19, R18a-3).
		".config/Slack/Cookies", ".config/Slack/Network/Cookies", ".config/Element/Local Storage/leveldb/x.ldb",
		".config/Signal/config.json", ".local/share/TelegramDesktop/tdata/key_datas",
		".local/state/nvim/swap/%h%.npmrc.swp", ".vim/swap/x.swp", ".emacs.d/backups/!h!.env~",
		// Round 19 (R19-4).
		".var/app/com.discordapp.Discord/config/discord/Local Storage/leveldb/x.ldb",
		".var/app/org.signal.Signal/config/Signal/config.json", ".config/google-chrome/Default/Web Data",
		".config/google-chrome/Default/Local Storage/leveldb/y.ldb", ".thunderbird/abc.default/logins.json",
		".purple/accounts.xml", ".msmtprc", ".subversion/auth/svn.simple/abc", ".dbt/profiles.yml",
		".config/.wrangler/config/default.toml", ".cursor/mcp.json",
		".local/share/keyrings/login.keyring", ".config/discord/Local Storage/leveldb/000.ldb",
		".config/fish/fish_variables", ".claude.json", ".local/share/opencode/auth.json",
		".local/share/amp/secrets.json", ".config/goose/secrets.yaml", ".qwen/oauth_creds.json",
		".continue/config.yaml", ".aider.conf.yml", ".envrc", ".env-backup", ".envs/.production/.django",
		".yarnrc.yml", ".bundle/config",
		"data/hf/token", "data/cache/huggingface/token", "data/pulumi/credentials.json", "data/glab/config.yml",
		"data/composer/auth.json", "data/gradle/gradle.properties", "data/files/ANSIBLE_VAULT_PASSWORD_FILE",
		"data/files/TALOSCONFIG", "data/files/PIP_CONFIG_FILE", "data/files/DATABRICKS_CONFIG_FILE", "data/files/NGROK_CONFIG"}
	project := []string{"proj/.yarnrc.yml", "proj/.bundle/config", ".env.sample"}
	for _, n := range append(tokens, project...) {
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
		if d := filepath.Dir(n); !slices.Contains([]string{".local/share/keyrings", ".microsoft/usersecrets/abc", ".envs/.production",
			".config/discord/Local Storage/leveldb", ".config/Element/Local Storage/leveldb", ".local/share/TelegramDesktop/tdata",
			".local/state/nvim/swap", ".vim/swap", ".emacs.d/backups",
			".var/app/com.discordapp.Discord/config/discord/Local Storage/leveldb", ".config/google-chrome/Default/Local Storage/leveldb",
			".subversion/auth/svn.simple"}, d) {
			_, err = w.ReadFile(filepath.Join(d, "beside.txt"))
			assert.NoError(t, err, "control: beside %s", n)
		}
	}
	for _, n := range project {
		_, err := w.ReadFile(n)
		assert.NoError(t, err, "control: a project's %s", n)
	}
}

// TestEditorOriginals: the copy names editorOriginals knows (rounds 17
// and 18: R17a-9, R18a-3), and names it must not take for copies.
func TestEditorOriginals(t *testing.T) {
	for in, want := range map[string][]string{
		"/w/.env~": {"/w/.env"}, "/w/#.env#": {"/w/.env"}, "/w/.env.swp": {"/w/env", "/w/.env"},
		"/w/..env.swp": {"/w/.env", "/w/..env"}, "/w/.npmrc.swp": {"/w/npmrc", "/w/.npmrc"},
		"/w/.prod.key.swo": {"/w/prod.key", "/w/.prod.key"}, "/w/a.key.~12~": {"/w/a.key"}, "/w/a.key.bak": {"/w/a.key"},
		"/w/.npmrc.orig": {"/w/.npmrc"}, "/w/x.old": {"/w/x"}, "/w/x.save": {"/w/x"}, "/w/x.backup": {"/w/x"},
		"/w/.server.key.un~": {"/w/server.key"}, "/w/..npmrc.un~": {"/w/.npmrc"}, "/w/x.save.1": {"/w/x"},
		"/w/.npmrc.BAK": {"/w/.npmrc"}, "/w/.npmrc.bak.12": {"/w/.npmrc"}, "/w/.npmrc.rej": {"/w/.npmrc"},
		"/w/.env___jb_old___": {"/w/.env"}, "/w/.env___jb_tmp___": {"/w/.env"}, "/w/.env.kate-swp": {"/w/env"},
		"/w/~": nil, "/w/#": nil, "/w/##": nil, "/w/.bak": nil, "/w/.swp": nil, "/w/.x.swq": nil, "/w/plain": nil,
		"/w/..bak": nil, "/w/a.~~": {"/w/a.~"}, "/w/v1.2": nil, "/w/file.1": nil,
	} {
		assert.Equal(t, want, editorOriginals(in), in)
	}
}

// TestStartupNamesRound17 (red team round 17, R17a-5, R17a-12): with HOME
// as the workspace, more start-up files and the interpreters that shims
// run are protected by WithProtectedAgentConfig, and in a project the
// editor files beside protected ones; controls: the same names without
// the option. Red before: every name was writable.
func TestStartupNamesRound17(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	names := []string{".local/share/systemd/user/evil.service", ".local/share/dbus-1/services/x.service",
		".local/share/applications/x.desktop", ".config/mimeapps.list", ".config/autostart-scripts/x.sh",
		".xsession", ".Xclients", ".config/nushell/config.nu", ".kshrc", ".tcshrc", ".zshrc.d/x.zsh", ".zlogout",
		".local/share/fish/vendor_conf.d/x.fish", ".emacs", ".config/emacs/init.el", ".config/helix/config.toml",
		".pyenv/versions/3.12.0/bin/python3.12", ".rustup/toolchains/stable/bin/cargo", ".nvm/nvm.sh",
		".asdf/shims/node", ".sdkman/candidates/java/current/bin/java", ".sbt/1.0/global.sbt",
		".config/gh/config.yml", ".curlrc", ".terraformrc", ".config/containers/containers.conf",
		"proj/.gvimrc", "proj/.theia/tasks.json", "proj/.vim/coc-settings.json", "proj/.opencode.json",
		// Round 18 (R18a-7).
		".config/sway/config", ".config/plasma-workspace/shutdown/x.sh", ".docker/cli-plugins/docker-compose",
		".gradle/gradle.properties", ".config/user-tmpfiles.d/x.conf", ".local/share/gnome-shell/extensions/x/extension.js",
		".bazelrc", ".jupyter/jupyter_notebook_config.py", ".mozilla/native-messaging-hosts/x.json",
		// Round 19 (R19-7).
		".lessfilter", ".direnvrc", ".config/user-dirs.dirs", ".wgetrc", ".config/mc/ini",
		// Round 20 (R20b-2, R20b-8, R20b-4).
		".lesskey", ".config/lesskey", ".selected_editor", ".Xresources", ".ripgreprc",
		".cargo/env", ".git-prompt.sh", ".oh-my-zsh/oh-my-zsh.sh", ".oh-my-zsh/plugins/git/git.plugin.zsh", ".p10k.zsh",
		"miniconda3/etc/profile.d/conda.sh", "google-cloud-sdk/path.bash.inc", ".vim/plugged/x/plugin/x.vim",
		".local/share/pipx/venvs/black/lib/python3.12/site-packages/evil.pth", ".local/share/uv/tools/ruff/pyvenv.cfg",
		".wezterm.lua", ".config/irb/irbrc", ".pylintrc",
		// Round 22 (R22b-3): Continue's workspace rc files, Codebuff's
		// startupProcesses.
		"proj/.continuerc.json", "proj/x.continuerc.json", "proj/codebuff.json",
		// A glob's last name, nested: mise.*.toml, .lintstagedrc.*
		// (agentNested took every last name for a literal one).
		"proj/mise.local.toml", "proj/.lintstagedrc.json", "proj/lint-staged.config.js",
		// Round 27 (R27e-4).
		".Renviron", "proj/.Renviron", ".R/Makevars", ".config/pipewire/pipewire.conf.d/x.conf",
		".config/wireplumber/main.lua.d/x.lua", ".config/pulse/default.pa", ".ansible.cfg",
		".ansible/plugins/callback/x.py", ".local/share/jupyter/kernels/x/kernel.json", ".npm-init.js",
		".forward", ".config/uv/uv.toml", ".config/pypoetry/config.toml",
		// Round 30 (R30c-1): vim's exrc reads .vimrc, then _vimrc, then
		// .exrc of the directory it starts in (gvim .gvimrc, _gvimrc).
		"proj/.vimrc", "proj/deep/er/.vimrc", "proj/_vimrc", "proj/_gvimrc", "proj/_exrc",
		// (R30c-4): perl -d reads ./.perldb; irb ./irb.rc, ./_irbrc.
		"proj/.perldb", "proj/sub/.perldb", "proj/irb.rc", "proj/_irbrc",
		// Round 31 (R31c-1 to R31c-4): lazygit's repository files,
		// pnpm's workspace settings (pnpmfile, nodeOptions), the
		// yarnPath target and plugins of Yarn Berry, irb's $irbrc.
		"proj/.lazygit.yml", "proj/sub/.lazygit.yml", "proj/.git/lazygit.yml", "proj/sub/repo/.git/lazygit.yml",
		"proj/pnpm-workspace.yaml", "proj/pkg/pnpm-workspace.yaml", "proj/.yarn/releases/yarn-4.1.0.cjs",
		"proj/.yarn/plugins/@yarnpkg/plugin-x.cjs", "proj/$irbrc", "proj/sub/$irbrc",
		"proj/.golangci.yml", "proj/sub/.golangci.yaml", "proj/.golangci.toml", "proj/.golangci.json",
		// Round 31 (R31c-6 to R31c-11, R31c-13 to R31c-16, R31b-5).
		".config/husky/init.sh", ".huskyrc.sh", ".config/vite-plus/hooks-init.sh", ".vim/vimrc", ".vim/after/plugin/x.vim",
		".vim/ftdetect/x.vim", ".config/vim/vimrc", ".pyenv/pyenv.d/exec/x.bash", ".pyenv/shims/python", ".rbenv/rbenv.d/exec/x.bash",
		".nodenv/shims/node", ".zshrc.zwc", ".zshenv.zwc", ".zcompdump", ".zcompdump-host-5.9", "proj/zsh/.zshrc.zwc",
		".gdbearlyinit", ".less", ".emacs.elc", ".emacs.el.gz", ".doom.d/init.el", ".spacemacs", ".config/go/env",
		".node_modules/x/index.js", ".node_libraries/x.js", ".config/lxsession/LXDE/autostart", ".kde/Autostart/x.sh",
		".kde4/Autostart/x.sh", ".config/polybar/config.ini", ".config/dunst/dunstrc",
		".config/xfce4/xfconf/xfce-perchannel-xml/xfce4-keyboard-shortcuts.xml", ".config/k9s/plugins.yaml",
		// R31c-17.
		"proj/.iex.exs", "proj/sub/.ocamlinit", "proj/.psysh.php", "proj/bunfig.toml", "proj/tools/bazel", "proj/.bazeliskrc",
		"proj/.prototools", "proj/.yarn/sdks/typescript/lib/tsserver.js", "proj/sub/.pylintrc", "proj/pylintrc", "proj/mypy.ini",
		"proj/sub/.gdbinit", "proj/.lldbinit", ".config/opencode/plugin/x.js", ".lmstudio/mcp.json", ".vscode-oss/extensions/x/y.js",
		".config/pnpm/rc", ".cpan/CPAN/MyConfig.pm", ".mongoshrc.js", ".lldbinit-lldb", ".gitk", ".local/share/mc/bashrc",
		".cmake/packages/X/1", ".config/ccache/ccache.conf", ".config/mypy/config", ".gem/ruby/3.1.0/gems/x/lib/x.rb",
		"R/x86_64-pc-linux-gnu-library/4.2/x/R/x", ".k5login", "proj/.corepack.env", "proj/sub/.corepack.env"}
	for _, protect := range []bool{false, true} {
		var opts []Option
		if protect {
			opts = append(opts, WithProtectedAgentConfig())
		}
		w, err := New(home, opts...)
		require.NoError(t, err)
		assertWrites(t, w, names, protect)
		w.Close()
	}
}

// TestXDGDataHomeSecretsRound18 (red team round 18, R18a-5): with
// XDG_DATA_HOME elsewhere, the secrets preset's .local/share/ names are
// denied there, and GOOGLE_APPLICATION_CREDENTIALS' file (relative too);
// controls: a file beside each, and the variables unset. Red before: all
// four read.
func TestXDGDataHomeSecretsRound18(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Chdir(home)
	files := []string{"data/keyrings/login.keyring", "data/opencode/auth.json", "data/amp/secrets.json", "adc.json"}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte("SECRET"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(home, filepath.Dir(f), "beside.txt"), []byte("x"), 0o644))
	}
	for _, set := range []bool{false, true} {
		data, adc := "", ""
		if set {
			data, adc = filepath.Join(home, "data"), "./adc.json"
		}
		t.Setenv("XDG_DATA_HOME", data)
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", adc)
		w, err := New(home, WithDenySecrets())
		require.NoError(t, err)
		for _, f := range files {
			_, err := w.ReadFile(f)
			if set {
				assert.ErrorIs(t, err, ErrDenied, f)
			} else {
				assert.NoError(t, err, "control: unset, %s", f)
			}
			if filepath.Dir(f) != "data/keyrings" {
				_, err = w.ReadFile(filepath.Join(filepath.Dir(f), "beside.txt"))
				assert.NoError(t, err, "control: beside %s", f)
			}
		}
		w.Close()
	}
}

// TestXDGDataHomeStartupRound18 (red team round 18, R18a-8): with HOME
// as the workspace and XDG_DATA_HOME elsewhere in it, HOME's
// .local/share/ start-up names are protected there too; control: the
// same files with XDG_DATA_HOME unset are the workspace's own. Red
// before: written.
func TestXDGDataHomeStartupRound18(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	names := []string{".xdg/data/systemd/user/x.service", ".xdg/data/dbus-1/services/x.service",
		".xdg/data/applications/x.desktop", ".xdg/data/fish/vendor_conf.d/x.fish"}
	for _, set := range []bool{false, true} {
		v := ""
		if set {
			v = filepath.Join(home, ".xdg/data")
		}
		t.Setenv("XDG_DATA_HOME", v)
		w, err := New(home, WithProtectedAgentConfig())
		require.NoError(t, err)
		assertWrites(t, w, names, set)
		w.Close()
	}
}

// TestRelativePathEntryRound18 (red team round 18, R18a-17): a relative
// $PATH entry (.git/safe/../../bin, for repositories marked trusted) is
// protected where it leads in a workspace inside HOME; controls: without
// the entry, or in a repository without .git/safe (the kernel cannot
// follow it), bin/ is the project's. Red before: bin/git was written.
func TestRelativePathEntryRound18(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/safe"), 0o755))
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		entry   string
		trusted bool
		nobin   bool
	}{{"", true, false}, {".git/safe/../../bin", false, false}, {".git/safe/../../bin", true, false}, {".git/safe/../../bin", true, true}} {
		os.Remove(filepath.Join(ws, ".git/safe"))
		os.RemoveAll(filepath.Join(ws, "bin"))
		if !c.nobin {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "bin"), 0o755))
		}
		if c.trusted {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/safe"), 0o755))
		}
		t.Setenv("PATH", c.entry+":/usr/bin:/bin")
		w, err := New(ws, WithProtectedAgentConfig())
		require.NoError(t, err)
		if c.nobin { // the entry does not resolve yet: bin/ is the name the command could make (R19-3)
			err = w.Mkdir("bin", 0o755)
		} else {
			err = w.WriteFile("bin/git", []byte("x"), 0o755)
		}
		if c.entry != "" && c.trusted {
			assert.ErrorIs(t, err, ErrReadOnly)
		} else {
			assert.NoError(t, err, "control: no such PATH entry, or one the kernel cannot follow (%+v)", c)
		}
		w.Close()
	}
}

// TestXDGStateHomeSecretsRound19 (red team round 19, the XDG addendum of
// R19-4): with XDG_STATE_HOME elsewhere, Neovim's swap and undo files
// (Neovim 0.8 and later keeps them under $XDG_STATE_HOME/nvim) are
// denied there as under ~/.local/state; controls: a file beside them,
// and the variable unset. Red before: both read.
func TestXDGStateHomeSecretsRound19(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	files := []string{"xdgstate/nvim/swap/%home%ws%app.yml.swp", "xdgstate/nvim/undo/%home%ws%app.yml"}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte("API_KEY=SECRET"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, "xdgstate/nvim/beside.txt"), []byte("x"), 0o644))
	for _, set := range []bool{false, true} {
		state := ""
		if set {
			state = filepath.Join(home, "xdgstate")
		}
		t.Setenv("XDG_STATE_HOME", state)
		w, err := New(home, WithDenySecrets())
		require.NoError(t, err)
		for _, f := range files {
			_, err := w.ReadFile(f)
			if set {
				assert.ErrorIs(t, err, ErrDenied, f)
			} else {
				assert.NoError(t, err, "control: unset, %s", f)
			}
		}
		_, err = w.ReadFile("xdgstate/nvim/beside.txt")
		assert.NoError(t, err, "control: beside")
		w.Close()
	}
}

// TestPathChainAndPythonPathRound20 (red team round 20): with HOME as the
// workspace under WithProtectedAgentConfig, the links on a PATH entry's
// way to its directory (Nix's ~/.nix-profile -> .local/state/nix/
// profiles/profile -> profile-1-link -> the store) are protected, not
// only the entry and its end (R20b-3: profile re-pointed, the user's
// next command ran the command's); and sitecustomize.py/usercustomize.py
// in a PYTHONPATH directory of the workspace (R20b-10). Controls: the
// same without the option; a plain module beside sitecustomize.py. Red
// before: the link and both names writable.
func TestPathChainAndPythonPathRound20(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	store, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	require.NoError(t, os.MkdirAll(filepath.Join(store, "env/bin"), 0o755))
	prof := filepath.Join(home, ".local/state/nix/profiles")
	require.NoError(t, os.MkdirAll(prof, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(store, "env"), filepath.Join(prof, "profile-1-link")))
	require.NoError(t, os.Symlink(filepath.Join(prof, "profile-1-link"), filepath.Join(prof, "profile")))
	require.NoError(t, os.Symlink(filepath.Join(prof, "profile"), filepath.Join(home, ".nix-profile")))
	require.NoError(t, os.MkdirAll(filepath.Join(home, "lib/py"), 0o755))
	t.Setenv("PATH", filepath.Join(home, ".nix-profile/bin")+":/usr/bin:/bin")
	t.Setenv("PYTHONPATH", filepath.Join(home, "lib/py"))
	for _, protect := range []bool{false, true} {
		var opts []Option
		if protect {
			opts = append(opts, WithProtectedAgentConfig())
		}
		w, err := New(home, opts...)
		require.NoError(t, err)
		for _, l := range []string{".local/state/nix/profiles/profile", ".local/state/nix/profiles/profile-1-link"} {
			err := w.Remove(l)
			if protect {
				assert.ErrorIs(t, err, ErrReadOnly, l)
			} else {
				assert.NoError(t, err, "control: %s", l)
				require.NoError(t, os.Symlink(map[string]string{
					".local/state/nix/profiles/profile":        filepath.Join(prof, "profile-1-link"),
					".local/state/nix/profiles/profile-1-link": filepath.Join(store, "env"),
				}[l], filepath.Join(home, l)))
			}
		}
		assertWrites(t, w, []string{"lib/py/sitecustomize.py", "lib/py/usercustomize.py"}, protect)
		// Their bytecode: sourceless and cached (red team round 31, R31c-12).
		assertWrites(t, w, []string{"lib/py/sitecustomize.pyc", "lib/py/__pycache__/sitecustomize.cpython-311.pyc"}, protect)
		assertWrites(t, w, []string{"lib/py/module.py"}, false)
		for _, n := range []string{"lib/py/sitecustomize.py", "lib/py/usercustomize.py", "lib/py/module.py", "lib/py/sitecustomize.pyc", "lib/py/__pycache__/sitecustomize.cpython-311.pyc"} {
			os.Remove(filepath.Join(home, n))
		}
		w.Close()
	}
}
