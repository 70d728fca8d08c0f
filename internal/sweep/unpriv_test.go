package sweep_test

import (
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

const envUnprivChild = "LANDJAIL_SWEEP_UNPRIV_DIR"

// TestSweepUnprivileged: file modes the command sets do not stop the
// sweep of a caller without CAP_DAC_OVERRIDE (run as uid 65534 when the
// test runs as root): a config in a directory the command made read-only
// (chmod 555) is still renamed away (red before: the rename failed with
// EACCES), and a directory the command made unlistable (chmod 000) is
// made listable for its owner again and swept (red team F6; before, an
// ErrUnlistable error); one that was already unlistable at Take is left
// alone and is no error (control).
func TestSweepUnprivileged(t *testing.T) {
	if dir := os.Getenv(envUnprivChild); dir != "" {
		sweepUnprivileged(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		sweepUnprivileged(t, t.TempDir())
		return
	}
	base, err := os.MkdirTemp("", "sweep-unpriv-")
	require.NoError(t, err)
	defer os.RemoveAll(base)
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "sweep.test")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	src.Close()
	require.NoError(t, dst.Close())
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Chown(ws, 65534, 65534))
	cmd := osexec.Command(bin, "-test.run=^TestSweepUnprivileged$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envUnprivChild+"="+ws, "HOME=/", "GOCOVERDIR=")
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("%s", out)
	assert.Contains(t, string(out), "PASS")
}

func sweepUnprivileged(t *testing.T, root string) {
	mk := func(n, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(c), 0o644))
	}
	mk("old/f", "x")
	require.NoError(t, os.Chmod(filepath.Join(root, "old"), 0))
	defer os.Chmod(filepath.Join(root, "old"), 0o755)
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err, "a directory unlistable from the start is no error")
	defer snap.Close()

	mk("ro/.git/config", evilConfig)
	require.NoError(t, os.Chmod(filepath.Join(root, "ro/.git"), 0o555))
	q, err := snap.Sweep()
	require.NoError(t, err)
	if assert.Len(t, q, 1) {
		assert.Equal(t, "ro/.git/config", q[0].Path)
		assert.Empty(t, q[0].Error)
	}
	_, err = os.Lstat(filepath.Join(root, "ro/.git/config"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Red team F6: directories the command made unlistable (nested
	// ones too) are made listable for their owner again and swept (red
	// before: ErrUnlistable, the config stayed).
	mk("hid/in/.git/config", evilConfig)
	mk("seen/.envrc", "x")
	require.NoError(t, os.Chmod(filepath.Join(root, "hid/in"), 0))
	require.NoError(t, os.Chmod(filepath.Join(root, "hid"), 0))
	defer os.Chmod(filepath.Join(root, "hid"), 0o755)
	q, err = snap.Sweep()
	assert.NoError(t, err)
	got := map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	assert.Equal(t, map[string]string{"hid": "unlistable", "hid/in": "unlistable", "hid/in/.git/config": "created", "seen/.envrc": "created"}, got)
	_, err = os.Lstat(filepath.Join(root, "hid/in/.git/config"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Red team round 12, R12-2: a repository made below a directory the
	// command made unlistable takes the global configuration's relative
	// hooksPath too (the sweep met it only after making the directory
	// listable again). Control: the hooks are swept when lib stays
	// listable (TestSweepRoundFive's R11a-9 row).
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = .hooks\n"), 0o644))
	mk("lib/nd/.git/HEAD", "ref: refs/heads/main\n")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "lib/nd/.git/objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "lib/nd/.git/refs"), 0o755))
	mk("lib/nd/.hooks/pre-commit", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(root, "lib"), 0o111))
	defer os.Chmod(filepath.Join(root, "lib"), 0o755)
	q, err = snap.Sweep()
	assert.NoError(t, err)
	got = map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	assert.Equal(t, "created", got["lib/nd/.hooks"], "%v", got)
}
