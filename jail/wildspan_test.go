package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestWildSpanRoots (red team round 31, R31b-2): a root below the
// leading components of a --deny-secrets pattern with a wildcard among
// them (**/.mozilla/firefox/*/key4.db, **/.var/app/*/data/
// TelegramDesktop/tdata/) keeps the pattern: its entries are matched by
// their absolute path, and a root inside a directory such a pattern
// denies is denied whole. --learn had granted such directories, and the
// patterns, matched from the new root, no longer named what was in
// them. Controls: a neighbour in the profile stays allowed, and without
// the preset every path is.
func TestWildSpanRoots(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	profile := filepath.Join(home, ".mozilla/firefox/abc.default")
	tdata := filepath.Join(home, ".var/app/org.telegram.desktop/data/TelegramDesktop/tdata")
	for _, f := range []string{profile + "/key4.db", profile + "/logins.json", profile + "/prefs.js", tdata + "/key_datas"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	}
	for _, secrets := range []bool{true, false} {
		opts := []jail.Option{jail.WithAllowed(profile, jail.ReadOnly), jail.WithAllowed(tdata, jail.ReadWrite)}
		if secrets {
			opts = append(opts, jail.WithDenySecrets())
		}
		ws, err := jail.New(t.TempDir(), opts...)
		require.NoError(t, err)
		for _, p := range []string{profile + "/key4.db", profile + "/logins.json", tdata + "/key_datas", tdata} {
			_, err := ws.Check(p, jail.Read)
			if secrets {
				assert.ErrorIs(t, err, jail.ErrDenied, p)
			} else {
				assert.NoError(t, err, "control: %s without the preset", p)
			}
		}
		_, err = ws.Check(profile+"/prefs.js", jail.Read)
		assert.NoError(t, err, "control: the profile's other files")
		ws.Close()
	}
}

// TestLiteralSpanRoots: red team round 32, R32c-1 and R32c-9. A root at
// or below a directory a --deny-secrets pattern names keeps the pattern
// when the pattern is several literal components
// (**/Default/Local Storage/: a snap Chromium profile outside
// ~/.config) or one component with a wildcard after a literal hidden
// start (.env*: cookiecutter-django's .envs/): the root is inside it and
// denied whole. Controls: the profile's other files, and a root next to
// the named directory, stay allowed; without the preset everything is.
func TestLiteralSpanRoots(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	profile := filepath.Join(home, "snap/chromium/common/chromium/Default")
	storage := filepath.Join(profile, "Local Storage")
	leveldb := filepath.Join(storage, "leveldb")
	envs := filepath.Join(home, "proj/.envs")
	prod := filepath.Join(envs, ".production")
	for _, f := range []string{leveldb + "/000003.log", profile + "/Preferences", prod + "/.django", home + "/proj/manage.py"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	}
	for _, secrets := range []bool{true, false} {
		for _, root := range []string{storage, leveldb, envs, prod} {
			opts := []jail.Option{jail.WithAllowed(root, jail.ReadOnly), jail.WithAllowed(profile, jail.ReadOnly)}
			if secrets {
				opts = append(opts, jail.WithDenySecrets())
			}
			ws, err := jail.New(filepath.Join(home, "proj"), opts...)
			require.NoError(t, err)
			for _, p := range []string{root, leveldb + "/000003.log", prod + "/.django"} {
				if !within(p, root) {
					continue
				}
				_, err := ws.Check(p, jail.Read)
				if secrets {
					assert.ErrorIs(t, err, jail.ErrDenied, "root %s: %s", root, p)
				} else {
					assert.NoError(t, err, "control: %s without the preset", p)
				}
			}
			_, err = ws.Check(profile+"/Preferences", jail.Read)
			assert.NoError(t, err, "control: the profile's other files")
			_, err = ws.Check(home+"/proj/manage.py", jail.Read)
			assert.NoError(t, err, "control: the project next to .envs")
			ws.Close()
		}
	}
}

func within(p, root string) bool {
	return p == root || len(p) > len(root) && p[:len(root)+1] == root+"/"
}

// TestChmodSetIDRefused: red team round 32, R32a-7. With
// WithProtectedAgentConfig, Workspace.Chmod set S_ISUID on a file the
// caller wrote, where the children's seccomp filter refuses such modes
// and the protection keeps set-ID programs read-only. Refused with
// ErrSetIDProgram. Controls: a plain mode is set, and without the
// protection the set-ID mode is too (the library's caller's choice).
func TestChmodSetIDRefused(t *testing.T) {
	for _, protect := range []bool{true, false} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, "tool"), []byte("x"), 0o644))
		var opts []jail.Option
		if protect {
			opts = append(opts, jail.WithProtectedAgentConfig())
		}
		ws, err := jail.New(root, opts...)
		require.NoError(t, err)
		err = ws.Chmod("tool", 0o755|os.ModeSetuid)
		if protect {
			assert.ErrorIs(t, err, jail.ErrSetIDProgram)
			fi, err := os.Stat(filepath.Join(root, "tool"))
			require.NoError(t, err)
			assert.Zero(t, fi.Mode()&os.ModeSetuid)
		} else {
			assert.NoError(t, err, "control: without the protection")
		}
		assert.NoError(t, ws.Chmod("tool", 0o755), "control: a plain mode")
		ws.Close()
	}
}
