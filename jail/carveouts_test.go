package jail_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/carvetest"
	"github.com/landjail/landjail/jail"
)

// TestCarveOutTable runs testdata/carveouts.toml through the Workspace's
// operations, with both lookup mechanisms: the verdict is the sentinel
// (ErrDenied, ErrReadOnly), a refused read never returns the marker, a
// refused write or remove leaves the file as it was. The same table runs
// through landjail resolve (cmd/landjail) and a Landlock-confined child
// (landlock). Before the policy moved into jail, every read-only and
// agent-config case was writable here, and the id_*_sk, .vault-token,
// CA-bundle and id_* cases disagreed with their doc.
func TestCarveOutTable(t *testing.T) {
	cases := carvetest.Load(t, "../testdata/carveouts.toml")
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				root := carvetest.Build(t, &c)
				ws, err := c.Policy.Options(root).Policy()
				require.NoError(t, err)
				defer ws.Close()
				before, _ := os.ReadFile(carvetest.HostPath(root, &c))
				var got []byte
				switch c.Access {
				case carvetest.Read:
					got, err = ws.ReadFile(c.Path)
				case carvetest.Write:
					var f *os.File
					f, err = ws.OpenFile(c.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
					if err == nil {
						_, err = io.WriteString(f, "x")
						f.Close()
					}
				case carvetest.Remove:
					err = ws.Remove(c.Path)
				}
				switch c.WantFor("jail") {
				case carvetest.OK:
					require.NoError(t, err)
					if c.Access == carvetest.Read {
						assert.Equal(t, carvetest.Expected(&c), string(got))
					}
					return
				case carvetest.Denied:
					assert.ErrorIs(t, err, jail.ErrDenied)
				case carvetest.ReadOnly:
					assert.ErrorIs(t, err, jail.ErrReadOnly)
				case carvetest.Outside:
					assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
				}
				assert.NotContains(t, string(got), carvetest.Marker)
				if err != nil {
					assert.NotContains(t, err.Error(), carvetest.Marker)
				}
				after, _ := os.ReadFile(carvetest.HostPath(root, &c))
				assert.Equal(t, string(before), string(after), "a refused access changes nothing")
			})
		}
	})
}

// TestDenyRootThroughLink (red team round 12, R12-1): a root given
// through a symbolic link (~/.aws -> dotfiles/aws, as GNU stow makes
// them) is inside .aws/ by the name it was given, and ~/.config/gh ->
// ../dotfiles/gh is crossed by **/.config/gh/hosts.yml. Control: the
// same roots without --deny-secrets read.
func TestDenyRootThroughLink(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for f, c := range map[string]string{"dotfiles/aws/credentials": "K", "dotfiles/gh/hosts.yml": "T", "dotfiles/gh/config.yml": "C"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte(c), 0o600))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
	require.NoError(t, os.Symlink("dotfiles/aws", filepath.Join(home, ".aws")))
	require.NoError(t, os.Symlink("../dotfiles/gh", filepath.Join(home, ".config/gh")))
	ws := t.TempDir()
	for _, secrets := range []bool{false, true} {
		opts := []jail.Option{jail.WithAllowed(filepath.Join(home, ".aws"), jail.ReadOnly), jail.WithAllowed(filepath.Join(home, ".config/gh"), jail.ReadOnly)}
		if secrets {
			opts = append(opts, jail.WithDenySecrets())
		}
		w, err := jail.New(ws, opts...)
		require.NoError(t, err)
		// By the name given and by the real one (what a child's kernel
		// resolves, and what --learn records).
		for _, p := range []string{".aws/credentials", "dotfiles/aws/credentials", "dotfiles/gh/hosts.yml"} {
			_, err := w.ReadFile(filepath.Join(home, p))
			if secrets {
				assert.ErrorIs(t, err, jail.ErrDenied, p)
			} else {
				assert.NoError(t, err, "control: %s", p)
			}
		}
		_, err = w.ReadFile(filepath.Join(home, "dotfiles/gh/config.yml"))
		assert.NoError(t, err, "not a secret")
		w.Close()
	}
}

// TestDenyNameAboveWorkspace (red team round 12, R12-9): a project's
// own directory name (--deny data/) that also names a directory above
// the workspace (/data/projects/foo) denies the project's data/, not the
// whole workspace. A hidden name (.aws/) still denies a root inside it
// (TestDenyRootThroughLink, the carve-out table).
func TestDenyNameAboveWorkspace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "data/projects/foo")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src/main.c"), []byte("code"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data/db.csv"), []byte("rows"), 0o644))
	w, err := jail.New(ws, jail.WithDeny("data/"))
	require.NoError(t, err)
	defer w.Close()
	_, err = w.ReadFile("src/main.c")
	assert.NoError(t, err)
	assert.NoError(t, w.WriteFile("src/new.c", []byte("x"), 0o644))
	_, err = w.ReadFile("data/db.csv")
	assert.ErrorIs(t, err, jail.ErrDenied)
}

// TestDenySecretsXDGConfigHome (red team round 14, R14-8): with
// XDG_CONFIG_HOME=~/.xdg, gh's hosts.yml and rclone's rclone.conf live
// there, and --deny-secrets denies them there too. Control: another
// file there stays readable.
func TestDenySecretsXDGConfigHome(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".xdg"))
	for f, c := range map[string]string{".xdg/gh/hosts.yml": "T", ".xdg/rclone/rclone.conf": "R", ".xdg/other/a": "A"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte(c), 0o600))
	}
	w, err := jail.New(t.TempDir(), jail.WithAllowed(home, jail.ReadOnly), jail.WithDenySecrets())
	require.NoError(t, err)
	defer w.Close()
	for _, f := range []string{".xdg/gh/hosts.yml", ".xdg/rclone/rclone.conf"} {
		_, err := w.ReadFile(filepath.Join(home, f))
		assert.ErrorIs(t, err, jail.ErrDenied, f)
	}
	_, err = w.ReadFile(filepath.Join(home, ".xdg/other/a"))
	assert.NoError(t, err, "control")
}
