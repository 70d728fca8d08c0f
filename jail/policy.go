package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how an allowed root may be used. The workspace root itself is
// always ReadWrite.
type Mode uint8

const (
	// ReadOnly allows reading files and listing directories.
	ReadOnly Mode = iota + 1
	// ReadExec adds executing files (and mapping them executable) to
	// ReadOnly.
	ReadExec
	// ReadWrite allows everything: read, write, create, remove, rename,
	// execute.
	ReadWrite
)

// String returns "ro", "rox" or "rw", the names the CLI flags use.
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "ro"
	case ReadExec:
		return "rox"
	case ReadWrite:
		return "rw"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Allows reports whether a root of mode m permits access a.
func (m Mode) Allows(a Access) bool {
	switch a {
	case Read:
		return m >= ReadOnly
	case Write:
		return m == ReadWrite
	case Execute:
		return m == ReadExec || m == ReadWrite
	}
	return false
}

// Access is the kind of use Check is asked about.
type Access uint8

const (
	// Read: open for reading, stat, list.
	Read Access = iota + 1
	// Write: create, truncate, write, remove, rename, chmod, mkdir.
	Write
	// Execute: execve the file, or use it as a child's working directory
	// for a command.
	Execute
)

// String returns "read", "write" or "execute".
func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Execute:
		return "execute"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// AllowedRoot is one root of the policy: a canonical absolute directory
// (symlinks resolved when the Workspace was built) and its Mode.
type AllowedRoot struct {
	Path string
	Mode Mode
}

// Option configures a Workspace; pass them to New.
type Option func(*config) error

type config struct {
	allowed        []allowedSpec
	deny           []string
	presetDeny     []string // WithDenySecrets': matched before deny
	rejectAbsolute bool
	unrestricted   bool
	tracker        *ReadTracker
	noXDev         bool
	noHardlinked   bool
	readOnly       []string
	protectAgent   bool
	keyPatterns    []string
	keyHeaders     bool
}

type allowedSpec struct {
	path string
	mode Mode
}

// WithAllowed adds an extra root beyond the workspace, usable with mode.
// The path must be absolute and exist; it is canonicalised (symlinks
// resolved) by New. These are the extra sandbox roots (read-only,
// read-write) and allowed_paths of the agent-sandbox designs we follow. A path given several times keeps the widest mode.
func WithAllowed(path string, mode Mode) Option {
	return func(c *config) error {
		if mode < ReadOnly || mode > ReadWrite {
			return fmt.Errorf("jail: WithAllowed(%q): invalid mode %d", path, mode)
		}
		if !filepath.IsAbs(path) {
			return fmt.Errorf("jail: WithAllowed(%q): %w", path, ErrNotAbsolute)
		}
		c.allowed = append(c.allowed, allowedSpec{path, mode})
		return nil
	}
}

// WithDeny adds always-denied patterns in gitignore syntax (gitignore(5):
// ".env", "*.pem", ".git/", "secrets/**", "!keep.pem" to re-include). A
// pattern is matched against the canonical path relative to each root
// that contains it (a narrower root inside the workspace does not lift a
// pattern written for the workspace); a pattern starting with "/" is also
// matched against the absolute canonical path, so "/home/*/.ssh/**"
// works; a pattern of literal names that matches at any depth and begins
// with a hidden name (".aws/", "**/.config/gh/hosts.yml") is also matched
// against the root's own path and the path it was given by (a root inside
// ~/.aws, or given as ~/.aws -> dotfiles/aws, is denied whole), and
// against an entry's absolute path below a root named like one of its
// components (--ro ~/.config). Every reading can only deny more (red team
// rounds 11 and 12). As in git, a pattern that matches a
// directory denies everything below it, and what is below an excluded
// directory cannot be re-included. Directory-only patterns ("x/") are
// applied whether or not the entry is a directory (fail closed), and an
// empty component ("a//b") is read as "a/b" in a deny pattern (git's
// matches nothing) and makes a "!" re-include match nothing. New fails
// when a pattern is malformed (path.ErrBadPattern). Matching is checked
// against git check-ignore by FuzzDenyMatcher; these fail-closed readings
// are the only differences it accepts.
func WithDeny(patterns ...string) Option {
	return func(c *config) error {
		c.deny = append(c.deny, patterns...)
		return nil
	}
}

// RejectAbsolute makes every absolute path an error (ErrAbsolutePath),
// even one inside the workspace: the mode of workspace jails where agents
// must use relative paths.
func RejectAbsolute() Option {
	return func(c *config) error { c.rejectAbsolute = true; return nil }
}

// Unrestricted allows every path on the system except those matched by
// the deny patterns (an "unrestricted" agent policy that still honours
// the always-denied secrets). Paths outside the workspace are treated as
// ReadWrite. Use only for trusted callers.
func Unrestricted() Option {
	return func(c *config) error { c.unrestricted = true; return nil }
}

// WithReadTracker makes the Workspace record every file it reads in t and
// refuse to overwrite an existing file that t has not seen read
// (ErrNotRead) or that changed on disk since (ErrStale).
func WithReadTracker(t *ReadTracker) Option {
	return func(c *config) error { c.tracker = t; return nil }
}

// WithNoXDev makes every open also pass RESOLVE_NO_XDEV, so a lookup
// fails with EXDEV when it would cross a mount point (a bind mount inside
// the workspace cannot be used to reach another file system).
func WithNoXDev() Option {
	return func(c *config) error { c.noXDev = true; return nil }
}

// WithNoHardlinkedWrites makes writes to an existing regular file with
// more than one hard link fail with ErrHardlinked. A hard link made
// before the workspace was set up may alias a file outside it; neither a
// path check nor Landlock can see that.
func WithNoHardlinkedWrites() Option {
	return func(c *config) error { c.noHardlinked = true; return nil }
}

// WithReadOnly makes paths inside writable roots read-only: they can be
// read (and executed, where the root allows it) but not written,
// truncated, created, removed, renamed or chmod-ed, and a directory
// holding one cannot be renamed or removed as a whole. Each entry is an
// absolute path (canonicalised by New, which fails with an error
// wrapping fs.ErrNotExist when it does not exist) or a pattern in the
// syntax of WithDeny ("docs/", "*.lock", "/go.sum"), matched as deny
// patterns are: against the canonical path relative to each root that
// holds it, and what is below a matching directory is read-only too. Every
// Workspace operation, Check(p, Write) and Resolve's callers see it as
// ErrReadOnly; landlock.Compile carves the same paths out of the
// Landlock rules (Landlock ABI 1; before ABI 3 truncate(2) is not
// restricted for children).
func WithReadOnly(pathsOrPatterns ...string) Option {
	return func(c *config) error {
		c.readOnly = append(c.readOnly, pathsOrPatterns...)
		return nil
	}
}

// AgentConfigPaths are the entries of the workspace root that
// WithProtectedAgentConfig makes read-only: files whose modification
// would run code outside the sandbox the next time the user runs a tool
// there (git hooks and configuration such as core.hooksPath or
// core.fsmonitor, shell start-up files, direnv, editor tasks, agent and
// MCP server configuration). Relative to the workspace root; a trailing
// "/" marks a directory (everything below it is protected).
var AgentConfigPaths = slices.Concat(agentConfigProject, agentConfigHomeOnly)

