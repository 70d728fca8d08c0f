package sweep_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

// gitIn runs the real git in dir with a clean configuration (HOME
// empty, no system file): what the user's next command there does.
func gitIn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	name := "git"
	if len(args) > 0 && args[0] == "script" { // a terminal for the pager: script(1) runs the git command line
		name, args = args[0], args[1:]
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "PAGER=cat")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("LANDJAIL_REQUIRE_KERNEL") != "" {
			t.Fatal("git is required")
		}
		t.Skip("git not installed")
	}
}

// plantBare turns dir into a bare-repository layout whose config runs
// marker's creation as core.fsmonitor on `git status` (red team N7).
func plantBare(t *testing.T, dir, marker string, extra map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	cfg := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch " + marker + "; false\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o644))
	for n, c := range extra {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644))
	}
}

// TestSweepBareLayout: red team N7. The command turns an existing
// directory of a repository into a bare-repository layout (HEAD,
// objects/, refs/, a config with core.worktree and core.fsmonitor); git's
// discovery stops there before the real .git, and the user's next `git
// status` in it ran the payload. Control: the real git runs it before the
// sweep; after the sweep it does not, and the real repository is intact.
func TestSweepBareLayout(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	_, err := gitIn(t, root, "init", "-q", "-b", "main")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "src/main.c"), []byte("code\n"), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()

	marker := filepath.Join(t.TempDir(), "pwned")
	plantBare(t, filepath.Join(root, "src"), marker, nil)
	// Control: the layout works on the real git.
	_, _ = gitIn(t, filepath.Join(root, "src"), "status")
	require.FileExists(t, marker, "control: git ran the planted core.fsmonitor")
	require.NoError(t, os.Remove(marker))

	q, err := snap.Sweep()
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	assert.Equal(t, "created", got["src/HEAD"])
	assert.Equal(t, "created", got["src/config"])
	out, _ := gitIn(t, filepath.Join(root, "src"), "status")
	assert.NoFileExists(t, marker, "git ran the payload after the sweep: %s", out)
	out, err = gitIn(t, filepath.Join(root, "src"), "rev-parse", "--absolute-git-dir")
	require.NoError(t, err, out)
	assert.Equal(t, filepath.Join(root, ".git"), strings.TrimSpace(out), "git finds the real repository again")
	assert.FileExists(t, filepath.Join(root, "src/main.c"), "nothing else moved")
}

