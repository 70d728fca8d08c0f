package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/carvetest"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// parseRun parses args as "landjail run" would and returns the options.
func parseRun(t *testing.T, args ...string) (*options, []string, error) {
	t.Helper()
	var (
		got  *options
		rest []string
		perr error
	)
	cmd := newRunCommand()
	cmd.ExitErrHandler = func(context.Context, *cli.Command, error) {}
	cmd.Action = func(_ context.Context, c *cli.Command) error {
		got, perr = cliopts.Load(c)
		rest = c.Args().Slice()
		return nil
	}
	if err := cmd.Run(context.Background(), append([]string{"run"}, args...)); err != nil {
		return nil, nil, err
	}
	return got, rest, perr
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "landjail.toml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestOptionsFromFlags(t *testing.T) {
	o, rest, err := parseRun(t,
		"--workspace", "/w", "--ro", "/a", "--ro", "/b,c", "--rox", "/x", "--rw", "/r",
		"--deny", "*.pem", "--deny-secrets", "--connect-tcp", "443", "--bind-tcp", "8080",
		"--env", "FOO", "--env", "BAR=1,2", "--user", "1000:100", "--timeout", "3s", "--strict", "--no-system",
		"--report", "/tmp/r.json", "--", "ls", "-l", "--ro", "x")
	require.NoError(t, err)
	assert.Equal(t, &options{
		Workspace: "/w", RO: []string{"/a", "/b,c"}, ROX: []string{"/x"}, RW: []string{"/r"},
		Deny: []string{"*.pem"}, DenySecrets: true, ConnectTCP: []int64{443}, BindTCP: []int64{8080},
		Env: []string{"FOO", "BAR=1,2"}, User: "1000:100", Timeout: cliopts.Duration(3 * time.Second),
		Strict: true, NoSystem: true, Report: "/tmp/r.json",
	}, o)
	assert.Equal(t, []string{"ls", "-l", "--ro", "x"}, rest, "flags after CMD belong to CMD")

	_, rest, err = parseRun(t, "--ro", "/a", "sh", "-c", "exit 3")
	require.NoError(t, err)
	assert.Equal(t, []string{"sh", "-c", "exit 3"}, rest, "without --")
}

func TestOptionsConfigAndPrecedence(t *testing.T) {
	cfg := writeConfig(t, `
workspace = "/from-file"
ro = ["/f1", "rel"]
deny = ["a"]
connect_tcp = [443, 80]
env = ["X=1"]
timeout = "1m"
strict = true
`)
	dir := filepath.Dir(cfg)

	o, _, err := parseRun(t, "--config", cfg)
	require.NoError(t, err)
	assert.Equal(t, "/from-file", o.Workspace)
	assert.Equal(t, []string{"/f1", filepath.Join(dir, "rel")}, o.RO, "relative to the config file")
	assert.Equal(t, []int64{443, 80}, o.ConnectTCP)
	assert.Equal(t, cliopts.Duration(time.Minute), o.Timeout)
	assert.True(t, o.Strict)

	o, _, err = parseRun(t, "--config", cfg, "--workspace", "/flag", "--ro", "/f2",
		"--connect-tcp", "22", "--timeout", "2s", "--best-effort")
	require.NoError(t, err)
	assert.Equal(t, "/flag", o.Workspace, "flag wins")
	assert.Equal(t, []string{"/f2"}, o.RO, "a repeatable flag replaces the list")
	// --deny adds to the file's list: it only narrows (red team round 18,
	// R18a-9: the file's deny list was dropped, silently).
	o2, _, err := parseRun(t, "--config", cfg, "--deny", "b", "--deny", "c")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, o2.Deny, "--deny adds to the file's list")
	assert.Equal(t, []int64{22}, o.ConnectTCP)
	assert.Equal(t, []string{"a"}, o.Deny, "unset flag keeps the file's value")
	assert.Equal(t, []string{"X=1"}, o.Env)
	assert.Equal(t, cliopts.Duration(2*time.Second), o.Timeout)
	assert.False(t, o.Strict, "--best-effort overrides strict = true")
	assert.True(t, o.BestEffort)

	wd, err := os.Getwd()
	require.NoError(t, err)
	o, _, err = parseRun(t, "--workspace", "sub", "--ro", "rel")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "sub"), o.Workspace, "flags relative to the cwd")
	assert.Equal(t, []string{filepath.Join(wd, "rel")}, o.RO)
}

