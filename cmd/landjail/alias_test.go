package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestMaskAliasMount: a masked file is masked too where another mount of
// its file system shows it (red team round 23, R23a-9: with the
// workspace bind-mounted elsewhere, as an administrator's bind mount or
// toolbox's /run/host does, the namespace layer's .env mask held at the
// workspace's path only, and Landlock's rule, on the workspace's inode,
// granted the file at the other path). The alias lies outside /tmp (the
// view's private /tmp would hide it). In the namespace layer and with
// --no-namespaces, under --deny-secrets, `cat ALIAS/.env` is refused; control: unconfined, the
// alias shows the secret, and a plain file is read through it confined.
// Red without maskAliases in landlock's viewLists (the secret read in
// the namespace layer).
func TestMaskAliasMount(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs a bind mount")
	}
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("T=ALIAS_SECRET\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("PLAIN\n"), 0o644))
	alias, err := os.MkdirTemp("/var/tmp", "landjail-alias-")
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(alias) })
	if err := unix.Mount(ws, alias, "", unix.MS_BIND, ""); err != nil {
		kerneltest.Missing(t, "bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(alias, unix.MNT_DETACH) })
	b, err := os.ReadFile(filepath.Join(alias, ".env"))
	require.NoError(t, err)
	require.Equal(t, "T=ALIAS_SECRET\n", string(b), "control: the alias shows the workspace")
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		args := append([]string{"run", "--workspace", ws, "--deny-secrets"}, mode...)
		_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "sh", "-c",
			"cat .env; cat "+alias+"/.env; cat "+alias+"/plain.txt")...)
		assert.NotContains(t, out, "ALIAS_SECRET", "%v", mode)
		assert.Contains(t, out, alias+"/.env: Permission denied", "%v", mode)
		assert.Contains(t, out, "PLAIN", "control: %v: the alias is reachable", mode)
	}
}
