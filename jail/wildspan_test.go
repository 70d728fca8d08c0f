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