func TestOptionsExampleConfig(t *testing.T) {
	o, _, err := parseRun(t, "--config", "../../testdata/config/example.toml")
	require.NoError(t, err)
	assert.Equal(t, "/srv/project", o.Workspace)
	assert.Equal(t, []int64{443}, o.ConnectTCP)
	assert.True(t, o.DenySecrets)
	assert.Equal(t, cliopts.Duration(10*time.Minute), o.Timeout)
}

func TestOptionsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"--config", "../../testdata/config/unknown_key.toml"}, "unknown keys: deny_secret"},
		{"bad port in file", []string{"--config", "../../testdata/config/bad_port.toml"}, "invalid TCP port 70000"},
		{"syntax", []string{"--config", writeConfig(t, "ro = [")}, "config"},
		{"wrong type", []string{"--config", writeConfig(t, `strict = "yes"`)}, "config"},
		{"bad duration", []string{"--config", writeConfig(t, `timeout = "soon"`)}, "config"},
		{"missing config", []string{"--config", "/nonexistent.toml"}, "no such file"},
		{"port 0", []string{"--connect-tcp", "0"}, "invalid TCP port 0"},
		{"bad net", []string{"--net", "bridge"}, "invalid --net"},
		{"bad user", []string{"--user", "bob"}, "invalid --user"},
		{"bad gid", []string{"--user", "1:x"}, "invalid --user"},
		{"bad env", []string{"--env", "=x"}, "invalid --env"},
		{"strict and best effort", []string{"--strict", "--best-effort"}, "mutually exclusive"},
		{"undefined flag", []string{"--bogus"}, "unknown option --bogus"},
		{"bad timeout", []string{"--timeout", "soon"}, "invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseRun(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			code, _ := exitCode(err)
			assert.Equal(t, exitUsage, code)
		})
	}
}

func TestBadConfigExits125(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--config", "../../testdata/config/unknown_key.toml", "--", "true"},
		{"run", "--bogus", "--", "true"},
		{"run"},
		{"resolve", "--config", "../../testdata/config/bad_port.toml", "x"},
		{"run", "--workspace", "/nonexistent/ws", "--", "true"},
		{"run", "--ro", "/nonexistent/ro", "--", "true"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, stderr)
		assert.Empty(t, stdout, "%q", args)
		assert.Contains(t, stderr, "landjail: ", "%q", args)
	}
}

func TestHelpDocumentsExitCodes(t *testing.T) {
	for _, c := range []string{"run", "resolve", "doctor"} {
		code, out, _ := runCLI(t, c, "--help")
		assert.Equal(t, 0, code)
		assert.Contains(t, out, "EXIT STATUS", c)
		assert.Contains(t, out, "125", c)
	}
	_, out, _ := runCLI(t, "run", "--help")
	for _, s := range []string{"126", "127", "128+N"} {
		assert.Contains(t, out, s)
	}
}

// TestResolveCarveOutTable runs testdata/carveouts.toml through landjail
// resolve --access (in process, the policy given as flags): the reason
// word is the verdict the Workspace and Landlock give, and no output ever
// holds a secret's marker. Old code: --read-only and
// --protect-agent-config were not resolve flags at all, and resolve
// answered "ok" for every id_*_sk, .vault-token and private-key case.
func TestResolveCarveOutTable(t *testing.T) {
	for _, c := range carvetest.Load(t, "../../testdata/carveouts.toml") {
		t.Run(c.Name, func(t *testing.T) {
			root := carvetest.Build(t, &c)
			access := "write"
			if c.Access == carvetest.Read {
				access = "read"
			}
			args := append([]string{"resolve"}, c.Policy.Flags(root)...)
			args = append(args, "--access", access, c.Path)
			code, out, errOut := runCLI(t, args...)
			assert.NotContains(t, out+errOut, carvetest.Marker)
			switch want := c.WantFor("resolve"); want {
			case carvetest.OK:
				assert.Equal(t, 0, code, "%s%s", out, errOut)
				assert.True(t, strings.HasPrefix(out, "ok\t"), out)
			default:
				assert.Equal(t, exitRefused, code, "%s%s", out, errOut)
				f := strings.Split(strings.TrimSuffix(out, "\n"), "\t")
				require.Len(t, f, 4, "%q %s", out, errOut)
				assert.Equal(t, want, f[2], out)
			}
		})
	}
}

