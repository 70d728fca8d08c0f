package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestAgentConfigGitReferences (red team F9): the files the repository's
// own .git/config points git at (include.path, core.hooksPath, a filter
// driver's script) are protected like .git/config, existing or not, in
// the workspace's repository and in the one above a workspace that is a
// subdirectory of it; a reference to the workspace root itself, or above
// it, never freezes the root. Control: the same writes succeed without
// the references.
func TestAgentConfigGitReferences(t *testing.T) {
	const localConfig = `[core]
	hooksPath = .hooks
[include]
	path = ../tools/gitconfig
[filter "x"]
	clean = ./scripts/clean.sh %f
[diff "y"]
	textconv = .
[core]
	editor = ../../outside.sh
`
	writes := []string{".hooks/pre-commit", "tools/gitconfig", "scripts/clean.sh"}
	for _, tc := range []struct {
		name string
		sub  string // the workspace, relative to the repository's top
	}{
		{"workspace is the repository", ""},
		{"workspace is a subdirectory", "proj"},
	} {
		for _, refs := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "", false: "/control"}[refs], func(t *testing.T) {
				top := t.TempDir()
				root := filepath.Join(top, tc.sub)
				for _, d := range []string{".git", filepath.Join(tc.sub, "tools"), filepath.Join(tc.sub, "scripts")} {
					require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
				}
				cfg := "[core]\n\tbare = false\n"
				if refs {
					cfg = localConfig
					if tc.sub != "" { // the same files, named from the top
						cfg = "[core]\n\thooksPath = proj/.hooks\n[include]\n\tpath = ../proj/tools/gitconfig\n[filter \"x\"]\n\tclean = ./proj/scripts/clean.sh\n[core]\n\tfsmonitor = ./proj\n"
					}
				}
				require.NoError(t, os.WriteFile(filepath.Join(top, ".git/config"), []byte(cfg), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(root, "tools/gitconfig"), []byte("[alias]\n"), 0o644))
				ws, err := jail.New(root, jail.WithProtectedAgentConfig())
				require.NoError(t, err)
				defer ws.Close()
				prot := ws.AgentConfigProtected()
				assert.NotContains(t, prot, ws.Root(), "the root is never protected by a reference")
				assert.NotContains(t, prot, filepath.Dir(ws.Root()))
				for _, w := range writes {
					err := ws.MkdirAll(filepath.Dir(w), 0o755) // .hooks itself cannot be made
					if err == nil {
						err = ws.WriteFile(w, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
					}
					if refs {
						assert.ErrorIs(t, err, jail.ErrReadOnly, w)
						assert.NotZero(t, ws.Narrowing(filepath.Join(ws.Root(), w))&jail.NarrowAgentConfig, w)
					} else {
						assert.NoError(t, err, "control: %s", w)
					}
				}
				assert.NoError(t, ws.WriteFile("free.txt", []byte("x"), 0o644), "the root stays writable")
			})
		}
	}
}

// TestAgentConfigLinkedGitDirReferences (red team round 6, R6-1): a
// submodule's (.git/modules/sub, core.worktree = ../../../sub) and a
// linked worktree's (.git/worktrees/feat, gitdir names
// .worktrees/feat/.git) relative references are taken from their own
// worktree, where git runs them: sub/team-hooks, .worktrees/feat's copy
// of the common configuration's hooks directory and driver script, and
// what the worktree's config.worktree names. Control: the same
// repositories without the references leave those files writable.
func TestAgentConfigLinkedGitDirReferences(t *testing.T) {
	for _, refs := range []bool{true, false} {
		t.Run(map[bool]string{true: "references", false: "control"}[refs], func(t *testing.T) {
			root := t.TempDir()
			mk := func(rel, content string) {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
			}
			common, sub, wt := "[core]\n\tbare = false\n", "[core]\n\tworktree = ../../../sub\n", ""
			if refs {
				common += "[core]\n\thooksPath = team-hooks\n[filter \"x\"]\n\tclean = sh tools/clean.sh\n"
				sub += "[core]\n\thooksPath = team-hooks\n[diff \"d\"]\n\ttextconv = sh tools/conv.sh\n"
				wt = "[core]\n\tfsmonitor = scripts/mon.sh\n"
			}
			mk(".git/config", common)
			mk(".git/HEAD", "ref: refs/heads/main\n")
			mk(".git/modules/sub/config", sub)
			mk(".git/modules/sub/HEAD", "ref: refs/heads/main\n")
			mk("sub/.git", "gitdir: ../.git/modules/sub\n")
			mk(".git/worktrees/feat/HEAD", "ref: refs/heads/feat\n")
			mk(".git/worktrees/feat/commondir", "../..\n")
			mk(".git/worktrees/feat/gitdir", filepath.Join(root, ".worktrees/feat/.git")+"\n")
			mk(".git/worktrees/feat/config.worktree", wt)
			mk(".worktrees/feat/.git", "gitdir: "+filepath.Join(root, ".git/worktrees/feat")+"\n")
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			for _, w := range []string{"sub/team-hooks/pre-commit", "sub/tools/conv.sh", ".worktrees/feat/team-hooks/pre-commit", ".worktrees/feat/tools/clean.sh", ".worktrees/feat/scripts/mon.sh"} {
				err := ws.MkdirAll(filepath.Dir(w), 0o755)
				if err == nil {
					err = ws.WriteFile(w, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
				}
				if refs {
					assert.ErrorIs(t, err, jail.ErrReadOnly, w)
				} else {
					assert.NoError(t, err, "control: %s", w)
				}
			}
		})
	}
}

// TestAgentConfigHookCommand (red team round 6, R6-7): git 2.54's
// configuration-based hooks (hook.NAME.command, git-hook(1)) name a
// command git runs like a hook: its script is protected like a
// core.fsmonitor's. Control: hook.NAME.event alone names nothing.
func TestAgentConfigHookCommand(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[hook \"lint\"]\n\tevent = pre-commit\n\tcommand = sh scripts/lint.sh --fix\n[hook \"x\"]\n\tevent = ./scripts/event-only.sh\n"), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.MkdirAll("scripts", 0o755))
	assert.ErrorIs(t, ws.WriteFile("scripts/lint.sh", []byte("x"), 0o755), jail.ErrReadOnly)
	assert.NoError(t, ws.WriteFile("scripts/event-only.sh", []byte("x"), 0o755), "control")
}