// TestSweepBareLayoutVariants: the other shapes of the same trick. Each
// row is first shown to run the payload on the real git (control), then
// swept and shown not to.
func TestSweepBareLayoutVariants(t *testing.T) {
	needGit(t)
	outside := t.TempDir() // the command's private HOME: writable, kept between runs
	for _, tc := range []struct {
		name string
		// plant makes the layout in root; returns the directory to run
		// git in and the arguments.
		plant func(t *testing.T, root, marker string) (string, []string)
		want  []string // paths the sweep must list
	}{
		{"workspace root", func(t *testing.T, root, marker string) (string, []string) {
			plantBare(t, root, marker, nil)
			return root, []string{"status"}
		}, []string{"HEAD", "config"}},
		{"HEAD as a symlink", func(t *testing.T, root, marker string) (string, []string) {
			d := filepath.Join(root, "lib")
			plantBare(t, d, marker, nil)
			require.NoError(t, os.Remove(filepath.Join(d, "HEAD")))
			require.NoError(t, os.Symlink("refs/heads/main", filepath.Join(d, "HEAD")))
			return d, []string{"status"}
		}, []string{"lib/HEAD", "lib/config"}},
		{"commondir to a directory outside", func(t *testing.T, root, marker string) (string, []string) {
			// HEAD and commondir only: objects, refs and the config
			// live in a repository directory outside the workspace;
			// its core.pager runs on the user's next `git branch` on
			// a terminal (script(1) gives it one).
			common := filepath.Join(outside, "common-"+filepath.Base(root))
			plantBare(t, common, marker, nil)
			cfg := "[core]\n\tbare = true\n\tpager = \"touch " + marker + "; cat\"\n"
			require.NoError(t, os.WriteFile(filepath.Join(common, "config"), []byte(cfg), 0o644))
			d := filepath.Join(root, "lib")
			require.NoError(t, os.MkdirAll(d, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(d, "commondir"), []byte(common+"\n"), 0o644))
			return d, []string{"script", "-qec", "git branch", "/dev/null"}
		}, []string{"lib/HEAD", "lib/commondir"}},
		{"hooks in a bare layout", func(t *testing.T, root, marker string) (string, []string) {
			d := filepath.Join(root, "lib")
			plantBare(t, d, filepath.Join(t.TempDir(), "unused"), nil)
			require.NoError(t, os.WriteFile(filepath.Join(d, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(d, "hooks"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d, "hooks/pre-commit"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644))
			return d, []string{"-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "m"}
		}, []string{"lib/HEAD", "lib/config", "lib/hooks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "README"), []byte("x\n"), 0o644))
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			snap, err := sweep.Take(ws, 0)
			require.NoError(t, err)
			defer snap.Close()
			marker := filepath.Join(t.TempDir(), "pwned")
			dir, args := tc.plant(t, root, marker)
			out, _ := gitIn(t, dir, args...)
			require.FileExists(t, marker, "control: the real git ran the payload: %s", out)
			require.NoError(t, os.Remove(marker))
			q, err := snap.Sweep()
			require.NoError(t, err)
			var paths []string
			for _, e := range q {
				paths = append(paths, e.Path)
			}
			for _, p := range tc.want {
				assert.Contains(t, paths, p)
			}
			out, _ = gitIn(t, dir, args...)
			assert.NoFileExists(t, marker, "the payload ran after the sweep: %s", out)
		})
	}
}

// TestSweepExistingBareRepository: a bare repository that was in the
// workspace before the command (a test fixture) keeps working untouched
// when the command leaves it alone, and its config is restored when the
// command changes it. Control: the changed config runs the payload.
func TestSweepExistingBareRepository(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	bare := filepath.Join(root, "fixture.git")
	_, err := gitIn(t, root, "init", "-q", "--bare", "-b", "main", bare)
	require.NoError(t, err)
	orig, err := os.ReadFile(filepath.Join(bare, "config"))
	require.NoError(t, err)
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()

	q, err := snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q, "an untouched bare repository is left alone")

	marker := filepath.Join(t.TempDir(), "pwned")
	f, err := os.OpenFile(filepath.Join(bare, "config"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch " + marker + "; false\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out, _ := gitIn(t, bare, "status")
	require.FileExists(t, marker, "control: the changed config runs the payload: %s", out)
	require.NoError(t, os.Remove(marker))

	q, err = snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Equal(t, "fixture.git/config", q[0].Path)
	assert.Equal(t, "changed", q[0].Reason)
	assert.True(t, q[0].Restored)
	now, err := os.ReadFile(filepath.Join(bare, "config"))
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(now))
	assert.False(t, strings.Contains(string(now), marker))
}

// TestSweepNestedGitReferences (red team F9, nested): a repository
// nested in the workspace whose own config sets core.hooksPath = .hooks
// and includes cfg/inc; the command writes .hooks/pre-commit and appends
// a core.fsmonitor to cfg/inc. The real git runs both before the sweep
// (control) and neither after it; cfg/inc gets its content back.
func TestSweepNestedGitReferences(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	sub := filepath.Join(root, "vendor/x")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, "cfg"), 0o755))
	_, err := gitIn(t, sub, "init", "-q", "-b", "main")
	require.NoError(t, err)
	_, err = gitIn(t, sub, "config", "core.hooksPath", ".hooks")
	require.NoError(t, err)
	_, err = gitIn(t, sub, "config", "include.path", "../cfg/inc")
	require.NoError(t, err)
	orig := "[alias]\n\tst = status\n"
	require.NoError(t, os.WriteFile(filepath.Join(sub, "cfg/inc"), []byte(orig), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()

	marks := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(sub, ".hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".hooks/pre-commit"), []byte("#!/bin/sh\ntouch "+marks+"/commit\n"), 0o755))
	f, err := os.OpenFile(filepath.Join(sub, "cfg/inc"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[core]\n\tfsmonitor = \"touch " + marks + "/status; false\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	commit := []string{"-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "m"}
	_, _ = gitIn(t, sub, "status")
	_, _ = gitIn(t, sub, commit...)
	require.FileExists(t, filepath.Join(marks, "status"), "control: the included fsmonitor runs")
	require.FileExists(t, filepath.Join(marks, "commit"), "control: the hook runs")
	require.NoError(t, os.Remove(filepath.Join(marks, "status")))
	require.NoError(t, os.Remove(filepath.Join(marks, "commit")))

	q, err := snap.Sweep()
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	assert.Equal(t, "created", got["vendor/x/.hooks"])
	assert.Equal(t, "changed", got["vendor/x/cfg/inc"])
	b, err := os.ReadFile(filepath.Join(sub, "cfg/inc"))
	require.NoError(t, err)
	assert.Equal(t, orig, string(b))
	_, _ = gitIn(t, sub, "status")
	_, _ = gitIn(t, sub, commit...)
	assert.NoFileExists(t, filepath.Join(marks, "status"))
	assert.NoFileExists(t, filepath.Join(marks, "commit"))
}

// TestSweepSequencerInWorktreesAndModules (red team R4): a forged
// rebase in progress in a linked worktree's or a submodule's git
// directory (its todo's exec lines run on the user's `git rebase
// --continue` there) is swept like .git/rebase-merge; red before the
// patterns existed (nothing was listed).
func TestSweepSequencerInWorktreesAndModules(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/worktrees/wt", ".git/modules/sub/nested"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	want := []string{
		".git/worktrees/wt/rebase-merge", ".git/worktrees/wt/sequencer",
		".git/modules/sub/rebase-merge", ".git/modules/sub/nested/rebase-apply",
	}
	for _, d := range want {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "git-rebase-todo"), []byte("exec touch /tmp/pwned\n"), 0o644))
	}
	q, err := snap.Sweep()
	require.NoError(t, err)
	var got []string
	for _, e := range q {
		got = append(got, e.Path)
	}
	assert.ElementsMatch(t, want, got)
}

