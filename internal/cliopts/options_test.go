package cliopts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
