package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestGlobCharactersInPathRound17 (red team round 17, R17a-4): a glob
// character in a directory on the way to the workspace or HOME
// ("~/clients/[acme] site/repo") does not make the absolute patterns
// landjail builds from paths match nothing: "./x", "~/x", the caller's
// absolute path, "./config/*.tok" (the caller's glob after an escaped
// prefix) and a relocated credential (KUBECONFIG) are denied, and a
// "./" --read-only is read-only. Controls: the same tree without the
// patterns is readable and writable, and the same patterns in a
// directory without glob characters deny the same files. Red before:
// every pattern under "[acme] site" matched nothing.
func TestGlobCharactersInPathRound17(t *testing.T) {
	for _, name := range []string{"[acme] site", "acme site", "a*b?c\\d"} {
		t.Run(name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			root := filepath.Join(base, name, "repo")
			files := []string{"config/prod.key.txt", "config/home.txt", "config/abs.txt", "config/a.tok", "kube/config", "deploy/run.sh"}
			for _, f := range files {
				require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("S"), 0o600))
			}
			t.Setenv("HOME", root)
			t.Setenv("KUBECONFIG", filepath.Join(root, "kube/config"))
			opts := []jail.Option{
				jail.WithDeny("./config/prod.key.txt", "~/config/home.txt", filepath.Join(root, "config/abs.txt"), "./config/*.tok"),
				jail.WithDenySecrets(), jail.WithReadOnly("./deploy/"),
			}
			for _, on := range []bool{false, true} {
				var o []jail.Option
				if on {
					o = opts
				}
				w, err := jail.New(root, o...)
				require.NoError(t, err)
				for _, f := range files[:5] {
					_, err := w.ReadFile(f)
					if on {
						assert.ErrorIs(t, err, jail.ErrDenied, f)
					} else {
						assert.NoError(t, err, "control: no pattern, %s", f)
					}
				}
				err = w.WriteFile("deploy/run.sh", []byte("x"), 0o700)
				if on {
					assert.ErrorIs(t, err, jail.ErrReadOnly)
				} else {
					assert.NoError(t, err, "control: no --read-only")
				}
				w.Close()
			}
		})
	}
}