// TestAgentConfigReferenceThroughExistingLink (red team round 9, R9-1):
// a reference whose directory does not exist yet, reached through a
// symbolic link that does (conf -> build/conf under include.path =
// ../conf/git/local.inc; tools -> scripts under core.hooksPath =
// tools/git-hooks), and the target of a dangling hook link
// (.git/hooks/pre-push -> ../../ci/pre-push), are protected where a
// create would put them. Control: a sibling in the same directory stays
// writable.
func TestAgentConfigReferenceThroughExistingLink(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[include]\n\tpath = ../conf/git/local.inc\n[core]\n\thooksPath = tools/git-hooks\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "build"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "scripts"), 0o755))
	require.NoError(t, os.Symlink("build/conf", filepath.Join(root, "conf")))
	require.NoError(t, os.Symlink("scripts", filepath.Join(root, "tools")))
	require.NoError(t, os.Symlink("../../ci/pre-push", filepath.Join(root, ".git/hooks/pre-push")))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	for _, p := range []string{"build/conf/git/local.inc", "scripts/git-hooks/pre-commit", "ci/pre-push"} {
		err := ws.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = ws.WriteFile(p, []byte("x"), 0o755)
		}
		assert.ErrorIs(t, err, jail.ErrReadOnly, p)
	}
	require.NoError(t, ws.MkdirAll("scripts/other", 0o755))
	assert.NoError(t, ws.WriteFile("scripts/other/x.sh", []byte("x"), 0o755), "control")
	assert.NoError(t, ws.WriteFile("build/notes.txt", []byte("x"), 0o644), "control")
}

// TestAgentConfigHooksPathRoot: core.hooksPath naming the workspace root
// itself (".", its absolute path) leaves the root writable but protects
// the hooks git runs there by name, existing or not (red team round 26,
// R26a-9: the command wrote pre-commit at the top and the user's next
// commit ran it). Control: without the reference, pre-commit at the top
// is an ordinary file.
func TestAgentConfigHooksPathRoot(t *testing.T) {
	for _, hp := range []string{".", "ABS", ""} {
		t.Run("hooksPath="+hp, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
			cfg := "[core]\n\tbare = false\n"
			switch hp {
			case "ABS":
				cfg += "\thooksPath = " + root + "\n"
			case ".":
				cfg += "\thooksPath = .\n"
			}
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git/config"), []byte(cfg), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(root, "post-merge"), []byte("#!/bin/sh\n"), 0o755))
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			assert.NotContains(t, ws.AgentConfigProtected(), root, "the root is never protected whole")
			for _, h := range []string{"pre-commit", "post-merge", "hooks/pre-push", "config"} {
				if h == "hooks/pre-push" {
					_ = ws.MkdirAll("hooks", 0o755)
				}
				err := ws.WriteFile(h, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
				if hp == "" {
					assert.NoError(t, err, "control: %s", h)
				} else {
					assert.ErrorIs(t, err, jail.ErrReadOnly, h)
				}
			}
			assert.NoError(t, ws.WriteFile("free.txt", []byte("x"), 0o644), "the root stays writable")
		})
	}
}
