package main

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// hostGit runs git as the user would, unconfined, in dir.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := osexec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// gitRepo makes a workspace that is a git repository with one commit
// (a.txt, src/main.go).
func gitRepo(t *testing.T) string {
	ws := wsDir(t)
	hostGit(t, ws, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src/main.go"), []byte("package main\n"), 0o644))
	hostGit(t, ws, "add", "a.txt", "src")
	hostGit(t, ws, "commit", "-qm", "init")
	return ws
}

// TestRunAgentConfigNestedRepo (issue 20 item 3): the command creates a
// repository below the workspace and sets core.fsmonitor in it; with
// --protect-agent-config the user's next `git status` there (a prompt on
// cd, an IDE) does not run it, and stderr names the quarantined file. The
// control, without the flag, shows the attack works: git runs the
// command. Every layer (the default, and --no-namespaces).
func TestRunAgentConfigNestedRepo(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, tc := range []struct {
		name  string
		flags []string
		safe  bool
	}{
		{"control: no --protect-agent-config", []string{"--deny-secrets"}, false},
		{"--protect-agent-config", []string{"--deny-secrets", "--protect-agent-config"}, true},
		{"--protect-agent-config --no-namespaces", []string{"--deny-secrets", "--protect-agent-config", "--no-namespaces"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			mark := filepath.Join(t.TempDir(), "pwned")
			script := "git init -q src/vendor && git -C src/vendor config core.fsmonitor 'touch " + mark + "; false' && echo planted"
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", script)...)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, "planted\n", stdout, stderr)
			_, err := os.Stat(mark)
			require.ErrorIs(t, err, os.ErrNotExist, "the command itself cannot run it")

			// The user's next git status in the nested repository.
			cmd := osexec.Command("git", "status", "--porcelain")
			cmd.Dir = filepath.Join(ws, "src/vendor")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
			out, _ := cmd.CombinedOutput()
			_, err = os.Stat(mark)
			if !tc.safe {
				assert.NoError(t, err, "control: git ran core.fsmonitor (%s)", out)
				return
			}
			assert.ErrorIs(t, err, os.ErrNotExist, "git ran the command's core.fsmonitor: %s", out)
			assert.Contains(t, stderr, "landjail: quarantined src/vendor/.git/config -> src/vendor/.git/config.landjail-quarantined-")
		})
	}
}

// TestRunAgentConfigRootWritable (issue 21): with the agent defaults
// (--deny-secrets --protect-agent-config) and the namespace layer, the
// workspace root and .git stay writable: a new file at the root and a
// commit work inside, no directory is frozen, and --print-rules says so
// (no chain rule; the missing names are listed as swept). Before the
// sweep existed, the missing agent-config names (.envrc, .mcp.json, ...)
// were Landlock carve-outs that froze the root and .git: this failed.
// Landlock-only (--no-namespaces) the root stays frozen, and stderr says
// so.
func TestRunAgentConfigRootWritable(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	script := "touch new.txt && git add new.txt && git -c user.name=a -c user.email=a@example.com commit -qm new && echo committed"
	for _, tc := range []struct {
		name   string
		flags  []string
		frozen bool
	}{
		{"namespaces (default)", nil, !layer},
		{"--no-namespaces", []string{"--no-namespaces"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			base := append([]string{"run", "--deny-secrets", "--protect-agent-config", "--workspace", ws}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(base, "--timeout", "1m", "--", "sh", "-c", script)...)
			code2, rules, _ := runCLI(t, append(base, "--print-rules")...)
			require.Equal(t, 0, code2)
			if tc.frozen {
				assert.NotEqual(t, 0, code, stdout)
				assert.Contains(t, stderr, "landjail: frozen directory "+ws+":")
				assert.Contains(t, rules, "chain")
				return
			}
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "committed\n", stdout)
			assert.NotContains(t, stderr, "frozen directory")
			assert.Contains(t, hostGit(t, ws, "log", "--oneline"), "new")
			assert.Contains(t, rules, "# layer: "+landlock.LayerNamespaces.String())
			assert.Contains(t, rules, "# writable: "+ws)
			assert.NotContains(t, "\n"+rules, "\nchain ", "no frozen directory (no chain rule)")
			assert.Contains(t, rules, "# swept after the command (no rule stops its creation): "+filepath.Join(ws, ".envrc"))
			assert.Contains(t, rules, "# read-only mount: "+filepath.Join(ws, ".git/config"))
			// The existing protected files stay read-only.
			code, _, _ = runCLI(t, append(base, "--timeout", "1m", "--", "sh", "-c", "echo x >> .git/config")...)
			assert.NotEqual(t, 0, code)
			b, err := os.ReadFile(filepath.Join(ws, ".git/config"))
			require.NoError(t, err)
			assert.False(t, strings.HasSuffix(string(b), "x\n"))
		})
	}
}