// agentConfigProject are the AgentConfigPaths a project holds, protected
// at any depth (AgentConfigNestedPatterns).
var agentConfigProject = []string{
	// git: hooks and configuration (core.hooksPath, core.fsmonitor,
	// filter and diff drivers), and the files that make git read them
	// from elsewhere: commondir points the repository's config and hooks
	// at another directory, config.worktree adds configuration.
	".git/hooks/", ".git/config", ".git/config.worktree", ".git/commondir", ".gitmodules",
	// An interactive rebase or sequencer in progress: its todo's "exec"
	// lines run on the user's `git rebase --continue`.
	".git/rebase-merge/", ".git/rebase-apply/", ".git/sequencer/",
	// Hook managers whose scripts git runs once core.hooksPath points
	// at them.
	".husky/", ".githooks/", ".lefthook/", ".pre-commit-config.yaml",
	// lefthook reads its main and local configuration under any of these
	// names and merges them (red team S2: lefthook-local.yml's run: lines
	// ran on the next commit).
	"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", "lefthook.toml", ".lefthook.toml",
	"lefthook.json", ".lefthook.json", "lefthook.jsonc", ".lefthook.jsonc",
	"lefthook-local.yml", ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml",
	"lefthook-local.toml", ".lefthook-local.toml", "lefthook-local.json", ".lefthook-local.json",
	".config/lefthook.yml", ".config/lefthook.yaml", ".config/lefthook-local.yml", ".config/lefthook-local.yaml",
	"lefthook-local.jsonc", ".lefthook-local.jsonc", ".config/lefthook-local.jsonc", ".config/lefthook.jsonc",
	".config/lefthook.toml", ".config/lefthook.json", ".lefthook-local/", // red team round 5, N5
	// lefthook's cache of remote configurations (remotes:), merged into
	// its configuration at every hook run (red team round 11, R11a-5).
	".git/info/lefthook-remotes/",
	// Other hook managers whose installed hook reads its configuration at
	// every commit (a new local file takes effect at once): overcommit
	// and its local overrides, husky 4's rc files, lint-staged (run by a
	// husky hook), hk, rusty-hook, CaptainHook, cargo-husky's hook
	// sources, and prek's .yml form of pre-commit's file.
	".overcommit.yml", ".local-overcommit.yml", ".huskyrc", ".huskyrc.json", ".huskyrc.js", ".huskyrc.yaml", ".huskyrc.yml", "husky.config.js",
	".lintstagedrc", ".lintstagedrc.*", "lint-staged.config.*", "hk.pkl", "hk.local.pkl", ".config/hk.pkl",
	".rusty-hook.toml", "rusty-hook.toml", "captainhook.json", ".cargo-husky/", ".pre-commit-config.yml",
	// direnv (HOME's start-up files, agentConfigHomeOnly, are appended).
	".envrc",
	// direnv: source_env_if_exists .envrc.local, and .direnv/, whose
	// layouts (layout python3) put .direnv/*/bin on PATH (round 5, N4).
	".envrc.local", ".direnv/",
	// Editors and tool-version managers that run code from the project.
	".vscode/", ".idea/", ".zed/", ".helix/", ".exrc", ".nvimrc", ".nvim.lua",
	".mise.toml", "mise.toml", ".mise/", "mise.local.toml", ".mise.local.toml", ".config/mise/",
	// mise's other configuration files: mise/config.toml and its local
	// form, the environment-specific mise.ENV.toml (MISE_ENV), and
	// .config/mise.toml (red team S4: [env] _.source ran on the next
	// prompt hook, trusted already); asdf's .tool-versions, which mise
	// also reads.
	// psql reads ~/.psqlrc-MAJOR[.MINOR] in preference to ~/.psqlrc
	// (psql(1); red team round 32, R32c-4): a pattern, so it is matched
	// at any depth and swept when new, as mise's.
	".psqlrc-*",
	"mise/", "mise.*.toml", ".mise.*.toml", ".config/mise.toml", ".config/mise.local.toml", ".tool-versions",
	// miserc's override_config_filenames makes any file mise's
	// configuration (round 5, N1).
	".miserc.toml", ".miserc.local.toml", ".config/miserc.toml",
	".devcontainer/", ".devcontainer.json",
	// rustup's toolchain file (a "path =" toolchain runs when the editor
	// opens the project).
	"rust-toolchain.toml", "rust-toolchain",
	// Build and package tools that run what their project configuration
	// names: cargo's rustc-wrapper and runners (rust-analyzer runs cargo
	// when the editor opens the project), yarn's yarnPath, npm's
	// script-shell and node-options, pnpm's hooks file.
	".cargo/config.toml", ".cargo/config", ".yarnrc.yml", ".yarnrc", ".npmrc", ".pnpmfile.cjs",
	// Java build tools: Maven's JVM options (a -javaagent: runs at the
	// user's next mvn) and wrapper, Gradle's properties (org.gradle.jvmargs)
	// and wrapper (distributionUrl), sbt's options files (red team round
	// 27, R27b-2).
	".mvn/", "gradle.properties", "gradle/wrapper/", ".sbtopts", ".jvmopts",
	// Agents and their MCP server configuration.
	".mcp.json", ".claude/", ".codex/", ".cursor/", ".gemini/", ".continue/", ".roo/", ".kiro/",
	".windsurf/", ".amazonq/", ".aider.conf.yml", "opencode.json", ".opencode/",
	"opencode.jsonc", ".kilocode/", ".kilo/", "kilo.json", ".crush.json", "crush.json", ".qwen/", // round 5, N3
	".factory/", ".junie/", // Factory Droid (hooks, mcp.json), JetBrains Junie (mcp/mcp.json): round 6, R6-4
	// Continue merges every workspace entry named *.continuerc.json into
	// its configuration (its MCP servers run at load); Codebuff starts
	// codebuff.json's startupProcesses (red team round 22, R22b-3).
	"*.continuerc.json", "codebuff.json",
	// Agents whose project hooks run shell commands at the user's next
	// session (red team round 11, R11a-2): GitHub Copilot's
	// .github/hooks/*.json, Cline's hook scripts (.clinerules/hooks/,
	// .cline/hooks/), Amp's settings (amp.mcpServers), OpenHands'
	// setup.sh, Augment, Trae and Tabnine (MCP servers).
	".github/hooks/", ".clinerules/", ".cline/", ".amp/", ".openhands/", ".augment/", ".trae/", ".tabnine/",
	// autoenv runs .env.leave as a shell script on leaving a directory,
	// zsh-autoenv its .autoenv.zsh files (R11a-2). .env itself (aider's
	// AIDER_* options, autoenv's enter script) is left out: it is the
	// file --deny-secrets masks, and a restore of it by the live watch
	// would write the secret back unmasked (red team round 12, R12-16);
	// README says so.
	".env.leave", ".autoenv.zsh", ".autoenv_leave.zsh",
	// Start-up files that interpreters and debuggers read from the
	// directory they start in: pdb (also breakpoint()), R and RStudio,
	// IRB and rails console, pry, GHCi, Octave (red team round 13,
	// R13-7).
	".pdbrc", ".Rprofile", ".irbrc", ".pryrc", ".ghci", ".octaverc",
	// R reads .Renviron from the directory it starts in as from HOME;
	// its R_PROFILE_USER names a file R sources (red team round 27,
	// R27e-4).
	".Renviron",
	// Mercurial, Jujutsu and Sapling repository configuration: hooks and
	// extensions run on the user's next hg/jj/sl command (red team round
	// 13, R13-2), and what redirects hg to another repository.
	".hg/hgrc", ".hg/hgrc-not-shared", ".hg/sharedpath", ".jj/repo/config.toml", ".sl/config",
	// Red team round 17 (R17a-12): vim's exrc reads .gvimrc with
	// .vimrc, Theia and Gitpod run .theia/tasks.json at folder open,
	// coc.nvim starts the language servers of .vim/coc-settings.json,
	// OpenCode's older .opencode.json.
	".gvimrc", ".theia/", ".vim/coc-settings.json", ".opencode.json",
	// Red team round 30 (R30c-1): with exrc set, vim reads the first of
	// .vimrc, _vimrc and .exrc in the directory it starts in (:help
	// startup, step d; gvim .gvimrc, then _gvimrc), at any depth: .vimrc
	// was HOME's only and a nested one ran in the user's next vim there.
	".vimrc", "_vimrc", "_gvimrc", "_exrc",
	// perl -d reads ./.perldb before ~/.perldb (R30c-4; it was HOME's
	// only); irb, without a HOME rc file, the first of ./.irbrc,
	// ./irb.rc, ./_irbrc.
	".perldb", "irb.rc", "_irbrc",
	// Red team round 31: lazygit merges the repository's
	// .git/lazygit.yml and every .lazygit.yml from the repository up
	// (its pager and custom commands run when it starts: R31c-1);
	// pnpm reads pnpmfile, nodeOptions and scriptShell, the settings
	// .npmrc and .pnpmfile.cjs are protected for, from the nearest
	// pnpm-workspace.yaml (pnpm >= 10.5; R31c-2); every yarn command runs
	// the file .yarnrc.yml's yarnPath names, by convention under
	// .yarn/releases/, and loads its plugins from .yarn/plugins/
	// (R31c-3); irb's fourth name after .irbrc, irb.rc, _irbrc is
	// "$irbrc", a literal dollar sign (lib/irb/init.rb; R31c-4).
	".lazygit.yml", ".git/lazygit.yml", "pnpm-workspace.yaml", ".yarn/releases/", ".yarn/plugins/", "$irbrc",
	// zsh reads FILE.zwc (compiled wordcode) instead of every start-up
	// or sourced FILE when it is newer (R31c-9: .zshrc.zwc beside a
	// protected .zshrc ran instead of it), and compinit sources
	// .zcompdump* (R31c-10); at any depth, as ZDOTDIR may be anywhere.
	"*.zwc", ".zcompdump*",
	// And golangci-lint's configuration, whose custom linters name a Go
	// plugin (a shared object) it loads on the next lint, which editors
	// run on save (linters.settings.custom.NAME.path).
	".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
	// Red team round 31's list (R31c-17): what REPLs load from the
	// directory they start in (IEx, the OCaml toplevel, PsySH, pdb++),
	// bun's project configuration (preload scripts, as .npmrc's
	// node-options), Bazel's launcher wrapper and Bazelisk's and proto's
	// configuration, the TypeScript SDK an editor runs at folder open,
	// pylint's and mypy's configuration (init-hook, plugins), and gdb's
	// and lldb's files wherever a user's safe path lets them load.
	".iex.exs", ".ocamlinit", ".psysh.php", ".pdbrc.py", "bunfig.toml", "tools/bazel", ".bazeliskrc", ".prototools",
	".yarn/sdks/", ".pylintrc", "pylintrc", ".pylintrc.toml", "mypy.ini", ".mypy.ini", ".gdbinit", ".lldbinit",
	// corepack reads .corepack.env from the project: its COREPACK_HOME
	// pointed the user's next `corepack pnpm` at a package manager the
	// command planted in the workspace (R31c-21).
	".corepack.env",
}

