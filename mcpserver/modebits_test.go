package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// TestArgCheckMeetsModeBits: as root, under --deny-secrets' key-header
// rule, files another user made after the plan (0600, one holding a
// private key, one not) get the same answer from read_file: the
// argument check opens what the tool would, with no more permission. It
// had read the key's head with the server's CAP_DAC_OVERRIDE and
// answered "denied by policy" for it and "permission denied" for its
// neighbour: an oracle of which of another user's private files hold a
// key (red team round 30, R30d-6). Control: the same files readable by
// the server's tools (root's own) are told apart, the key denied and the
// other read.
func TestArgCheckMeetsModeBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (files of another user, CAP_DAC_OVERRIDE to drop)")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	ws, err := jail.New(root, jail.WithReadTracker(jail.NewReadTracker()), jail.WithDenyPrivateKeyHeaders())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true})
	require.NoError(t, err)
	t.Cleanup(func() { rs.Close() })
	cs, _ := connect(t, &tools.Toolkit{WS: ws, Ruleset: rs}, nil)

	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
	for _, c := range []struct {
		dir      string
		uid      int
		told     bool // the key and the plain file get different answers
		readable bool
	}{
		{"other", 65534, false, false},
		{"own", 0, true, true}, // control
	} {
		d := filepath.Join(root, c.dir)
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.Chown(d, c.uid, c.uid))
		for name, content := range map[string]string{"notes": key, "plain": "hello\n"} {
			p := filepath.Join(d, name+".txt")
			require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
			require.NoError(t, os.Chown(p, c.uid, c.uid))
		}
		k, kErr := call(t, cs, "read_file", map[string]any{"path": c.dir + "/notes.txt"})
		p, pErr := call(t, cs, "read_file", map[string]any{"path": c.dir + "/plain.txt"})
		assert.True(t, kErr, "%s: the key is refused: %s", c.dir, k)
		if !c.told {
			assert.Equal(t, strings.ReplaceAll(k, "notes.txt", "X"), strings.ReplaceAll(p, "plain.txt", "X"), "%s: one answer for both", c.dir)
			assert.True(t, pErr, "%s: the other file is unreadable too: %s", c.dir, p)
			continue
		}
		assert.Contains(t, k, "denied by policy", "control")
		assert.False(t, pErr, "control: the plain file is read: %s", p)
		assert.Contains(t, p, "hello", "control")
	}
}