// TestRunAgentConfigSweepAfterTree: the sweep runs once the command's
// whole process tree is dead, so a descendant that detaches (setsid, in
// the background) cannot plant a config after it: landjail kills it
// (with the PID namespace, or as the subreaper with
// --no-pid-namespace). Control: the same script run unconfined plants
// the file a moment after it returns. The report lists what was
// quarantined.
func TestRunAgentConfigSweepAfterTree(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	// Below src/, which exists: Landlock-only, the root is frozen.
	script := "cd src && (setsid sh -c 'sleep 1; mkdir -p late/.git && echo x > late/.git/config' >/dev/null 2>&1 &); mkdir -p now/.git && echo x > now/.git/config; echo started"

	ctl := wsDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(ctl, "src"), 0o755))
	cmd := osexec.Command("sh", "-c", script)
	cmd.Dir = ctl
	require.NoError(t, cmd.Run())
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(ctl, "src/late/.git/config"))
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "control: the detached process plants the config")

	for _, flags := range [][]string{nil, {"--no-pid-namespace"}} {
		t.Run(strings.Join(append([]string{"default"}, flags...), " "), func(t *testing.T) {
			ws := wsDir(t)
			require.NoError(t, os.Mkdir(filepath.Join(ws, "src"), 0o755))
			report := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"run", "--protect-agent-config", "--workspace", ws, "--report", report}, flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", script)...)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, "started\n", stdout)
			assert.Contains(t, stderr, "landjail: quarantined src/now/.git/config")
			time.Sleep(2 * time.Second) // past the detached process's sleep
			_, err := os.Stat(filepath.Join(ws, "src/late/.git/config"))
			assert.ErrorIs(t, err, os.ErrNotExist, "a descendant outlived the run and planted a config after the sweep")
			b, err := os.ReadFile(report)
			require.NoError(t, err)
			var rep struct {
				Quarantined []struct{ Path, Reason string } `json:"quarantined"`
			}
			require.NoError(t, json.Unmarshal(b, &rep))
			if assert.Len(t, rep.Quarantined, 1) {
				assert.Equal(t, "src/now/.git/config", rep.Quarantined[0].Path)
				assert.Equal(t, "created", rep.Quarantined[0].Reason)
			}
		})
	}
}