// AgentConfigPatterns are the read-only patterns (WithReadOnly syntax,
// relative to the workspace root) that WithProtectedAgentConfig adds for
// the repositories nested in .git: each submodule's git directory
// (.git/modules/NAME, nested ones below it) and each linked worktree's
// administrative directory (.git/worktrees/NAME) has its own config,
// hooks and commondir/gitdir pointers, and git runs what they name the
// next time the user works in that submodule or worktree (a
// core.fsmonitor written into .git/modules/sub/config runs on `git
// status`). For children, the existing ones are carved out read-only, so
// their directories are frozen and no new pointer can be created there.
var AgentConfigPatterns = []string{
	".git/modules/**/config", ".git/modules/**/config.worktree", ".git/modules/**/hooks/",
	".git/modules/**/commondir", ".git/modules/**/gitdir",
	".git/worktrees/*/config", ".git/worktrees/*/config.worktree", ".git/worktrees/*/hooks/",
	".git/worktrees/*/commondir", ".git/worktrees/*/gitdir",
	// A rebase or sequencer in progress in a submodule or a linked
	// worktree: its todo's "exec" lines run on the user's `git rebase
	// --continue` there (red team R4, as .git/rebase-merge/).
	".git/modules/**/rebase-merge/", ".git/modules/**/rebase-apply/", ".git/modules/**/sequencer/",
	".git/worktrees/*/rebase-merge/", ".git/worktrees/*/rebase-apply/", ".git/worktrees/*/sequencer/",
}

// AgentConfigNestedPatterns are the patterns (WithReadOnly syntax)
// that WithProtectedAgentConfig protects for every directory of the
// tree, not only the workspace root: a repository nested anywhere
// ("git init src/vendor", a clone, a vendored checkout) has its own
// .git/config and .git/hooks, and git runs what they name when the user
// (or a git-aware prompt, an IDE scanning sub-repositories) works there;
// direnv, editors, cargo, npm and agents read their configuration from
// the directory they are started in or one above it. They are
// AgentConfigPaths and AgentConfigPatterns made to match at any depth
// ("**/.git/config"; a name without an inner "/" matches at any depth
// already, gitignore(5)), except the entries of a home directory
// (agentConfigHomeOnly: shell start-up files, .gitconfig, .config/git/),
// which nothing reads below the root. Every Workspace operation and
// Check(p, Write) refuse a write to one with ErrReadOnly, whether it
// exists or not. For children they are not carved out (Narrowing reports
// NarrowAgentConfig, not NarrowReadOnly): a name that does not exist
// cannot be carved without freezing its parent, its directory may not
// exist when the ruleset is compiled, and carving every existing one
// would freeze (or mount over) package trees that ship them
// (node_modules/*/.vscode): the CLI sweeps the workspace after the
// command instead (internal/sweep: what was created is renamed away,
// what was changed is renamed away and its content restored). The
// entries of the workspace root (AgentConfigPaths, AgentConfigPatterns)
// are carved out as before.
var AgentConfigNestedPatterns = nestedAgentPatterns()

// agentConfigHomeDir are protected in HOME itself only, never at a
// workspace's root: ~/bin is first in Debian's and Ubuntu's PATH when it
// exists (red team round 15, R15a-7), but a project's bin/ is the
// project's.
var agentConfigHomeDir = []string{"bin/",
	// Toolchains' bin directories, which their installers put on PATH
	// before /usr/bin, whatever PATH landjail itself runs with (red team
	// round 16, R16-9; $PATH's own entries in HOME are added too).
	".cargo/bin/", ".pyenv/shims/", "go/bin/", ".deno/bin/", ".bun/bin/", ".volta/bin/", ".local/share/pnpm/"}

