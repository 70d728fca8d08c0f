package cliopts

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

func writeConfig(tb testing.TB, data string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "landjail.toml")
	require.NoError(tb, os.WriteFile(p, []byte(data), 0o644))
	return p
}

func TestReadConfig(t *testing.T) {
	p := writeConfig(t, `
workspace = "ws"
ro = ["/usr/share", "docs"]
deny = [".env", "*.pem"]
connect_tcp = [443]
timeout = "30s"
strict = true
allow_dns = true
`)
	o, err := ReadConfig(p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(filepath.Dir(p), "ws"), o.Workspace, "relative to the file")
	assert.Equal(t, []string{"/usr/share", filepath.Join(filepath.Dir(p), "docs")}, o.RO)
	assert.True(t, o.Strict)
	assert.True(t, o.AllowDNS)
	require.NoError(t, o.validate())

	for data, want := range map[string]string{
		`wrkspace = "x"`:          "unknown keys: wrkspace",
		`connect_tcp = [70000]`:   "invalid TCP port 70000",
		`net = "bridge"`:          `invalid --net "bridge"`,
		`timeout = "soon"`:        "soon",
		`ro = "not a list"`:       "ro",
		`user = "root:x"`:         "user",
		"deny = [\".env\"\n\x00]": "config",
	} {
		o, err := ReadConfig(writeConfig(t, data))
		if err == nil {
			err = o.validate()
		}
		if assert.Error(t, err, data) {
			assert.Contains(t, err.Error(), want, data)
		}
	}
}

// FuzzReadConfig: the TOML config loader never panics, and what it
// accepts either validates or fails with a message; relative paths come
// back absolute.
func FuzzReadConfig(f *testing.F) {
	for _, s := range []string{
		"", `workspace = "ws"`, "ro = [\"a\", \"/b\"]\ndeny = [\"*.pem\"]",
		"connect_tcp = [1, 65535]\nbind_tcp = [0]", `timeout = "-5s"`, `user = "65534:65534"`,
		"[table]\nx = 1", `env = ["A=1", "=x"]`, "strict = true\nbest_effort = true",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		p := filepath.Join(dir, "c.toml")
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		o, err := ReadConfig(p)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			assert.True(t, strings.HasPrefix(err.Error(), "config "), "errors name the file: %v", err)
			return
		}
		for _, q := range append(append(append([]string{o.Workspace, o.Report}, o.RO...), o.ROX...), o.RW...) {
			if q != "" {
				assert.True(t, filepath.IsAbs(q), "relative path %q left relative", q)
			}
		}
		if err := o.validate(); err != nil {
			assert.NotEmpty(t, err.Error())
		}
	})
}

// tomlKeys returns the toml keys of Options.
func tomlKeys(t *testing.T) []string {
	t.Helper()
	var keys []string
	ty := reflect.TypeOf(Options{})
	for i := range ty.NumField() {
		if !ty.Field(i).IsExported() {
			continue // state of Load (configFile), not an option
		}
		k := ty.Field(i).Tag.Get("toml")
		require.NotEmpty(t, k, "field %s has no toml key", ty.Field(i).Name)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestConfigKeysMatchFlags: the keys a help lists (ConfigKeys of run's
// and mcp's flags) are exactly the TOML keys of Options, so every flag
// can be set in a --config file and every key has a flag; and ReadConfig
// accepts a file setting every key.
func TestConfigKeysMatchFlags(t *testing.T) {
	keys := tomlKeys(t)
	assert.Equal(t, keys, ConfigKeys(RunFlags()), "run's flags and Options' keys")
	// mcp: every child flag applies to its bash tool; only run's own
	// flags (user, report, home, git_identity, explain_all, kill_after)
	// are missing.
	mcp := ConfigKeys(MCPFlags())
	for _, k := range keys {
		if k == "user" || k == "report" || k == "home" || k == "git_identity" || k == "explain_all" || k == "kill_after" {
			continue
		}
		assert.Contains(t, mcp, k, "mcp lacks the flag of key %s", k)
	}
	for _, f := range ChildFlags() {
		assert.Contains(t, mcp, strings.ReplaceAll(f.Names()[0], "-", "_"))
	}

	// A file setting every key, with a value of the field's type.
	var buf strings.Builder
	ty := reflect.TypeOf(Options{})
	for i := range ty.NumField() {
		f := ty.Field(i)
		if !f.IsExported() {
			continue
		}
		v := map[reflect.Kind]string{reflect.String: `""`, reflect.Bool: "false", reflect.Slice: "[]", reflect.Int: "0"}[f.Type.Kind()]
		if f.Type == reflect.TypeOf(Duration(0)) || f.Type == reflect.TypeOf((*Duration)(nil)) {
			v = `"1s"`
		}
		require.NotEmpty(t, v, "no test value for %s", f.Name)
		buf.WriteString(f.Tag.Get("toml") + " = " + v + "\n")
	}
	_, err := ReadConfig(writeConfig(t, buf.String()))
	require.NoError(t, err, "%s", buf.String())
}

// TestMCPFlagsApplied: mcp's flags for its bash tool reach Options as
// run's do (Load applied the seccomp, carve and scope flags for run only).
func TestMCPFlagsApplied(t *testing.T) {
	var o *Options
	cmd := &cli.Command{
		Name:  "landjail-mcp",
		Flags: MCPFlags(),
		Action: func(_ context.Context, cmd *cli.Command) (err error) {
			o, err = Load(cmd)
			return err
		},
	}
	require.NoError(t, cmd.Run(context.Background(), []string{"landjail-mcp", "--workspace", t.TempDir(),
		"--no-carve", "--no-scope", "--no-seccomp", "--allow-unix-sockets", "--allow-dns",
		"--allow-dangerous-syscalls", "--self-test", "--net", "none", "--connect-tcp", "443"}))
	assert.True(t, o.NoCarve && o.NoScope && o.NoSeccomp && o.AllowUnixSockets && o.AllowDNS && o.AllowDangerousSyscall && o.SelfTest, "%+v", o)
	assert.Equal(t, []int64{443}, o.ConnectTCP)
	assert.Equal(t, "", o.Net, "none is the default")
}
