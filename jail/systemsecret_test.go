package jail_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestDenySecretsSystemStores (red team round 31, R31b-1): with /etc
// granted, --deny-secrets denies the system's credential stores
// (/etc/shadow, sudo's rules, SSH host keys); control: /etc/passwd stays
// readable, and without the preset /etc/shadow is allowed by the policy.
func TestDenySecretsSystemStores(t *testing.T) {
	if _, err := os.Stat("/etc/shadow"); err != nil {
		t.Skip("no /etc/shadow here")
	}
	ws, err := jail.New(t.TempDir(), jail.WithAllowed("/etc", jail.ReadOnly), jail.WithDenySecrets())
	require.NoError(t, err)
	defer ws.Close()
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers"} {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		_, err := ws.Check(p, jail.Read)
		assert.ErrorIs(t, err, jail.ErrDenied, p)
	}
	_, err = ws.Check("/etc/passwd", jail.Read)
	assert.NoError(t, err, "control")
	plain, err := jail.New(t.TempDir(), jail.WithAllowed("/etc", jail.ReadOnly))
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Check("/etc/shadow", jail.Read)
	assert.NoError(t, err, "control: the policy alone allows it")
	assert.True(t, jail.IsSystemSecret("/etc/ssh/ssh_host_ed25519_key"))
	assert.False(t, jail.IsSystemSecret("/etc/ssh/ssh_host_ed25519_key.pub"))
	assert.True(t, jail.IsSystemSecret("/etc/sudoers.d/90-cloud"))
	assert.False(t, jail.IsSystemSecret("/etc/sudoers.dx"))
}

// TestDenySecretsRound31 (red team round 31, R31b-3): pass's default
// store, shell and REPL histories, age identities and more CLI tokens
// are denied by --deny-secrets; control: a file beside each is not.
func TestDenySecretsRound31(t *testing.T) {
	home := t.TempDir()
	ws, err := jail.New(home, jail.WithDenySecrets())
	require.NoError(t, err)
	defer ws.Close()
	for _, p := range []string{".password-store/x.gpg", ".bash_history", ".zsh_history", ".local/share/fish/fish_history",
		".psql_history", ".mysql_history", ".python_history", ".node_repl_history", ".config/age/keys.txt", ".age/key.txt",
		".kaggle/kaggle.json", ".huggingface/token", ".config/huggingface/token", ".config/op/config", ".supabase/access-token",
		".wakatime.cfg", ".config/pulumi/credentials.json", ".config/vercel/auth.json"} {
		_, err := ws.Check(filepath.Join(home, p), jail.Read)
		assert.ErrorIs(t, err, jail.ErrDenied, p)
		_, err = ws.Check(filepath.Join(home, filepath.Dir(p), "beside.txt"), jail.Read)
		if filepath.Dir(p) != "." && (strings.HasSuffix(filepath.Dir(p), "op") || strings.HasSuffix(filepath.Dir(p), "age") || strings.HasSuffix(filepath.Dir(p), ".password-store")) {
			continue // a directory denied whole
		}
		assert.NoError(t, err, "control: beside %s", p)
	}
}