// agentConfigHomeOnly are the AgentConfigPaths protected in the workspace
// root only (a home directory's start-up files).
var agentConfigHomeOnly = []string{
	// Shell start-up files (the workspace may be a home directory).
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin",
	".gitconfig", ".config/git/",
	// Other start-up files of a home directory: fish, neovim and tmux
	// configuration (vim's .vimrc is agentConfigProject's: exrc), ssh's client configuration and login rc,
	// authorized_keys, and the user's own bin directory (first in many
	// PATHs): each runs code the next time the user starts the tool.
	".config/fish/", ".config/nvim/", ".tmux.conf", ".ssh/", ".local/bin/",
	// Debian's .bashrc sources .bash_aliases; a user's systemd units and
	// desktop autostart entries run at the next login (red team round
	// 11, R11a-6, R11a-7).
	".bash_aliases", ".config/systemd/", ".config/autostart/",
	// What those load in turn, and other login and session files (red
	// team round 12, R12-4): Fedora's .bashrc sources .bashrc.d/,
	// direnv's own rc and direnv.toml (whose whitelist allows every
	// .envrc), oh-my-zsh's custom/, systemd's environment.d, the X
	// session files, pam_env, VS Code's user settings, pre-commit's hook
	// environments.
	".bashrc.d/", ".config/direnv/", ".oh-my-zsh/custom/", ".config/environment.d/", ".xsessionrc", ".xprofile",
	".xinitrc", ".pam_environment", ".config/Code/User/", ".cache/pre-commit/",
	// Agents' user-level MCP server configuration (commands the app
	// starts at its next launch): Claude Desktop, Windsurf, Copilot
	// CLI, Zed, Goose (R12-4).
	".config/Claude/", ".codeium/", ".copilot/", ".config/zed/", ".config/goose/",
	// Mercurial's and Jujutsu's user configuration (R13-2), and the AWS
	// CLI's (credential_process runs a program: R13-6).
	".hgrc", ".config/hg/", ".config/jj/", ".aws/",
	// Debugger, readline, build-tool and client start-up files of HOME
	// (red team round 13, R13-11): gdb runs ~/.gdbinit, readline binds
	// ~/.inputrc's macros in the user's shell, every Gradle build runs
	// init.d/, mvn sources ~/.mavenrc, kubectl's exec plugins, gpg-agent's
	// pinentry-program, pip's and Maven's index and settings.
	".gdbinit", ".inputrc", ".gradle/init.d/", ".gradle/init.gradle", ".mavenrc", ".kube/", ".gnupg/",
	".config/pip/", ".pip/", ".m2/",
	// Red team round 15 (R15a-7, R15a-16): tmux's XDG configuration
	// (tmux 3.1), the user site directory (a .pth runs at every Python
	// start), IPython's startup/, starship's prompt commands, terminal
	// and window-manager configuration that runs programs (wezterm, i3,
	// Hyprland, Plasma's env/), screen, lldb and mutt; Claude Code's
	// ~/.claude.json (user- and local-scope MCP servers), amp's, and the
	// VS Code forks' user settings.
	".config/tmux/", ".local/lib/", ".ipython/", ".config/starship.toml", ".config/wezterm/",
	".config/i3/", ".config/hypr/", ".config/plasma-workspace/env/", ".screenrc", ".lldbinit",
	".muttrc", ".claude.json", ".claude.json.backup", ".config/amp/", ".config/Cursor/User/",
	".config/VSCodium/User/", ".config/Code - OSS/User/", ".config/Code - Insiders/User/",
	// Editors' auto-loaded plugin directories, terminals' and
	// multiplexers' configuration naming the shell they start, and more
	// start-up files (red team round 16, R16-9).
	".local/share/nvim/", ".vim/pack/", ".vim/plugin/", ".vim/autoload/",
	".config/kitty/", ".config/alacritty/", ".config/ghostty/", ".config/zellij/", ".config/gdb/",
	".bash_completion", ".local/share/bash-completion/", ".psqlrc", ".sqliterc", ".julia/config/",
	".bunfig.toml", ".tmux/", ".config/ranger/", ".config/lf/",
	// Red team round 17 (R17a-5): user units and session-bus services
	// under XDG_DATA_HOME, desktop entries and MIME defaults, KDE's
	// autostart scripts, X session files, other shells' start-up files
	// (nushell, PowerShell, ksh, mksh, tcsh/csh, elvish, xonsh, zsh's
	// .zshrc.d and .zlogout, fish's vendor_conf.d), editors (Emacs,
	// kakoune, micro, helix, mpv's scripts), interpreters and toolchains
	// that shims and proxies run (pyenv's versions, rustup's toolchains,
	// nvm, asdf, SDKMAN!, sbt), and tools that run what their
	// configuration names (gh's editor and pager, lazygit, mailcap,
	// curlrc, Terraform's dev_overrides, containers.conf).
	".local/share/systemd/", ".local/share/dbus-1/", ".local/share/applications/", ".config/mimeapps.list",
	".config/autostart-scripts/", ".xsession", ".xsessionrc.d/", ".Xclients", ".xprofile.d/",
	".config/nushell/", ".config/powershell/", ".kshrc", ".mkshrc", ".tcshrc", ".cshrc", ".login", ".logout",
	".config/elvish/", ".elvish/", ".xonshrc", ".config/xonsh/", ".zshrc.d/", ".zlogout", ".local/share/fish/",
	".emacs", ".emacs.el", ".emacs.d/", ".config/emacs/", ".config/doom/", ".config/kak/", ".config/micro/",
	".config/helix/", ".config/mpv/", ".pyenv/versions/", ".pyenv/plugins/", ".rustup/toolchains/", ".nvm/",
	".asdf/", ".sdkman/", ".sbt/", ".config/gh/", ".config/lazygit/", ".mailcap", ".curlrc", ".terraformrc",
	".config/containers/",
	// Red team round 18 (R18a-7): more window managers and bars, KDE's
	// logout scripts, user tmpfiles, GNOME Shell extensions, Docker's
	// CLI plugins and credsStore helper, Gradle's JVM arguments, helm,
	// krew and Terraform plugins, Clojure, GHC, Jupyter, Erlang, SBCL,
	// neomutt, yazi, vifm, Bazel, Subversion, VS Code Server's extensions,
	// JetBrains' plugins, browsers' native-messaging hosts.
	".config/sway/", ".config/river/", ".config/niri/", ".config/labwc/", ".config/openbox/", ".config/awesome/",
	".config/bspwm/", ".config/qtile/", ".config/herbstluftwm/", ".xmonad/", ".config/xmonad/", ".config/waybar/",
	".config/plasma-workspace/shutdown/", ".config/user-tmpfiles.d/", ".local/share/gnome-shell/extensions/",
	".docker/cli-plugins/", ".docker/config.json", ".gradle/gradle.properties", ".local/share/helm/plugins/",
	".krew/", ".terraform.d/plugins/", ".lein/", ".clojure/", ".ghc/", ".jupyter/", ".erlang", ".sbclrc",
	".neomuttrc", ".config/mutt/", ".config/neomutt/", ".config/yazi/", ".config/vifm/", ".vifm/", ".bazelrc",
	".subversion/", ".vscode-server/", ".local/share/JetBrains/", ".mozilla/native-messaging-hosts/",
	".config/google-chrome/NativeMessagingHosts/", ".config/chromium/NativeMessagingHosts/",
	// Red team round 19 (R19-7): lesspipe runs an executable
	// ~/.lessfilter for every file less opens, direnv sources
	// ~/.direnvrc for every allowed .envrc, xdg-user-dir sources
	// user-dirs.dirs; guile, perl -d, mysql's pager, wget's askpass,
	// conda's channels, Midnight Commander.
	".lessfilter", ".config/lessfilter", ".direnvrc", ".config/user-dirs.dirs", ".guile",
	".my.cnf", ".wgetrc", ".condarc", ".config/mc/",
	// Red team round 20 (R20b-2): less 582 and later reads the lesskey
	// source, whose #env section sets LESSOPEN (a command run for every
	// file less opens); Debian's sensible-editor sources
	// ~/.selected_editor; xterm's translations in X resources can
	// exec-formatted a program; ripgrep's and Python's start-up files
	// (RIPGREP_CONFIG_PATH's --pre, PYTHONSTARTUP) where a profile points
	// at them; libedit's and RubyGems' files.
	".lesskey", ".config/lesskey", ".selected_editor", ".Xresources", ".Xdefaults", ".ripgreprc", ".pythonrc",
	".pythonrc.py", ".editrc", ".gemrc",
	// Red team round 20 (R20b-8): what start-up files source by their
	// installers' own lines (rustup's . "$HOME/.cargo/env", ghcup, fzf,
	// deno, rye, git's prompt and completion scripts, bash-preexec,
	// iTerm2's integration, oh-my-zsh and its plugins, powerlevel10k,
	// zsh plugin managers, opam, conda's profile scripts, the Google
	// Cloud SDK, pyenv's own program, vim-plug's plugins); and (R20b-4)
	// the virtual environments pipx and uv install tools in: the link in
	// ~/.local/bin is protected, and the interpreter's site-packages it
	// runs must be too.
	".cargo/env", ".cargo/env.fish", ".ghcup/env", ".fzf.bash", ".fzf.zsh", ".deno/env", ".rye/env",
	".git-prompt.sh", ".git-completion.bash", ".git-completion.zsh", ".bash-preexec.sh",
	".iterm2_shell_integration.bash", ".iterm2_shell_integration.zsh", ".oh-my-zsh/", ".p10k.zsh", ".dircolors",
	".bash_functions", ".profile.d/", ".zsh_plugins.sh", ".zinit/", ".local/share/zinit/", ".antigen/", ".zplug/",
	".opam/opam-init/", "google-cloud-sdk/", "miniconda3/etc/profile.d/", "anaconda3/etc/profile.d/",
	"miniforge3/etc/profile.d/", ".pyenv/bin/", ".pyenv/libexec/", ".vim/plugged/",
	".local/share/pipx/venvs/", ".local/share/uv/tools/",
	// WezTerm's HOME-level Lua configuration (its .config/wezterm/ is
	// listed), irb's XDG rc, yarn's XDG configuration (yarnPath runs a
	// file), pylint's init-hook (R20b-2).
	".wezterm.lua", ".config/irb/", ".config/yarn/", ".pylintrc", ".config/pylintrc",
	// Red team round 27 (R27e-4): R's compiler settings (Makevars; its
	// .Renviron is in agentConfigProject),
	// PipeWire's context.exec and WirePlumber's scripts at login,
	// PulseAudio's load-module of a shared object, Ansible's executable
	// vault_password_file and plugin paths, Jupyter's kernel specs (argv
	// run when the kernel is chosen), `npm init`'s script, mail
	// delivery's |command, and uv's and Poetry's package index (the next
	// install fetches from it).
	".R/", ".config/pipewire/", ".config/wireplumber/", ".config/pulse/", ".ansible.cfg",
	".ansible/", ".local/share/jupyter/", ".npm-init.js", ".forward", ".config/uv/", ".config/pypoetry/",
	// Red team round 31: husky's and vite-plus's per-user start-up
	// files, sourced by every hook (R31c-6); vim's start-up directory
	// whole (vimrc, after/, ftplugin/, ftdetect/) and its XDG form
	// (R31c-7); pyenv's hooks and shims, and the other version managers
	// whose shims are on PATH (R31c-8); gdb's early init file
	// (R31c-11); less's compiled key file, whose #env sets LESSOPEN
	// (R31c-13); the init files Emacs loads before ~/.emacs (.elc and
	// compressed forms) and Doom's and Spacemacs' (R31c-14); Go's
	// per-user environment file, whose GOFLAGS=-toolexec runs a program
	// in every build (R31c-15); Node's global folders at the end of
	// every require search (R31c-16); and login autostart and session
	// configuration: LXDE's autostart, KDE 4's Autostart, polybar,
	// dunst, Xfce (key bindings), k9s plugins (R31b-5).
	".config/husky/", ".huskyrc.sh", ".config/vite-plus/", ".vim/", ".config/vim/",
	".pyenv/pyenv.d/", ".pyenv/shims/", ".rbenv/", ".nodenv/", ".goenv/", ".jenv/", ".plenv/",
	".gdbearlyinit", ".less", ".emacs.elc", ".emacs.gz", ".emacs.el.gz", ".emacs.elc.gz", ".doom.d/", ".spacemacs", ".spacemacs.d/",
	".config/go/env", ".node_modules/", ".node_libraries/",
	".config/lxsession/", ".kde/Autostart/", ".kde4/Autostart/", ".config/polybar/", ".config/dunst/", ".config/xfce4/", ".config/k9s/",
	// R31c-17's HOME names: opencode's and LM Studio's plugins and MCP
	// servers, VSCodium's and Insiders' extensions, pnpm's global
	// configuration, CPAN's MyConfig.pm, mongosh's rc, lldb's per-tool
	// init, gitk's Tcl, mc's subshell rc, CMake's user package registry,
	// ccache's and mypy's configuration, Ruby's user gems and R's user
	// library (first on their load paths), Kerberos' .k5login.
	".config/opencode/", ".lmstudio/mcp.json", ".vscode-oss/", ".vscode-insiders/", ".config/pnpm/",
	".cpan/CPAN/", ".mongoshrc.js", ".lldbinit-lldb", ".gitk", ".local/share/mc/", ".cmake/packages/",
	".config/ccache/", ".config/mypy/", ".gem/", "R/", ".k5login",
}

