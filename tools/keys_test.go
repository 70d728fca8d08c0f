package tools_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestToolsKeyHeaders: with jail.WithDenySecrets, the MCP file tools do
// not hand out a private key kept under an ordinary name: read_file of
// config/deploy_key is refused with jail.ErrDenied, and a grep over the
// workspace for a line of the key prints nothing of it (the grep opens
// every file through the Workspace) while still finding the same line in
// an ordinary file. Unconfined control: without the option, both return
// the key. Red before: both did with the option too.
func TestToolsKeyHeaders(t *testing.T) {
	const marker = "KEYMATERIAL-b3BlbnNzaC1rZXktdjE"
	tree := []string{
		"config/deploy_key=-----BEGIN OPENSSH PRIVATE KEY-----\n" + marker + "\n-----END OPENSSH PRIVATE KEY-----\n",
		"docs/notes.md=the string " + marker + " in prose\n",
	}
	for _, tc := range []struct {
		name string
		opts []jail.Option
		leak bool
	}{
		{"deny-secrets", []jail.Option{jail.WithDenySecrets()}, false},
		{"control: no policy", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tree, tc.opts...)
			r, err := e.k.ReadFile(tools.ReadFileArgs{Path: "config/deploy_key"})
			if tc.leak {
				require.NoError(t, err)
				assert.Contains(t, r.Content, marker)
			} else {
				assert.ErrorIs(t, err, jail.ErrDenied)
			}
			g, err := e.k.Grep(tools.GrepArgs{Pattern: marker})
			require.NoError(t, err)
			var paths []string
			for _, m := range g.Matches {
				paths = append(paths, m.Path)
			}
			if tc.leak {
				assert.ElementsMatch(t, []string{"config/deploy_key", "docs/notes.md"}, paths)
			} else {
				assert.Equal(t, []string{"docs/notes.md"}, paths, "grep prints nothing of the key")
			}
		})
	}
}