// TestRunAgentConfigGitReferences (red team F9): the user's
// .git/config includes ../tools/gitconfig and sets core.hooksPath =
// .hooks; the command appends core.fsmonitor to the included file and
// writes .hooks/pre-commit. With --protect-agent-config the user's next
// `git status` and `git commit` run neither (the existing file is
// read-only, the new hook is swept); the control, without the flag,
// shows both run. Every layer. Not parallel: runCLI runs landjail in
// this process, and its KillDescendants would kill a parallel test's
// host git.
func TestRunAgentConfigGitReferences(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, tc := range []struct {
		name  string
		flags []string
		safe  bool
	}{
		{"control: no --protect-agent-config", nil, false},
		{"--protect-agent-config", []string{"--protect-agent-config"}, true},
		{"--protect-agent-config --no-namespaces", []string{"--protect-agent-config", "--no-namespaces"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			require.NoError(t, os.Mkdir(filepath.Join(ws, "tools"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "tools/gitconfig"), []byte("[alias]\n\tst = status\n"), 0o644))
			hostGit(t, ws, "config", "--local", "include.path", "../tools/gitconfig")
			hostGit(t, ws, "config", "--local", "core.hooksPath", ".hooks")
			marks := t.TempDir()
			script := "printf '[core]\\n\\tfsmonitor = \"touch " + marks + "/status; false\"\\n' >> tools/gitconfig; " +
				"mkdir -p .hooks && printf '#!/bin/sh\\ntouch " + marks + "/commit\\n' > .hooks/pre-commit && chmod +x .hooks/pre-commit; echo done"
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			_, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", script)...)
			require.Equal(t, "done\n", stdout, stderr)

			hostGit(t, ws, "status", "--porcelain")
			hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "next")
			for _, m := range []string{"status", "commit"} {
				_, err := os.Stat(filepath.Join(marks, m))
				if !tc.safe {
					assert.NoError(t, err, "control: git ran the command's %s payload", m)
					continue
				}
				assert.ErrorIs(t, err, os.ErrNotExist, "git ran the command's %s payload; stderr: %s", m, stderr)
			}
			if tc.safe {
				// Swept (namespace layer: "quarantined .hooks -> ...") or
				// never made (Landlock-only: the root is frozen).
				assert.NoFileExists(t, filepath.Join(ws, ".hooks/pre-commit"), stderr)
			}
		})
	}
}

// TestRunAgentConfigBareLayout (red team N7): the command turns src/
// into a bare repository's layout whose config sets core.worktree and
// core.fsmonitor; git's discovery stops at src/ before the real .git.
// With --protect-agent-config the user's next `git status` in src/ does
// not run it; the control shows it does. Every layer.
func TestRunAgentConfigBareLayout(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, tc := range []struct {
		name  string
		flags []string
		safe  bool
	}{
		{"control: no --protect-agent-config", nil, false},
		{"--protect-agent-config", []string{"--protect-agent-config"}, true},
		{"--protect-agent-config --no-namespaces", []string{"--protect-agent-config", "--no-namespaces"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			mark := filepath.Join(t.TempDir(), "pwned")
			script := "cd src && echo 'ref: refs/heads/main' > HEAD && mkdir -p objects refs && " +
				"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = \"touch " + mark + "; false\"\\n' > config && echo planted"
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", script)...)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, "planted\n", stdout, stderr)
			cmd := osexec.Command("git", "status", "--porcelain")
			cmd.Dir = filepath.Join(ws, "src")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
			out, _ := cmd.CombinedOutput()
			_, err := os.Stat(mark)
			if !tc.safe {
				assert.NoError(t, err, "control: git ran core.fsmonitor (%s)", out)
				return
			}
			assert.ErrorIs(t, err, os.ErrNotExist, "git ran the command's core.fsmonitor: %s", out)
			assert.Contains(t, stderr, "landjail: quarantined src/HEAD -> src/HEAD.landjail-quarantined-")
		})
	}
}

// TestRunAgentConfigPythonShadow (red team R1): the user's pre-commit
// hook runs `python3 -m json.tool` (pre-commit's own hook runs `python
// -mpre_commit`); the command creates json/__init__.py at the top, which
// Python imports before the standard library's. With
// --protect-agent-config the user's next commit does not run it; the
// control shows it does.
func TestRunAgentConfigPythonShadow(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	for _, tc := range []struct {
		name  string
		flags []string
		safe  bool
	}{
		{"control: no --protect-agent-config", nil, false},
		{"--protect-agent-config", []string{"--protect-agent-config"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			hook := "#!/bin/sh\npython3 -m json.tool </dev/null >/dev/null 2>&1\nexit 0\n"
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/hooks/pre-commit"), []byte(hook), 0o755))
			mark := filepath.Join(t.TempDir(), "pwned")
			script := "mkdir json && echo 'open(\"" + mark + "\", \"w\")' > json/__init__.py && echo planted"
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", script)...)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, "planted\n", stdout, stderr)
			hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "next")
			_, err := os.Stat(mark)
			if !tc.safe {
				assert.NoError(t, err, "control: the hook's python imported the planted json package")
				return
			}
			assert.ErrorIs(t, err, os.ErrNotExist, "the hook ran the planted package; stderr: %s", stderr)
			assert.Contains(t, stderr, "landjail: quarantined json/__init__.py -> json/__init__.py.landjail-quarantined-")
		})
	}
}