func nestedAgentPatterns() []string {
	// One allocation for the list (it runs at every start, in package
	// initialisation); the anchored ones need one more each.
	out := make([]string, 0, len(agentConfigProject)+len(AgentConfigPatterns))
	for _, list := range [2][]string{agentConfigProject, AgentConfigPatterns} {
		for _, p := range list {
			if strings.Contains(strings.TrimSuffix(p, "/"), "/") {
				p = "**/" + p // anchored otherwise (gitignore(5))
			}
			out = append(out, p)
		}
	}
	return out
}

// WithProtectedAgentConfig makes AgentConfigPaths in the workspace root
// read-only (ErrReadOnly for every write, as WithReadOnly), whether they
// exist or not: a missing one cannot be created; and AgentConfigPatterns
// (the git metadata of submodules and linked worktrees) likewise, and
// each submodule's gitfile ("SUB/.git", for every "path = SUB" of
// .gitmodules as it is when New runs). New also protects, as
// they are when it runs: the target of an entry that is a symlink into a
// policy root (".mcp.json -> cfg/mcp.json" protects cfg/mcp.json), and
// ".git" itself, which can then be neither created, removed, renamed nor,
// when it is a file ("gitdir: ..." of a worktree or submodule),
// rewritten to point at another repository's hooks. A symlink or gitfile
// created after New is not followed up: Workspace has no operation that
// creates symlinks and refuses every ".git" entry; for children,
// landlock.Compile freezes the workspace root (Landlock-only, see
// landlock's chain directories), and under the namespace layer the
// caller's sweep renames a protected name or ".git" that is new or
// replaced (internal/sweep).
//
// New also protects what the git configuration that applies in the
// workspace root points git at inside a ReadWrite root (red team F9):
// the repository's .git/config and config.worktree (of the repository
// the root is in, found upwards), the files they include, and the
// user's global and system files; include.path, includeIf.*.path,
// core.hooksPath, init.templateDir, core.attributesFile, and every word
// that is a path in a command git runs by itself (core.fsmonitor,
// core.pager, filter, diff and merge drivers, credential helpers; not
// alias.*), the script or module an interpreter there runs included,
// read fail closed (red team round 26, R26a-1: see commandWords). A policy root, or a directory above one, is never protected
// by such a reference. Read once, when New runs (git-config(1)).
//
// AgentConfigNestedPatterns protect the same names in every directory
// of the tree (for children: by the caller's sweep), and no entry named
// ".git", at any depth, can be created, removed or renamed through the
// Workspace (a gitfile "sub/.git" or a
// symlink named .git selects a repository directory, and with it a
// config the command wrote).
//
// Set-ID programs are protected too: a regular file in a ReadWrite root
// with S_ISUID or S_ISGID, or file capabilities (security.capability),
// whatever its execute bits (chmod +x keeps them), is read-only (ErrReadOnly for
// every write, and for removing or renaming it or a directory above
// it), looked at when the operation runs; landlock.Compile carves out
// those its walk finds (landlock.SourceSetID). The kernel strips those
// bits on write(2), not on stores through a shared writable mapping, so
// a command that could open one for writing could put its own code in
// a program that runs with its owner's privileges outside the sandbox
// (red team round 31, R31a-5; internal/setid).
//
// For children, landlock.Compile carves the existing paths out
// read-only (read-only mounts under the namespace layer). A name that
// does not exist cannot be carved out without freezing its parent
// directory: Landlock-only, the parent (the workspace root, .git) is
// frozen, so a child cannot create, remove or rename entries directly in
// it (`git add` and `git commit` fail cleanly: they create
// .git/index.lock, measured EACCES, no lock left behind); under the
// namespace layer, with landlock.Options.SweepAgentConfig, nothing is
// frozen and the caller sweeps what the command created
// (internal/sweep).
func WithProtectedAgentConfig() Option {
	return func(c *config) error { c.protectAgent = true; return nil }
}

