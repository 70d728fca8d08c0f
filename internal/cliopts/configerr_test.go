package cliopts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigErrorWording: a --config value of the wrong type is named in
// the file's terms (key, line, what it must be), never in the decoder's
// Go types (checked red: `toml: line 1 (last key "strict"): incompatible
// types: TOML value has type string; destination has type boolean`).
func TestConfigErrorWording(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{`strict = "yes"`, `line 1: "strict" must be true or false, got a string`},
		{`ro = "x"`, `line 1: "ro" must be a list (["a", "b"]), got a string`},
		{`connect_tcp = ["x"]`, `line 1: "connect_tcp" must be an integer, got a string`},
		{"\nworkspace = 3", `line 2: "workspace" must be a string (in quotes), got a number`},
		{`timeout = "5"`, `line 1: "timeout": not a duration, e.g. "90s", "10m", "1h30m"`},
		{`ro = [`, `line 1: "ro": unexpected EOF`},
	} {
		p := filepath.Join(t.TempDir(), "c.toml")
		require.NoError(t, os.WriteFile(p, []byte(tc.toml+"\n"), 0o600))
		_, err := ReadConfig(p)
		require.Error(t, err, tc.toml)
		msg, ok := strings.CutPrefix(err.Error(), "config "+p+": ")
		require.True(t, ok, err.Error())
		assert.True(t, strings.HasPrefix(msg, tc.want), "%s: %s", tc.toml, msg)
		for _, goism := range []string{"toml:", "destination has type", "interface {}", "last key"} {
			assert.NotContains(t, msg, goism, tc.toml)
		}
	}
}
