package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// TestDeniedFileRoots: red team round 32, R32c-3. A --ro/--rox/--rw root
// that is a single file is a Landlock rule of its own that no deny
// pattern was matched against: --deny-secrets --ro ~/.aws/credentials,
// --ro id_rsa, --ro of a file holding a key read them in every layer.
// Such a root is refused (ErrDenied). Controls: a plain file root, and
// the same roots without the preset, are accepted.
func TestDeniedFileRoots(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	files := map[string]string{
		".aws/credentials":  "AKIA\n",
		".ssh/id_rsa":       "x\n",
		"proj/.env":         "A=1\n",
		"other/notes.txt":   "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----\n",
		"other/plain.txt":   "fine\n",
		"other/README.md":   "fine\n",
		"ws/placeholder.go": "package x\n",
	}
	for f, c := range files {
		p := filepath.Join(home, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o600))
	}
	for _, secrets := range []bool{true, false} {
		var opts []jail.Option
		if secrets {
			opts = append(opts, jail.WithDenySecrets())
		}
		ws, err := jail.New(filepath.Join(home, "ws"), opts...)
		require.NoError(t, err)
		for f := range files {
			err := deniedFileRoots(ws, []landlock.Rule{{Path: filepath.Join(home, f), Access: landlock.RightsRead, Source: "--ro"}})
			want := secrets && f != "other/plain.txt" && f != "other/README.md" && f != "ws/placeholder.go"
			if want {
				assert.ErrorIs(t, err, jail.ErrDenied, f)
			} else {
				assert.NoError(t, err, "control: %s (preset %v)", f, secrets)
			}
		}
		// A rule of another source (a preset's) is not the operator's root.
		assert.NoError(t, deniedFileRoots(ws, []landlock.Rule{{Path: filepath.Join(home, ".aws/credentials"), Source: "preset"}}))
		ws.Close()
	}
}