// TestConfigPolicyReachesWorkspace: read_only and protect_agent_config in
// a --config file reach the Workspace that the MCP file tools use
// (cliopts.Options.Policy), not only the Landlock carve-outs for bash.
// The reported break: with both set, bash was refused but write_file
// .git/hooks/pre-commit, edit_file .git/config, write_file .bashrc and
// edit_file of a read-only file all succeeded. Unconfined control: the
// same writes through a Workspace without the config succeed.
func TestConfigPolicyReachesWorkspace(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		base, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		root := filepath.Join(base, "ws")
		for _, d := range []string{".git/hooks", "docs"} {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "docs/spec.md"), []byte("spec\n"), 0o644))
		cfg := writeConfig(t, "workspace = \""+root+"\"\nread_only = [\"docs/\"]\nprotect_agent_config = true\n")
		writes := []struct {
			name  string
			write func(ws *jail.Workspace) error
		}{
			{"write_file .git/hooks/pre-commit", func(ws *jail.Workspace) error {
				return ws.WriteFile(".git/hooks/pre-commit", []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
			}},
			{"edit_file .git/config", func(ws *jail.Workspace) error {
				return ws.WriteFile(".git/config", []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"), 0o644)
			}},
			{"write_file .bashrc", func(ws *jail.Workspace) error { return ws.WriteFile(".bashrc", []byte("evil\n"), 0o644) }},
			{"edit_file docs/spec.md", func(ws *jail.Workspace) error { return ws.WriteFile("docs/spec.md", []byte("changed\n"), 0o644) }},
			{"open docs/spec.md for append", func(ws *jail.Workspace) error {
				f, err := ws.OpenFile("docs/spec.md", os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					f.Close()
				}
				return err
			}},
			{"rename .git away", func(ws *jail.Workspace) error { return ws.Rename(".git", "git-old") }},
			{"remove docs", func(ws *jail.Workspace) error { return ws.RemoveAll("docs") }},
		}
		for _, w := range writes {
			o, _, err := parseRun(t, "--config", cfg)
			require.NoError(t, err)
			ws, err := o.Policy()
			require.NoError(t, err)
			assert.ErrorIs(t, w.write(ws), jail.ErrReadOnly, w.name)
			ws.Close()
		}
		b, err := os.ReadFile(filepath.Join(root, ".git/config"))
		require.NoError(t, err)
		assert.Equal(t, "[core]\n", string(b))
		_, err = os.Lstat(filepath.Join(root, ".git/hooks/pre-commit"))
		assert.ErrorIs(t, err, os.ErrNotExist)
		// Unconfined control: without the config every write succeeds.
		for _, w := range writes {
			ws, err := jail.New(root)
			require.NoError(t, err)
			assert.NoError(t, w.write(ws), "control: %s", w.name)
			ws.Close()
		}
	})
}