// WithDenyPrivateKeys adds content-conditional deny patterns (WithDeny
// syntax, matched against the entry itself, not its parents): a
// non-directory matching one is denied (ErrDenied) when it holds a PEM
// private key block, a line "-----BEGIN <anything>PRIVATE KEY-----"
// or OpenPGP's "-----BEGIN PGP PRIVATE KEY BLOCK-----"
// (RFC 7468 labels "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", and the
// legacy "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
// ...). A PEM file holding only certificates (a CA bundle such as
// certifi's cacert.pem) stays readable. Fail closed: a file that is not
// a regular file, that cannot be read, or that is larger than
// MaxKeyScan bytes counts as a private key.
//
// The Workspace decides on the file descriptor it opened (the content it
// examines is the content the caller gets; the path is never re-opened).
// Operations that do not hand out data (Rename, Remove, RemoveAll,
// WriteFile's replacement) examine the existing file through an fd
// opened beneath its root. Resolve and Check examine it by path: their
// answer is advisory, as always. landlock.Compile decides when it walks
// the tree: a file that becomes a private key after Compile is not
// carved out for children, like every start-time match.
func WithDenyPrivateKeys(patterns ...string) Option {
	return func(c *config) error {
		c.keyPatterns = append(c.keyPatterns, patterns...)
		return nil
	}
}

// WithDenyPrivateKeyHeaders denies (ErrDenied) every regular file in the
// roots whose first KeyHeadScan bytes hold a private key header: PEM and
// OpenPGP armor, OpenSSH, PuTTY's PPK and ssh.com's format (see
// HeadHoldsPrivateKey for the list, its sources and what it does not
// catch), whatever the file's name: config/deploy_key, notes.txt, a
// service-account JSON. Files whose names match a WithDenyPrivateKeys
// pattern keep that stricter rule (the whole file, fail closed on size);
// others are examined only by their head, so a large file is not denied
// for its size. A FIFO, socket or device is not examined (not denied).
//
// Where the decision is taken, and when, is as for WithDenyPrivateKeys.
// The cost is one open and one pread(2) per file examined: per operation
// for the Workspace, and for every regular file of the roots when
// landlock.Compile walks them (BENCHMARKS.md has the numbers).
func WithDenyPrivateKeyHeaders() Option {
	return func(c *config) error { c.keyHeaders = true; return nil }
}

// WithDenySecrets denies the preset of common secrets: WithDeny with
// SecretPatterns, WithDenyPrivateKeys with PrivateKeyPatterns, and
// WithDenyPrivateKeyHeaders (a private key is recognised by its header in
// any file). It is what the CLI's --deny-secrets selects. Its patterns
// come before every WithDeny pattern, whatever the order of the options:
// gitignore's last match wins, so a name the caller denies is never
// re-included by the preset's "!.env.example" or "!id_*.pub" (red team
// round 17, R17a-2: --deny .env.example read it), and the caller's own
// "!x" re-includes what the preset denies.
func WithDenySecrets() Option {
	return func(c *config) error {
		c.presetDeny = append(c.presetDeny, SecretPatterns...)
		// Where $XDG_CONFIG_HOME is not ~/.config, gh, gcloud and rclone
		// keep their credentials there: the .config/ patterns are also
		// given for it, as absolute patterns (red team round 14, R14-8).
		// (New also gives an absolute pattern resolved, normalizePatterns:
		// the patterns match real paths, red team round 16, R16-1.)
		// So are the .local/share/ ones for $XDG_DATA_HOME (red team
		// round 18, R18a-5: the GNOME keyring, OpenCode's and Amp's keys),
		// and the .local/state/ ones for $XDG_STATE_HOME (red team round
		// 19: Neovim's swap and undo files of a denied .env).
		for _, xdg := range []struct{ env, dflt string }{{"XDG_CONFIG_HOME", ".config"}, {"XDG_DATA_HOME", ".local/share"}, {"XDG_STATE_HOME", ".local/state"}} {
			x := os.Getenv(xdg.env)
			if !filepath.IsAbs(x) {
				continue
			}
			x = filepath.Clean(x)
			if h, err := os.UserHomeDir(); err == nil && x == filepath.Join(h, xdg.dflt) {
				continue
			}
			for _, p := range SecretPatterns {
				if rest, ok := strings.CutPrefix(p, "**/"+xdg.dflt+"/"); ok {
					c.presetDeny = append(c.presetDeny, x+"/"+rest)
				}
			}
		}
		c.presetDeny = append(c.presetDeny, relocatedSecrets()...)
		c.presetDeny = append(c.presetDeny, SystemSecretPaths...)
		if h := HomeDir(); h != "" {
			for _, n := range homeSecretNames {
				c.presetDeny = append(c.presetDeny, filepath.Join(h, n))
			}
		}
		c.keyPatterns = append(c.keyPatterns, PrivateKeyPatterns...)
		c.keyHeaders = true
		return nil
	}
}

