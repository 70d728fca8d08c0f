package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestHomeDirIsPolicyRoot: a --home DIR the user chose is a read-write
// root of the policy, as --rw DIR (red team round 23, R23a-3:
// --deny-secrets --home ~ read ~/.aws/credentials and the SSH key, the
// directory granted whole as the command's HOME). In the namespace layer
// and with --no-namespaces the secrets are denied to the command, while
// a plain file of the same directory is read and written (control), and
// the same directory as --rw gives the same verdicts (resolve and
// landjail-mcp have no --home).
// Red with the directory granted as before (Policy without HomeRoot):
// both secrets read.
func TestHomeDirIsPolicyRoot(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	creds, key, plain := filepath.Join(home, ".aws/credentials"), filepath.Join(home, ".ssh/id_ed25519"), filepath.Join(home, "notes.txt")
	require.NoError(t, os.WriteFile(creds, []byte("AWS_SECRET\n"), 0o600))
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nKEY_SECRET\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600))
	require.NoError(t, os.WriteFile(plain, []byte("PLAIN\n"), 0o644))
	script := "cat " + creds + "; cat " + key + "; cat " + plain + "; echo more >> " + plain
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		for _, grant := range []string{"--home", "--rw"} {
			args := append([]string{"run", "--workspace", ws, "--deny-secrets", grant, home}, mode...)
			_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "sh", "-c", script)...)
			assert.NotContains(t, out, "AWS_SECRET", "%s %v", grant, mode)
			assert.NotContains(t, out, "KEY_SECRET", "%s %v", grant, mode)
			assert.Contains(t, out, "PLAIN", "control: %s %v: the plain file read", grant, mode)
		}
	}
	b, err := os.ReadFile(plain)
	require.NoError(t, err)
	assert.Equal(t, "PLAIN\n"+"more\n"+"more\n"+"more\n"+"more\n", string(b), "control: written in every run")
}
