package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestDeniedThroughSecondMount: under Landlock alone, a denied file of
// the workspace stays denied at the path where a second mount of the
// workspace shows it below a rule granted outside the policy (a bind
// mount at /usr/local/src/view, inside the system preset's /usr: red
// team round 26, R26a-4, the secret read at that path). The bind mount
// is made in a private mount namespace (unshare -m) that landjail runs
// in. Controls: a workspace file read at both paths; the namespace
// layer, which masked both already.
func TestDeniedThroughSecondMount(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	unshare, err := osexec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1)")
	}
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("API_KEY=SECRET_ALIAS\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("fine\n"), 0o644))
	view := "/usr/local/src/landjail-alias-test"
	script := `set -e; mount --make-rprivate /; mkdir -p ` + view + `; mount --bind "$WS" ` + view + `; set +e; ` +
		`"$BIN" run --workspace "$WS" --deny-secrets $MODE -- /bin/sh -c 'cat ` + view + `/.env .env; cat ` + view + `/notes.txt notes.txt'; ` +
		`umount ` + view + `; rmdir ` + view + ` 2>/dev/null || true`
	for _, mode := range []string{"--no-namespaces", ""} {
		c := osexec.Command(unshare, "-m", "/bin/sh", "-c", script)
		c.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "WS=" + ws, "BIN=" + bin, "MODE=" + mode}
		c.Dir = ws
		out, _ := c.CombinedOutput()
		assert.NotContains(t, string(out), "SECRET", "%q: the denied file read through the second mount", mode)
		assert.Contains(t, string(out), "fine\nfine", "control %q: %s", mode, out)
	}
}
