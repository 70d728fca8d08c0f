package main

import (
	"context"
	"github.com/landjail/landjail/internal/cliopts"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
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
		{"undefined flag", []string{"--bogus"}, "flag provided but not defined"},
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
