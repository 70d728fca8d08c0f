package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestWriteFileFailureLeavesNothing (red team round 27, R27e-3): a
// write_file that fails after making the missing parents ("no space
// left on device" on a 64 KiB tmpfs) leaves neither the file nor the
// directories it made; a directory that was there before stays.
// Control: the same call with a small content succeeds and makes them.
func TestWriteFileFailureLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	t.Parallel()
	dir := t.TempDir()
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		t.Skip("mount(2) blocked by the emulation (LANDJAIL_EMULATE=ns=...)")
	}
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	require.NoError(t, os.Mkdir(filepath.Join(dir, "keep"), 0o755))
	ws, err := jail.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	k := &tools.Toolkit{WS: ws, Tracker: jail.NewReadTracker()}

	_, err = k.WriteFile(tools.WriteFileArgs{Path: "keep/a/b/c/big.txt", Content: strings.Repeat("x", 1<<20)})
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.ENOSPC)
	ents, err := os.ReadDir(filepath.Join(dir, "keep"))
	require.NoError(t, err)
	assert.Empty(t, ents, "the directories the failed call made are gone")
	assert.DirExists(t, filepath.Join(dir, "keep"), "what was there before stays")

	_, err = k.WriteFile(tools.WriteFileArgs{Path: "keep/a/b/c/small.txt", Content: "ok\n"})
	require.NoError(t, err, "control")
	assert.FileExists(t, filepath.Join(dir, "keep/a/b/c/small.txt"))
}