// TestWalkLimitFlag: --walk-limit reaches Compile, and a tree larger than
// the limit makes run refuse (before anything runs) with an error naming
// the limit and the flag, in best-effort mode too.
func TestWalkLimitFlag(t *testing.T) {
	o, _, err := parseRun(t, "--walk-limit", "5")
	require.NoError(t, err)
	assert.Equal(t, 5, o.LandlockOptions("").WalkLimit)
	_, _, err = parseRun(t, "--walk-limit", "-1")
	assert.ErrorContains(t, err, "invalid --walk-limit")

	root := t.TempDir()
	for i := range 10 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d", i)), nil, 0o644))
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, mode := range []string{"--best-effort", "--strict"} {
		code, out, errOut := runCLI(t, "run", mode, "--workspace", root, "--deny", ".env", "--walk-limit", "3", "--", "/bin/sh", "-c", "touch "+marker)
		assert.NotEqual(t, 0, code, "%s: %s%s", mode, out, errOut)
		assert.Contains(t, errOut, "--walk-limit", mode)
		assert.Contains(t, errOut, "more than 3 entries", mode)
		_, err := os.Stat(marker)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s: nothing ran", mode)
	}
}

// TestRunConfigReadOnly: a --config file kept in the workspace is
// read-only for the command (red-team: run 1 rewrote it to rw = ["/"],
// and run 2, the same command line, read /etc/shadow). Control: the same
// file, not given as --config, is writable.
func TestRunConfigReadOnly(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws := wsDir(t)
	cfg := filepath.Join(ws, "landjail.toml")
	const policy = "deny_secrets = true\n"
	require.NoError(t, os.WriteFile(cfg, []byte(policy), 0o644))
	const script = `printf 'rw = ["/"]\n' >> landjail.toml 2>/dev/null && echo wrote || echo refused; mv landjail.toml x.toml 2>/dev/null && echo moved || echo kept`
	code, stdout, stderr := runCLI(t, "run", "--config", cfg, "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", script)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "refused\nkept\n", stdout)
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	assert.Equal(t, policy, string(b))

	code, stdout, stderr = runCLI(t, "run", "--deny-secrets", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", script)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "wrote\nmoved\n", stdout, "control")
}

// TestRunHomeChmodded: a command that makes its private HOME world-
// writable does not stop later runs of the workspace (red-team: every
// later run refused with exit 125); the next run makes it 0700 again.
func TestRunHomeChmodded(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1) // the path check refuses "$HOME"
	ws := wsDir(t)
	code, stdout, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", `chmod 0777 "$HOME" && echo "$HOME"`)
	require.Equal(t, 0, code, stderr)
	home := strings.TrimSpace(stdout)
	require.NotEmpty(t, home)
	fi, err := os.Stat(home)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o777), fi.Mode().Perm(), "control: the command changed it")
	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--timeout", "1m", "--", "true")
	require.Equal(t, 0, code, stderr)
	fi, err = os.Stat(home)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestRunSymlinkedWorkspace: a workspace (or --rw path) given through
// a symbolic link is said on stderr, with where it leads, and refused
// under --strict (red-team: a link planted in an earlier workspace made a
// later run of its "subdirectory" read-write on a host directory). The
// canonical path runs silently (control).
func TestRunSymlinkedWorkspace(t *testing.T) {
	base := wsDir(t)
	real := filepath.Join(base, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(base, "sub")
	require.NoError(t, os.Symlink(real, link))
	code, _, stderr := runCLI(t, "run", "--workspace", link, "--timeout", "1m", "--", "true")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "--workspace "+link+" resolves to "+real+" through a symbolic link")
	code, _, stderr = runCLI(t, "run", "--strict", "--workspace", link, "--timeout", "1m", "--", "true")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "a symbolic link on the way")
	other := filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	code, _, stderr = runCLI(t, "run", "--workspace", other, "--rw", link, "--timeout", "1m", "--", "true")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "--rw "+link+" resolves to")
	// A read-only root through a symlink (/lib -> usr/lib) is not a
	// concern: it stays read-only.
	code, _, stderr = runCLI(t, "run", "--strict", "--workspace", other, "--ro", link, "--timeout", "1m", "--", "true")
	if landlock.ABI() > 0 {
		require.Equal(t, 0, code, stderr)
	}
	assert.NotContains(t, stderr, "symbolic link")
	code, _, stderr = runCLI(t, "run", "--workspace", real, "--timeout", "1m", "--", "true")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "symbolic link", "control")
}