// TestSweepQuarantinedNameReplacedByLink (red team R3): a later call
// replaces a quarantined directory's name with a symbolic link to a
// repository outside the workspace (the private HOME); the user who
// enters it runs that repository's core.fsmonitor. The link is swept;
// before, the walk skipped quarantined names before it looked at links.
// Control: the quarantined link itself is not swept again (red team N6).
func TestSweepQuarantinedNameReplacedByLink(t *testing.T) {
	root := t.TempDir()
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	q, err := snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	quarantined := q[0].MovedTo

	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "r/.git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "r/.git/config"), []byte(evilConfig), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(root, quarantined)))
	require.NoError(t, os.Symlink(filepath.Join(home, "r"), filepath.Join(root, quarantined)))
	q, err = snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Equal(t, quarantined, q[0].Path)
	assert.Equal(t, "created", q[0].Reason)
	assert.Empty(t, q[0].Error)
	_, err = os.Lstat(filepath.Join(root, quarantined))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// Red team S7: the quarantine is a file that records the target,
	// not the link under another name (entering that ran the
	// repository's fsmonitor).
	fi, err := os.Lstat(filepath.Join(root, q[0].MovedTo))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "a regular file, not a link: %v", fi.Mode())
	b, err := os.ReadFile(filepath.Join(root, q[0].MovedTo))
	require.NoError(t, err)
	assert.Contains(t, string(b), filepath.Join(home, "r"))

	q, err = snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q, "the quarantined link is not swept again")
}

// TestSweepPythonShadow (red team R1): pre-commit's hook runs
// `python -mpre_commit` at the worktree's top, where Python looks first:
// a pre_commit.py the command creates there runs on the user's next
// commit. A module or package created at the top of a repository whose
// hooks run Python with -m is swept; one that was there before, and one
// in a subdirectory, are left alone; in a repository whose hooks do not
// run Python nothing is swept (control).
func TestSweepPythonShadow(t *testing.T) {
	for _, hook := range []string{
		"#!/usr/bin/env bash\nINSTALL_PYTHON=/usr/bin/python3\nexec \"$INSTALL_PYTHON\" -mpre_commit \"${ARGS[@]}\"\n",
		"#!/bin/sh\nexec make lint\n", // control
	} {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "pkg"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git/hooks/pre-commit"), []byte(hook), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "setup.py"), []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "pkg/__init__.py"), []byte("x"), 0o644))
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		snap, err := sweep.Take(ws, 0)
		require.NoError(t, err)
		for n, c := range map[string]string{
			"pre_commit.py": "import os", "yaml/__init__.py": "x", "setup.py": "changed", "pkg/__init__.py": "changed",
			"pkg/mod.py": "x", "sub/deep/x.py": "x",
		} {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(c), 0o644))
		}
		q, err := snap.Sweep()
		require.NoError(t, err)
		var got []string
		for _, e := range q {
			got = append(got, e.Path)
		}
		if strings.Contains(hook, "pre_commit") {
			assert.ElementsMatch(t, []string{"pre_commit.py", "yaml/__init__.py"}, got)
		} else {
			assert.Empty(t, got, "control: no Python hook, nothing swept")
		}
		snap.Close()
		ws.Close()
	}
}