// SecretPatterns is the path part of the secrets preset (WithDenySecrets,
// which also adds PrivateKeyPatterns): deny patterns in gitignore syntax
// for credential files, denied whatever their content. It is not enabled
// by default. Sources: the blocked patterns of agent-skill
// sandboxes (.env, *.pem, *.key), agent daemons' own secrets, and the credential files that peers deny by
// default or document (OpenSSH ssh-keygen(1) FILES, AWS CLI
// ~/.aws/credentials and config, gcloud's ~/.config/gcloud
// (credentials.db, application_default_credentials.json), Azure CLI
// ~/.azure, netrc(5), npmrc(5), .pypirc, Vault's ~/.vault-token, kubectl's
// ~/.kube/config, git-credential-store(1), Docker's config.json, cargo's
// credentials.toml, gh's hosts.yml, PostgreSQL's .pgpass, MySQL's
// .my.cnf). SSH identities: every name ssh-keygen gives a key type
// ("id_rsa*" covers id_rsa_work, "id_ed25519*" id_ed25519_sk, ...) is
// denied, public keys "id_*.pub" are re-included; any other "id_*" file
// is denied when it holds a private key (PrivateKeyPatterns), so source
// files such as id_generator.go stay readable. A pattern with a "/" in
// the middle is anchored at the root in gitignore(5), so the nested ones
// start with "**/" (".kube/config" alone would miss home/.kube/config).
var SecretPatterns = []string{
	// Environment files (.env-backup, .env_old, direnv's .envrc and
	// cookiecutter-django's .envs/ too: red team round 17, R17a-9); the
	// conventional templates stay readable.
	".env*",
	"*.env",
	"!.env.example",
	"!.env.sample",
	"!.env.template",
	// SSH and GnuPG: identities anywhere, and the whole directories.
	"id_rsa*",
	"id_dsa*",
	"id_ecdsa*",
	"id_ed25519*",
	"id_xmss*",
	"!id_*.pub",
	".ssh/",
	".gnupg/",
	// Private keys and key stores in their own formats.
	"*.key",
	"*.p12",
	"*.pfx",
	"*.jks",
	"*.keystore",
	"*.ppk",
	// Cloud CLIs.
	".aws/",
	".azure/",
	"**/.config/gcloud/",
	"application_default_credentials.json",
	".vault-token",
	"**/.kube/config",
	"**/.docker/config.json",
	// Package managers and forges.
	".netrc",
	"_netrc",
	".npmrc",
	".pypirc",
	"**/.gem/credentials",
	"**/.cargo/credentials",
	"**/.cargo/credentials.toml",
	".git-credentials",
	"**/.config/gh/hosts.yml",
	// Other cloud and storage tools' credentials; Terraform state holds
	// every secret of the resources it manages.
	".boto",
	".s3cfg",
	"**/.config/rclone/rclone.conf",
	"**/.oci/config",
	"**/.terraform.d/credentials.tfrc.json",
	"*.tfstate",
	"*.tfstate.backup",
	// Databases.
	".pgpass",
	".my.cnf",
	// Agents.
	"**/.claude/.credentials.json",
	// Other agents' and tools' tokens at their default places (red team
	// round 16, R16-10): Codex, Gemini CLI, Copilot, sops' age key,
	// podman/skopeo registry auth, Hugging Face, GitLab's and hub's CLIs,
	// Maven's server passwords.
	"**/.codex/auth.json",
	"**/.gemini/oauth_creds.json",
	"**/.config/github-copilot/",
	"**/.config/sops/age/keys.txt",
	"**/.config/containers/auth.json",
	"**/containers/auth.json",
	"**/.cache/huggingface/token",
	"**/.config/glab-cli/config.yml",
	"**/.config/hub",
	"**/.m2/settings.xml",
	// More tools' default places (red team round 17, R17a-3, R17a-9):
	// git-credential-store's XDG file, Terraform's CLI configuration and
	// variable files, Composer, Stripe, ngrok, Pulumi, fly.io,
	// DigitalOcean, Gradle's user properties (signing and repository
	// passwords), Databricks, pip's user configuration (index URLs with
	// credentials), MinIO's client, Google's OAuth files, htpasswd, .NET
	// user secrets, Docker's old file.
	"**/.config/git/credentials",
	".terraformrc",
	"terraform.rc",
	"*.tfvars",
	"**/.config/composer/auth.json",
	"**/.composer/auth.json",
	"**/.config/stripe/config.toml",
	"**/.config/ngrok/ngrok.yml",
	"**/.ngrok2/ngrok.yml",
	"**/.pulumi/credentials.json",
	"**/.fly/config.yml",
	"**/.config/doctl/config.yaml",
	"**/.gradle/gradle.properties",
	".databrickscfg",
	"**/.config/pip/pip.conf",
	"**/.pip/pip.conf",
	"**/.mc/config.json",
	"token.pickle",
	"client_secret*.json",
	".htpasswd",
	"**/.microsoft/usersecrets/",
	".dockercfg",
	// Desktop credential stores that a --ro ~ exposes: browsers' saved
	// passwords (decryptable offline without a primary password) and
	// cookies, an unencrypted GNOME keyring, Discord's token, fish's
	// universal variables (set -Ux API keys).
	"**/.mozilla/firefox/*/logins.json",
	"**/.mozilla/firefox/*/key4.db",
	"**/.mozilla/firefox/*/cookies.sqlite",
	// Every Chromium-family browser (Chrome and its channels, Chromium
	// from a snap or Flatpak, Edge, Brave, Vivaldi, Opera) keeps its
	// passwords in "Login Data" (and "Login Data For Account") and its
	// cookies in a profile's Cookies (red team round 18, R18a-13).
	"Login Data*",
	// Every Chromium or Electron cookie store (Slack, Teams, Discord: a
	// session cookie is the account), and the Electron apps' Local
	// Storage (Discord's and Element's tokens), Signal's database key,
	// Telegram's session (red team round 18, R18a-19).
	"Cookies",
	"Cookies-journal",
	"**/.config/*/Local Storage/",
	"**/.config/Signal/config.json",
	"**/.local/share/TelegramDesktop/tdata/",
	// Their Flatpak forms (~/.var/app/ID/config, .../data), Chromium's
	// per-profile Local Storage and autofill (Web Data), Thunderbird's
	// password pair, and clear-text stores: FileZilla, Pidgin, msmtp,
	// fetchmail, Subversion's auth cache, dbt, Firebase, Vercel, Netlify,
	// Wrangler, Snowflake, Helm's repositories, Cursor's MCP servers, VS
	// Code's extension secrets without a keyring, Remmina, HexChat, irssi
	// (red team round 19, R19-4).
	"**/.var/app/*/config/*/Local Storage/",
	"**/.var/app/*/config/Signal/config.json",
	"**/.var/app/*/data/TelegramDesktop/tdata/",
	"**/Default/Local Storage/",
	"**/Profile */Local Storage/",
	"Web Data",
	"**/.thunderbird/*/logins.json",
	"**/.thunderbird/*/key4.db",
	"**/.config/filezilla/sitemanager.xml",
	"**/.config/filezilla/recentservers.xml",
	"**/.purple/accounts.xml",
	".msmtprc",
	"**/.config/msmtp/config",
	".fetchmailrc",
	"**/.subversion/auth/",
	"**/.dbt/profiles.yml",
	"**/.config/configstore/firebase-tools.json",
	"**/.local/share/com.vercel.cli/auth.json",
	"**/.config/netlify/config.json",
	"**/.config/.wrangler/config/default.toml",
	"**/.snowflake/connections.toml",
	"**/.config/helm/repositories.yaml",
	"**/.cursor/mcp.json",
	"**/User/globalStorage/state.vscdb",
	"**/.config/remmina/",
	"**/.local/share/remmina/",
	"**/.config/hexchat/servlist.conf",
	"**/.irssi/config",
	// Editors' swap, undo and backup directories: copies of whatever was
	// edited, secrets included (R18a-3).
	"**/.local/state/nvim/swap/",
	"**/.local/share/nvim/swap/",
	"**/.local/state/nvim/undo/",
	"**/.vim/swap/",
	"**/.vim/backup/",
	"**/.vim/undo/",
	"**/.emacs.d/backups/",
	"**/.emacs.d/auto-save-list/",
	"**/.local/share/keyrings/",
	"**/.config/fish/fish_variables",
	// Other coding agents' keys: Claude Code's ~/.claude.json (an API
	// key when logged in with one), OpenCode, Amp, Goose, Qwen Code,
	// Continue, aider.
	".claude.json",
	"**/.local/share/opencode/auth.json",
	"**/.local/share/amp/secrets.json",
	"**/.config/goose/secrets.yaml",
	"**/.qwen/oauth_creds.json",
	"**/.continue/config.yaml",
	"**/.continue/config.json",
	".aider.conf.yml",
	// Red team round 31 (R31b-3): pass's store at its default place
	// ($PASSWORD_STORE_DIR was denied, ~/.password-store not), the
	// histories of shells and REPLs (an export TOKEN=..., a psql URL
	// with its password), age identities, and more CLIs' tokens.
	"**/.password-store/",
	"**/.bash_history", "**/.zsh_history", "**/.zhistory", "**/.histfile", "**/.local/share/fish/fish_history",
	"**/.psql_history", "**/.mysql_history", "**/.python_history", "**/.node_repl_history",
	"**/.rediscli_history", "**/.sqlite_history", "**/.lesshst",
	"**/.config/age/", "**/.age/",
	"**/.kaggle/kaggle.json", "**/.huggingface/token", "**/.config/huggingface/token",
	"**/.config/op/", "**/.op/", "**/.supabase/access-token", "**/.wakatime.cfg",
	"**/.config/pulumi/credentials.json", "**/.config/vercel/auth.json",
	// Red team round 32 (R32c-8): more histories (atuin's database holds
	// the whole shell history; Vim's and Neovim's registers and command
	// lines), CLIs' tokens and password files.
	"**/.local/share/atuin/", "**/.irb_history", "**/.pry_history", "**/.Rhistory", "**/.sh_history",
	"**/.ash_history", "**/.gdb_history", "**/.octave_hist", "**/.local/state/less/history",
	"**/.viminfo", "**/.local/state/nvim/shada/",
	"**/.config/hcloud/cli.toml", "**/.config/scw/config.yaml", "**/.config/linode-cli", "**/.aliyun/config.json",
	"**/.tccli/", "**/.ovh.conf", "**/.railway/config.json", "**/.sentryclirc", "**/.mylogin.cnf",
	"**/.pg_service.conf", "**/.local/share/python_keyring/", "**/.config/Bitwarden CLI/",
	"**/.config/io.datasette.llm/keys.json", "**/.kube/*.yaml", "**/.kube/*.yml", "**/.kube/configs/",
	"**/.talos/config", "**/.bluemix/config.json", "**/.config/tea/config.yml", "**/.jira.d/",
}