// TestRunAgentConfigLive (red team round 5, N7): a protected name the
// command creates is renamed away while the command still runs (a user
// committing or a prompt hook meanwhile does not find it), and a command
// that keeps re-creating such names is stopped. The control, without
// --protect-agent-config, finds its file still there.
func TestRunAgentConfigLive(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	wait := "printf '[env]\\n_.source = \"./x.sh\"\\n' > mise.local.toml; i=0; while [ -e mise.local.toml ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done; " +
		"if [ -e mise.local.toml ]; then echo still-there; else echo gone; fi"
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"control: no --protect-agent-config", nil, "still-there\n"},
		{"--protect-agent-config", []string{"--protect-agent-config"}, "gone\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t)
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", wait)...)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, tc.want, stdout, stderr)
			if tc.flags != nil && !layer {
				// Landlock-only: the frozen root refuses the name.
				assert.Contains(t, stderr, "cannot create mise.local.toml")
				return
			}
			if tc.flags != nil {
				assert.Contains(t, stderr, "landjail: quarantined mise.local.toml -> mise.local.toml.landjail-quarantined-")
				assert.Contains(t, stderr, "(created by the command while it ran;")
			}
		})
	}
	t.Run("re-created again and again: stopped", func(t *testing.T) {
		if !layer {
			t.Skip("Landlock-only: the frozen root refuses the name (row above)")
		}
		ws := gitRepo(t)
		loop := "i=0; while [ $i -lt 100000 ]; do echo x > .envrc.local; i=$((i+1)); done; echo finished"
		code, stdout, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--protect-agent-config", "--", "sh", "-c", loop)
		assert.NotEqual(t, 0, code, stderr)
		assert.NotContains(t, stdout, "finished")
		assert.Contains(t, stderr, "stopping the command")
	})
}

// TestRunAgentConfigDanglingLinkRound17 (red team round 17, R17a-15): a
// protected name that is a dangling link (.envrc -> tools/envrc not made
// yet) does not stop a --protect-agent-config run from starting (the
// namespace view mounted on the link: ELOOP), and what the command makes
// at the link's target is quarantined after it; control: the same run
// without the link creates the file and keeps it. Red before: exit 125,
// "too many levels of symbolic links".
func TestRunAgentConfigDanglingLinkRound17(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, link := range []bool{true, false} {
		t.Run(map[bool]string{true: "dangling link", false: "control"}[link], func(t *testing.T) {
			ws := gitRepo(t)
			require.NoError(t, os.Mkdir(filepath.Join(ws, "tools"), 0o755))
			if link {
				require.NoError(t, os.Symlink("tools/envrc", filepath.Join(ws, ".envrc")))
			}
			code, stdout, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--protect-agent-config", "--",
				"sh", "-c", "echo 'echo PWNED' > tools/envrc && echo made")
			_, err := os.Stat(filepath.Join(ws, "tools/envrc"))
			if !link {
				require.Equal(t, 0, code, stderr)
				assert.NoError(t, err, "control: a file nothing leads to")
				return
			}
			require.NotEqual(t, 125, code, "the run started: %s", stderr)
			assert.ErrorIs(t, err, os.ErrNotExist, "the target the command made is quarantined: %s", stderr)
			if stdout == "made\n" { // the namespace layer: made, then swept (Landlock alone refuses it)
				assert.Contains(t, stderr, "landjail: quarantined tools/envrc")
			}
		})
	}
}