// TestSweepRoundFour: red team round 4's bypasses, each swept now; red
// before each fix (the control rows show what is left alone).
//   - S1: the workspace is a linked worktree (.git a gitfile): its hooks
//     live in the main repository's git directory, outside;
//   - S3: a symbolic link at the top named like the package;
//   - S5: a hook found through core.hooksPath;
//   - S2, S4: lefthook's local configuration, mise's other files.
func TestSweepRoundFour(t *testing.T) {
	needGit(t)
	const pyHook = "#!/bin/sh\nexec python3 -mpre_commit \"$@\"\n"
	sweepAfter := func(t *testing.T, root string, act func()) []string {
		t.Helper()
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		defer ws.Close()
		snap, err := sweep.Take(ws, 0)
		require.NoError(t, err)
		defer snap.Close()
		act()
		q, err := snap.Sweep()
		require.NoError(t, err)
		var got []string
		for _, e := range q {
			got = append(got, e.Path)
		}
		return got
	}
	write := func(t *testing.T, p, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o755))
	}

	t.Run("S1 linked worktree", func(t *testing.T) {
		main := t.TempDir()
		_, err := gitIn(t, main, "init", "-q", "-b", "main")
		require.NoError(t, err)
		_, err = gitIn(t, main, "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "m")
		require.NoError(t, err)
		write(t, filepath.Join(main, ".git/hooks/pre-commit"), pyHook)
		wt := filepath.Join(t.TempDir(), "wt")
		out, err := gitIn(t, main, "worktree", "add", "-q", wt)
		require.NoError(t, err, out)
		got := sweepAfter(t, wt, func() { write(t, filepath.Join(wt, "pre_commit.py"), "import os") })
		assert.Equal(t, []string{"pre_commit.py"}, got)
	})
	t.Run("S3 link named like the package", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, ".git/hooks/pre-commit"), pyHook)
		write(t, filepath.Join(root, "tools/pc/__init__.py"), "import os")
		got := sweepAfter(t, root, func() { require.NoError(t, os.Symlink("tools/pc", filepath.Join(root, "pre_commit"))) })
		assert.Equal(t, []string{"pre_commit"}, got)
	})
	t.Run("S5 hooks through core.hooksPath", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, ".git/config"), "[core]\n\thooksPath = scripts/hooks\n")
		write(t, filepath.Join(root, "scripts/hooks/pre-commit"), "#!/bin/sh\npython3 -m black .\n")
		got := sweepAfter(t, root, func() { write(t, filepath.Join(root, "black/__init__.py"), "import os") })
		assert.Contains(t, got, "black/__init__.py")
	})
	t.Run("S2 S4 lefthook and mise files", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
		names := []string{"lefthook-local.yml", ".lefthook-local.yaml", "lefthook.yaml", ".config/lefthook-local.yml",
			"mise/config.toml", "mise.dev.toml", ".mise.ci.toml", ".tool-versions", "sub/mise.local.toml"}
		got := sweepAfter(t, root, func() {
			for _, n := range names {
				write(t, filepath.Join(root, n), "x")
			}
			write(t, filepath.Join(root, "miser.toml"), "x") // control: not a mise name
		})
		for _, n := range []string{"lefthook-local.yml", ".lefthook-local.yaml", "lefthook.yaml", ".config/lefthook-local.yml",
			"mise", "mise.dev.toml", ".mise.ci.toml", ".tool-versions", "sub/mise.local.toml"} {
			assert.Contains(t, got, n)
		}
		assert.NotContains(t, got, "miser.toml")
	})
}