// homeSecretNames are secrets of the secrets preset only in HOME: a
// project's own file of the same name is configuration its tools need
// (Yarn 2's .yarnrc.yml, Bundler's .bundle/config), HOME's holds the
// user's registry tokens (red team round 17, R17a-3).
var homeSecretNames = []string{".yarnrc.yml", ".bundle/config"}

// secretLocations are the environment variables that move a credential
// file or directory of SecretPatterns elsewhere, and what they name: a
// file (""), or a file or directory inside the directory they name.
// KUBECONFIG is a list (":"-separated).
var secretLocations = []struct{ env, inside string }{
	{"DOCKER_CONFIG", "config.json"},
	{"CARGO_HOME", "credentials"},
	{"CARGO_HOME", "credentials.toml"},
	{"KUBECONFIG", ""},
	{"AWS_SHARED_CREDENTIALS_FILE", ""},
	{"AWS_CONFIG_FILE", ""},
	{"GNUPGHOME", "/"},
	{"PASSWORD_STORE_DIR", "/"},
	{"CLOUDSDK_CONFIG", "/"},
	{"AZURE_CONFIG_DIR", "/"},
	{"GH_CONFIG_DIR", "hosts.yml"},
	{"NPM_CONFIG_USERCONFIG", ""},
	{"npm_config_userconfig", ""},
	{"PGPASSFILE", ""},
	{"NETRC", ""},
	{"TF_CLI_CONFIG_FILE", ""},
	{"RCLONE_CONFIG", ""},
	{"BOTO_CONFIG", ""},
	{"S3CMD_CONFIG", ""},
	{"AWS_WEB_IDENTITY_TOKEN_FILE", ""},
	{"REGISTRY_AUTH_FILE", ""},
	{"HF_TOKEN_PATH", ""},
	{"SOPS_AGE_KEY_FILE", ""},
	{"CLAUDE_CONFIG_DIR", ".credentials.json"},
	{"CODEX_HOME", "auth.json"},
	// Red team round 17, R17a-11.
	{"HF_HOME", "token"},
	{"XDG_CACHE_HOME", "huggingface/token"},
	{"ANSIBLE_VAULT_PASSWORD_FILE", ""},
	{"TALOSCONFIG", ""},
	{"PULUMI_HOME", "credentials.json"},
	{"GLAB_CONFIG_DIR", "config.yml"},
	{"COMPOSER_HOME", "auth.json"},
	{"GRADLE_USER_HOME", "gradle.properties"},
	{"PIP_CONFIG_FILE", ""},
	{"DATABRICKS_CONFIG_FILE", ""},
	{"NGROK_CONFIG", ""},
	// Red team round 18, R18a-5: an authorized_user file (a refresh
	// token and client secret, no PEM header) named by the variable.
	{"GOOGLE_APPLICATION_CREDENTIALS", ""},
}

// relocatedSecrets returns absolute deny patterns for the credentials
// the environment moved away from SecretPatterns' places
// (DOCKER_CONFIG=$XDG_CONFIG_HOME/docker, CARGO_HOME, KUBECONFIG,
// AWS_SHARED_CREDENTIALS_FILE, as xdg-ninja recommends: red team round
// 15, R15a-23: --ro ~ read all four). A relative value names the path
// from the workspace root and from landjail's working directory (as a
// "./" pattern, R17a-1); an empty one names nothing.
// SystemSecretPaths are the system's credential stores, absolute
// gitignore-style patterns (a trailing "/" for a directory) that
// WithDenySecrets denies and --learn never grants (IsSystemSecret): the
// local password hashes (/etc/shadow, /etc/gshadow and their "-"
// backups, /etc/security/opasswd), sudo's rules, the SSH host keys, the
// Kerberos keytab, TLS private keys, saved Wi-Fi and PPP passwords, SSSD's
// cached credentials. A root command reads them with no capability
// (root owns them), so one grant of /etc or a learned "ro /etc/shadow"
// handed every account's hash to the command (red team round 31,
// R31b-1: --learn learned a refused read of /etc/shadow).
var SystemSecretPaths = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/security/opasswd", "/etc/sudoers", "/etc/sudoers.d/",
	"/etc/ssh/ssh_host_*_key", "/etc/krb5.keytab", "/etc/ssl/private/",
	"/etc/NetworkManager/system-connections/", "/etc/wpa_supplicant/",
	"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/var/lib/sss/",
	// Red team round 32, R32c-10: keys without a PEM header (the key
	// scan misses them) and passwords in root-only files.
	"/etc/wireguard/", "/etc/mysql/debian.cnf", "/etc/credstore/", "/etc/credstore.encrypted/",
	"/var/lib/systemd/credential.secret", "/etc/ipsec.secrets", "/etc/ipsec.d/private/",
	"/etc/postfix/sasl_passwd", "/etc/postfix/sasl_passwd.db", "/etc/samba/smbpasswd", "/var/lib/samba/private/",
	"/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf", "/etc/kubernetes/pki/", "/etc/rancher/k3s/k3s.yaml",
	"/etc/davfs2/secrets", "/etc/rsyncd.secrets", "/etc/libvirt/secrets/", "/etc/gitlab/gitlab-secrets.json",
}

// IsSystemSecret reports whether the absolute clean path p is one of
// SystemSecretPaths or lies below one of its directories (the patterns'
// "*" matches within one component, as filepath.Match).
func IsSystemSecret(p string) bool {
	for _, pat := range SystemSecretPaths {
		if dir, ok := strings.CutSuffix(pat, "/"); ok {
			if p == dir || strings.HasPrefix(p, dir+"/") {
				return true
			}
			continue
		}
		if ok, _ := filepath.Match(pat, p); ok {
			return true
		}
	}
	return false
}

func relocatedSecrets() []string {
	var out []string
	for _, l := range secretLocations {
		v := os.Getenv(l.env)
		for _, e := range strings.Split(v, ":") {
			if l.env != "KUBECONFIG" && e != v {
				continue
			}
			if !filepath.IsAbs(e) && e != "" {
				// From the workspace root and the working directory
				// (normalizePatterns' reading of "./x"): R17a-1.
				e = "./" + filepath.Clean(e)
			} else if e = envPath(e); e == "" {
				continue
			}
			switch l.inside { // New adds the resolved form (normalizePatterns, R16-1)
			case "":
				out = append(out, e)
			case "/":
				out = append(out, e+"/")
			default:
				out = append(out, e+"/"+l.inside)
			}
		}
	}
	return out
}

// PrivateKeyPatterns is the content-conditional part of the secrets
// preset (WithDenySecrets): PEM files (*.pem, *.crt, *.cer), ASCII-armored
// OpenPGP files (*.asc) and other "id_*" files, denied
// only when they hold a private key block (see WithDenyPrivateKeys), so
// CA bundles (certifi's cacert.pem) stay readable for TLS clients (pip,
// requests, curl).
var PrivateKeyPatterns = []string{"*.pem", "id_*", "*.crt", "*.cer", "*.asc"}

// pathForms returns the absolute path p as written and, when it differs,
// as resolved: the longest existing prefix through filepath.EvalSymlinks,
// the rest as written. Patterns match canonical paths, so a value given
// through a link (HOME on another disk: /home/u -> /data/home/u) must be
// given in both forms (red team round 16, R16-1).
func pathForms(p string) []string {
	out := []string{p}
	d, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			if c := filepath.Join(r, rest); c != p {
				out = append(out, c)
			}
			return out
		}
		if d == "/" || d == "." {
			return out
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = filepath.Dir(d)
	}
}
