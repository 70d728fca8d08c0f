package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestPresetReinclusionAfterUserDenyRound17 (red team round 17, R17a-2):
// the secrets preset's re-inclusions ("!.env.example", "!id_*.pub") do
// not lift what the caller denies by name, in either option order; the
// caller's own "!" still re-includes what the preset denies. Controls:
// the preset alone re-includes the three files, and without any pattern
// every file is readable. Red before: with WithDeny first (the CLI's
// order) the three denied names were read.
func TestPresetReinclusionAfterUserDenyRound17(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", t.TempDir())
	files := []string{".env.example", "config/.env.example", "keys/id_ed25519.pub", ".env.test"}
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("S"), 0o600))
	}
	user := jail.WithDeny(".env.example", "config/*", "*.pub", "!.env.test")
	for _, c := range []struct {
		name string
		opts []jail.Option
		read map[string]bool
	}{
		{"user then preset", []jail.Option{user, jail.WithDenySecrets()}, map[string]bool{".env.test": true}},
		{"preset then user", []jail.Option{jail.WithDenySecrets(), user}, map[string]bool{".env.test": true}},
		{"control: preset alone", []jail.Option{jail.WithDenySecrets()},
			map[string]bool{".env.example": true, "config/.env.example": true, "keys/id_ed25519.pub": true}},
		{"control: nothing", nil, map[string]bool{".env.example": true, "config/.env.example": true, "keys/id_ed25519.pub": true, ".env.test": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := jail.New(root, c.opts...)
			require.NoError(t, err)
			defer w.Close()
			for _, f := range files {
				_, err := w.ReadFile(f)
				if c.read[f] {
					assert.NoError(t, err, f)
				} else {
					assert.ErrorIs(t, err, jail.ErrDenied, f)
				}
			}
		})
	}
}
