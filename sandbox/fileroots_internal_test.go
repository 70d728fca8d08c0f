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

// TestSetIDFileRoot: red team round 32, R32a-1. A set-ID program given
// as a writable single-file root (--rw FILE) under
// --protect-agent-config was a Landlock rule of its own that the walk of
// the roots never looked at: rewritten through a mapping, its bit kept.
// Such a root is refused (ErrSetIDProgram); given read-only it is
// accepted, and so is a plain file given writable (the controls), and
// the program without the protection.
func TestSetIDFileRoot(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	helper, plain := filepath.Join(dir, "helper"), filepath.Join(dir, "plain")
	for _, p := range []string{helper, plain} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o755))
	}
	require.NoError(t, os.Chmod(helper, 0o755|os.ModeSetuid))
	rw := landlock.RightsReadWriteFile | landlock.RightsReadExec
	for _, protect := range []bool{true, false} {
		var opts []jail.Option
		if protect {
			opts = append(opts, jail.WithProtectedAgentConfig())
		}
		ws, err := jail.New(t.TempDir(), opts...)
		require.NoError(t, err)
		err = deniedFileRoots(ws, []landlock.Rule{{Path: helper, Access: rw, Source: "--rw"}})
		if protect {
			assert.ErrorIs(t, err, jail.ErrSetIDProgram)
		} else {
			assert.NoError(t, err, "control: without --protect-agent-config")
		}
		assert.NoError(t, deniedFileRoots(ws, []landlock.Rule{{Path: helper, Access: landlock.RightsReadExec, Source: "--rox"}}), "control: read-only")
		assert.NoError(t, deniedFileRoots(ws, []landlock.Rule{{Path: plain, Access: rw, Source: "--rw"}}), "control: a plain file")
		ws.Close()
	}
}