// TestSweepRoundFive: red team round 5's findings that a name or a rule
// closes, each red before its fix.
func TestSweepRoundFive(t *testing.T) {
	write := func(t *testing.T, p, c string, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), mode))
	}
	take := func(t *testing.T, root string) (*jail.Workspace, *sweep.Snapshot) {
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		snap, err := sweep.Take(ws, 0)
		require.NoError(t, err)
		t.Cleanup(func() { snap.Close(); ws.Close() })
		return ws, snap
	}
	paths := func(q []sweep.Quarantined) map[string]sweep.Quarantined {
		m := map[string]sweep.Quarantined{}
		for _, e := range q {
			m[e.Path] = e
		}
		return m
	}

	t.Run("N8 hook linked into the repository", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, "scripts/pre-commit"), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(root, "scripts/other"), "x", 0o644) // control
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
		require.NoError(t, os.Symlink("../../scripts/pre-commit", filepath.Join(root, ".git/hooks/pre-commit")))
		write(t, filepath.Join(root, "vendor/x/tools/h"), "#!/bin/sh\n", 0o755)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "vendor/x/.git/hooks"), 0o755))
		write(t, filepath.Join(root, "vendor/x/.git/config"), "[core]\n", 0o644)
		require.NoError(t, os.Symlink("../../tools/h", filepath.Join(root, "vendor/x/.git/hooks/pre-commit")))
		ws, snap := take(t, root)
		assert.ErrorIs(t, ws.WriteFile("scripts/pre-commit", []byte("evil"), 0o755), jail.ErrReadOnly)
		assert.NoError(t, ws.WriteFile("scripts/other", []byte("fine"), 0o644), "control: a file no hook links to")
		write(t, filepath.Join(root, "vendor/x/tools/h"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		assert.Equal(t, "changed", got["vendor/x/tools/h"].Reason)
		assert.NotContains(t, got, "scripts/other")
	})
	t.Run("R15a-8 a chain of links from a nested repository's hooks", func(t *testing.T) {
		// sub/.git/hooks -> ../tools/hooks, tools/hooks/commit-msg ->
		// ../../tools2/pc.sh: the script the user's commit runs is
		// swept when changed (red team round 15, R15a-8: it stayed
		// written). Control: a script beside it no link leads to.
		root := t.TempDir()
		write(t, filepath.Join(root, "sub/.git/config"), "[core]\n", 0o644)
		write(t, filepath.Join(root, "sub/tools2/pc.sh"), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(root, "sub/tools2/other.sh"), "#!/bin/sh\n", 0o755)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sub/tools/hooks"), 0o755))
		require.NoError(t, os.Symlink("../tools/hooks", filepath.Join(root, "sub/.git/hooks")))
		require.NoError(t, os.Symlink("../../tools2/pc.sh", filepath.Join(root, "sub/tools/hooks/commit-msg")))
		_, snap := take(t, root)
		write(t, filepath.Join(root, "sub/tools2/pc.sh"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
		write(t, filepath.Join(root, "sub/tools2/other.sh"), "#!/bin/sh\necho fine\n", 0o755)
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		assert.Equal(t, "changed", got["sub/tools2/pc.sh"].Reason)
		assert.NotContains(t, got, "sub/tools2/other.sh", "control")
	})
	t.Run("R16-2 a protected link removed or re-pointed is put back", func(t *testing.T) {
		// .mcp.json -> cfg/mcp.json and the chain .envrc -> env/a ->
		// ../real.sh (env/a protected on the way): removed or re-pointed
		// by the command, each is put back with its target (red team
		// round 16, R16-2: neither was, and the target lost its
		// protection for the next run). Control: a link nothing
		// protects stays removed.
		root := t.TempDir()
		write(t, filepath.Join(root, "cfg/mcp.json"), "{}", 0o644)
		write(t, filepath.Join(root, "real.sh"), "x", 0o644)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "env"), 0o755))
		require.NoError(t, os.Symlink("cfg/mcp.json", filepath.Join(root, ".mcp.json")))
		require.NoError(t, os.Symlink("env/a", filepath.Join(root, ".envrc")))
		require.NoError(t, os.Symlink("../real.sh", filepath.Join(root, "env/a")))
		require.NoError(t, os.Symlink("real.sh", filepath.Join(root, "plain")))
		_, snap := take(t, root)
		require.NoError(t, os.Remove(filepath.Join(root, ".mcp.json")))
		require.NoError(t, os.Remove(filepath.Join(root, "env/a")))
		require.NoError(t, os.Symlink("/tmp/evil", filepath.Join(root, "env/a")))
		require.NoError(t, os.Remove(filepath.Join(root, "plain")))
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		assert.Equal(t, "removed", got[".mcp.json"].Reason)
		assert.True(t, got[".mcp.json"].Restored)
		assert.True(t, got["env/a"].Restored, "%+v", got["env/a"])
		for l, want := range map[string]string{".mcp.json": "cfg/mcp.json", "env/a": "../real.sh"} {
			t2, err := os.Readlink(filepath.Join(root, l))
			require.NoError(t, err, l)
			assert.Equal(t, want, t2, l)
		}
		_, err = os.Lstat(filepath.Join(root, "plain"))
		assert.ErrorIs(t, err, fs.ErrNotExist, "control: an unprotected link stays removed")
		assert.NotContains(t, got, "plain")
	})
	t.Run("R17a-7 a protected link whose directory is moved away and replaced", func(t *testing.T) {
		// .git/hooks/pre-commit -> ../../hooks/pc -> ../scripts/impl/pc.sh
		// with hooks/ holding only the link: the command moves hooks/
		// away and puts a link to its own directory there (mv hooks h2
		// && ln -s evil/h hooks). The new link is quarantined and
		// hooks/pc put back in a new hooks/ (red team round 17,
		// R17a-7: "no such file or directory", the user's hook silently
		// stopped). Control: an unprotected directory's removal stays.
		for _, op := range []string{"mvdirlink", "linkdir", "mvfile", "fifo"} {
			t.Run(op, func(t *testing.T) {
				root := t.TempDir()
				write(t, filepath.Join(root, ".git/config"), "[core]\n", 0o644)
				write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n", 0o644)
				write(t, filepath.Join(root, "scripts/impl/pc.sh"), "#!/bin/sh\n", 0o755)
				require.NoError(t, os.MkdirAll(filepath.Join(root, "hooks"), 0o750))
				require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
				require.NoError(t, os.MkdirAll(filepath.Join(root, "plaindir"), 0o755))
				require.NoError(t, os.Symlink("../scripts/impl/pc.sh", filepath.Join(root, "hooks/pc")))
				require.NoError(t, os.Symlink("../../hooks/pc", filepath.Join(root, ".git/hooks/pre-commit")))
				_, snap := take(t, root)
				write(t, filepath.Join(root, "evil/h/pc"), "#!/bin/sh\necho PWNED\n", 0o755)
				if op == "mvdirlink" || op == "mvfile" {
					require.NoError(t, os.Rename(filepath.Join(root, "hooks"), filepath.Join(root, "h2")))
				} else {
					require.NoError(t, os.RemoveAll(filepath.Join(root, "hooks")))
				}
				switch op {
				case "mvfile": // a regular file in its place (red team round 18, R18a-6)
					write(t, filepath.Join(root, "hooks"), "x", 0o644)
				case "fifo":
					require.NoError(t, syscall.Mkfifo(filepath.Join(root, "hooks"), 0o644))
				default:
					require.NoError(t, os.Symlink("evil/h", filepath.Join(root, "hooks")))
				}
				require.NoError(t, os.Remove(filepath.Join(root, "plaindir")))
				q, err := snap.Sweep()
				require.NoError(t, err)
				got := paths(q)
				assert.True(t, got["hooks/pc"].Restored, "%+v", got["hooks/pc"])
				fi, err := os.Lstat(filepath.Join(root, "hooks"))
				require.NoError(t, err)
				assert.True(t, fi.IsDir(), "hooks is a directory again")
				l, err := os.Readlink(filepath.Join(root, "hooks/pc"))
				require.NoError(t, err)
				assert.Equal(t, "../scripts/impl/pc.sh", l)
				_, err = os.Stat(filepath.Join(root, ".git/hooks/pre-commit"))
				assert.NoError(t, err, "the hook leads to the user's script again")
				_, err = os.Lstat(filepath.Join(root, "plaindir"))
				assert.ErrorIs(t, err, fs.ErrNotExist, "control")
			})
		}
	})
	t.Run("N1 N3 N4 N5 names, N6 exec bits", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
		_, snap := take(t, root)
		names := []string{".miserc.toml", ".config/miserc.toml", "lefthook-local.jsonc", ".lefthook-local/pre-commit/x.sh",
			"opencode.jsonc", ".kilocode/mcp.json", "crush.json", ".qwen/settings.json", ".factory/settings.json", ".junie/mcp/mcp.json",
			".github/hooks/session.json", ".clinerules/hooks/TaskStart", ".cline/hooks/PreToolUse", ".amp/settings.json", ".openhands/setup.sh",
			".augment/settings.json", ".trae/mcp.json", ".tabnine/mcp_servers.json", ".env.leave", "sub/.autoenv.zsh", "sub/.hg/hgrc", ".jj/repo/config.toml", ".pdbrc", "sub/.Rprofile", ".irbrc", "sub/.ghci",
			".git/info/lefthook-remotes/org/lefthook.yml",
			".local-overcommit.yml", ".huskyrc.json", ".lintstagedrc.mjs", "lint-staged.config.cjs", "hk.local.pkl", ".pre-commit-config.yml", "sub/.overcommit.yml", ".envrc.local", ".direnv/python-3/bin/git"}
		for _, n := range names {
			write(t, filepath.Join(root, n), "x", 0o755)
		}
		write(t, filepath.Join(root, "notes.jsonc"), "x", 0o644)              // control
		write(t, filepath.Join(root, ".github/workflows/ci.yml"), "x", 0o644) // control: .github/ beside hooks/
		write(t, filepath.Join(root, ".env.example"), "x", 0o644)             // control
		write(t, filepath.Join(root, "sub/.env"), "x", 0o644)                 // control: --deny-secrets' file, not agent configuration (R12-16)
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		for _, n := range []string{".miserc.toml", ".config/miserc.toml", "lefthook-local.jsonc", ".lefthook-local",
			"opencode.jsonc", ".kilocode", "crush.json", ".qwen", ".envrc.local", ".direnv", ".factory", ".junie",
			".github/hooks", ".clinerules", ".cline", ".amp", ".openhands", ".augment", ".trae", ".tabnine", ".env.leave", "sub/.autoenv.zsh", "sub/.hg/hgrc", ".jj/repo/config.toml", ".pdbrc", "sub/.Rprofile", ".irbrc", "sub/.ghci",
			".git/info/lefthook-remotes",
			".local-overcommit.yml", ".huskyrc.json", ".lintstagedrc.mjs", "lint-staged.config.cjs", "hk.local.pkl", ".pre-commit-config.yml", "sub/.overcommit.yml"} {
			assert.Contains(t, got, n)
		}
		assert.NotContains(t, got, "notes.jsonc")
		assert.NotContains(t, got, ".github/workflows/ci.yml")
		assert.NotContains(t, got, ".github")
		assert.NotContains(t, got, ".env.example")
		assert.NotContains(t, got, "sub/.env")
		fi, err := os.Lstat(filepath.Join(root, got[".envrc.local"].MovedTo))
		require.NoError(t, err)
		assert.Zero(t, fi.Mode().Perm()&0o111, "a quarantined file is not executable any more")
	})
	t.Run("N9 python from stdin", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, ".git/hooks/pre-commit"), "#!/bin/sh\npython3 - <<'EOF'\nimport yaml\nEOF\n", 0o755)
		_, snap := take(t, root)
		write(t, filepath.Join(root, "yaml.py"), "import os", 0o644)
		q, err := snap.Sweep()
		require.NoError(t, err)
		assert.Contains(t, paths(q), "yaml.py")
	})
	// Red team round 11, R11a-9: a repository the command makes takes
	// the global configuration's relative hooksPath from its own top;
	// and a global hook that runs Python from the top makes a new
	// pre_commit.py there a hook. Control: a file beside the new hooks
	// directory stays.
	t.Run("R11a-9 global hooksPath and Python hook in a repository made by the command", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
		write(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = .hooks\n", 0o644)
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "src"), 0o755))
		_, snap := take(t, root)
		for _, top := range []string{"lib/nd", "src"} {
			write(t, filepath.Join(root, top, ".git/HEAD"), "ref: refs/heads/main\n", 0o644)
			require.NoError(t, os.MkdirAll(filepath.Join(root, top, ".git/objects"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(root, top, ".git/refs"), 0o755))
			write(t, filepath.Join(root, top, ".hooks/pre-commit"), "#!/bin/sh\npython3 -m pre_commit\n", 0o755)
			write(t, filepath.Join(root, top, "pre_commit.py"), "import os\n", 0o644)
			write(t, filepath.Join(root, top, "notes.txt"), "x", 0o644)
		}
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		for _, top := range []string{"lib/nd", "src"} {
			assert.Contains(t, got, top+"/.hooks")
			assert.Contains(t, got, top+"/pre_commit.py")
			assert.NotContains(t, got, top+"/notes.txt")
		}
	})
	t.Run("N2 global hooksPath in a nested repository", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		write(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = .hooks\n", 0o644)
		root := t.TempDir()
		write(t, filepath.Join(root, "vendor/x/.git/config"), "[core]\n", 0o644)
		_, snap := take(t, root)
		write(t, filepath.Join(root, "vendor/x/.hooks/pre-commit"), "#!/bin/sh\n", 0o755)
		q, err := snap.Sweep()
		require.NoError(t, err)
		assert.Contains(t, paths(q), "vendor/x/.hooks")
	})

	// Red team round 6, R6-1: a nested repository's submodule
	// (vendor/x/.git/modules/s, core.worktree = ../../../s) and linked
	// worktree (vendor/x/.git/worktrees/w) take their relative
	// references from their own worktrees, not from the git directory's
	// parent. Control: a file no reference names stays.
	t.Run("R6-1 a nested repository's submodule and linked worktree", func(t *testing.T) {
		root := t.TempDir()
		x := filepath.Join(root, "vendor/x")
		write(t, filepath.Join(x, ".git/config"), "[filter \"f\"]\n\tclean = sh tools/clean.sh\n", 0o644)
		write(t, filepath.Join(x, ".git/HEAD"), "ref: refs/heads/main\n", 0o644)
		require.NoError(t, os.MkdirAll(filepath.Join(x, ".git/objects"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(x, ".git/refs"), 0o755))
		write(t, filepath.Join(x, ".git/modules/s/config"), "[core]\n\tworktree = ../../../s\n\thooksPath = team-hooks\n", 0o644)
		write(t, filepath.Join(x, ".git/modules/s/HEAD"), "ref: refs/heads/main\n", 0o644)
		require.NoError(t, os.MkdirAll(filepath.Join(x, ".git/modules/s/objects"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(x, ".git/modules/s/refs"), 0o755))
		write(t, filepath.Join(x, "s/.git"), "gitdir: ../.git/modules/s\n", 0o644)
		write(t, filepath.Join(x, ".git/worktrees/w/HEAD"), "ref: refs/heads/w\n", 0o644)
		write(t, filepath.Join(x, ".git/worktrees/w/commondir"), "../..\n", 0o644)
		write(t, filepath.Join(x, ".git/worktrees/w/gitdir"), filepath.Join(x, "wt/w/.git")+"\n", 0o644)
		write(t, filepath.Join(x, ".git/worktrees/w/config.worktree"), "[core]\n\thooksPath = wt-hooks\n", 0o644)
		write(t, filepath.Join(x, "wt/w/.git"), "gitdir: "+filepath.Join(x, ".git/worktrees/w")+"\n", 0o644)
		write(t, filepath.Join(x, "wt/w/tools/clean.sh"), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(x, "wt/w/free.txt"), "x", 0o644)
		_, snap := take(t, root)
		write(t, filepath.Join(x, "s/team-hooks/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
		write(t, filepath.Join(x, "wt/w/wt-hooks/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
		write(t, filepath.Join(x, "wt/w/tools/clean.sh"), "#!/bin/sh\ntouch /tmp/pwned\n", 0o755)
		write(t, filepath.Join(x, "wt/w/free.txt"), "y", 0o644)
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := paths(q)
		assert.Contains(t, got, "vendor/x/s/team-hooks", "the submodule's hooks directory, in its worktree")
		assert.Contains(t, got, "vendor/x/wt/w/wt-hooks", "the linked worktree's config.worktree")
		assert.Equal(t, "changed", got["vendor/x/wt/w/tools/clean.sh"].Reason, "the common configuration's driver, in the linked worktree")
		assert.NotContains(t, got, "vendor/x/wt/w/free.txt", "control")
	})
}

// TestSweepRestoresDeletedFiles (red team round 20, R20b-6): a nested
// repository's protected hook the command removed, and a whole hooks
// directory removed, are put back with their content and mode, reported
// "deleted"; control: an unprotected file stays removed. Red before:
// neither was put back, nothing was reported.
func TestSweepRestoresDeletedFiles(t *testing.T) {
	for _, op := range []string{"rm", "rmdir"} {
		t.Run(op, func(t *testing.T) {
			root := t.TempDir()
			git := filepath.Join(root, "sub/.git")
			for _, d := range []string{"objects", "refs", "hooks"} {
				require.NoError(t, os.MkdirAll(filepath.Join(git, d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			hook := filepath.Join(git, "hooks/pre-commit")
			require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\nexec ./scan-secrets\n"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644))
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			snap, err := sweep.Take(ws, 0)
			require.NoError(t, err)
			defer snap.Close()
			if op == "rm" {
				require.NoError(t, os.Remove(hook))
			} else {
				require.NoError(t, os.RemoveAll(filepath.Dir(hook)))
			}
			require.NoError(t, os.Remove(filepath.Join(root, "notes.txt")))
			q, err := snap.Sweep()
			require.NoError(t, err)
			got := map[string]sweep.Quarantined{}
			for _, e := range q {
				got[e.Path] = e
			}
			require.Contains(t, got, "sub/.git/hooks/pre-commit")
			assert.Equal(t, "deleted", got["sub/.git/hooks/pre-commit"].Reason)
			assert.True(t, got["sub/.git/hooks/pre-commit"].Restored)
			b, err := os.ReadFile(hook)
			require.NoError(t, err)
			assert.Equal(t, "#!/bin/sh\nexec ./scan-secrets\n", string(b))
			fi, err := os.Stat(hook)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())
			_, err = os.Lstat(filepath.Join(root, "notes.txt"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "control: an unprotected file stays removed")
			assert.NotContains(t, got, "notes.txt")
		})
	}
}

// TestSweepRestoreKeepsOwner: a protected file of another user that the
// command changed is given back as theirs, when landjail runs as root
// (red team round 25, R25b-5's kin: restored as root's, a user's
// .git/config was no longer theirs, and git refuses a repository with
// files of another owner). Control: the content is restored.
func TestSweepRestoreKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	needGit(t)
	root := t.TempDir()
	_, err := gitIn(t, root, "init", "-q", "-b", "main")
	require.NoError(t, err)
	cfg := filepath.Join(root, ".git", "config")
	orig, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.NoError(t, os.Chown(cfg, 65534, 65533))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.Remove(cfg))
	require.NoError(t, os.WriteFile(cfg, []byte("[core]\n\tfsmonitor = true\n"), 0o644))
	q, err := snap.Sweep()
	require.NoError(t, err)
	require.NotEmpty(t, q)
	now, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(now), "control: restored")
	fi, err := os.Stat(cfg)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65533}, [2]uint32{st.Uid, st.Gid}, "owner and group kept")
}
