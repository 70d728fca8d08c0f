package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPatchKeepsOwner (red team round 27, R27e-2): a root server's
// patch that renames another user's file leaves the new name theirs,
// with its exact mode, and a rolled-back deletion makes their file again
// as theirs; through Toolkit.Call, so with the file tools' capability
// drop in force. Control: root's own file renamed stays root's.
func TestPatchKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	t.Parallel()
	e := newEnv(t, []string{"alice.txt=alice\n", "bob.txt=bob\n", "mine.txt=mine\n", "d => nowhere"})
	for _, n := range []string{"alice.txt", "bob.txt"} {
		p := filepath.Join(e.root, n)
		require.NoError(t, os.Chown(p, 65534, 65533))
		require.NoError(t, os.Chmod(p, 0o646))
	}
	owner := func(name string) [3]uint32 {
		fi, err := os.Lstat(filepath.Join(e.root, name))
		require.NoError(t, err, name)
		st := fi.Sys().(*syscall.Stat_t)
		return [3]uint32{st.Uid, st.Gid, st.Mode & 0o7777}
	}
	ctx := context.Background()
	call := func(tool string, args map[string]string) error {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		_, err = e.k.Call(ctx, tool, b)
		return err
	}
	for _, n := range []string{"alice.txt", "bob.txt", "mine.txt"} {
		require.NoError(t, call("read_file", map[string]string{"path": n}))
	}
	rename := func(from, to string) string {
		return "diff --git a/" + from + " b/" + to + "\nsimilarity index 100%\nrename from " + from + "\nrename to " + to + "\n"
	}
	require.NoError(t, call("patch", map[string]string{"patch": rename("alice.txt", "moved.txt")}))
	assert.Equal(t, [3]uint32{65534, 65533, 0o646}, owner("moved.txt"), "renamed: owner, group and mode kept")
	require.NoError(t, call("patch", map[string]string{"patch": rename("mine.txt", "mine2.txt")}))
	assert.Equal(t, [3]uint32{0, 0, 0o644}, owner("mine2.txt"), "control: root's file stays root's")
	require.NoError(t, call("read_file", map[string]string{"path": "moved.txt"}))
	require.NoError(t, call("patch", map[string]string{"patch": "diff --git a/moved.txt b/copy.txt\nsimilarity index 100%\ncopy from moved.txt\ncopy to copy.txt\n"}))
	assert.Equal(t, uint32(0), owner("copy.txt")[0], "control: a copy is the writer's, as with cp")
	assert.Equal(t, [3]uint32{65534, 65533, 0o646}, owner("moved.txt"), "a copy's source is unchanged")

	// A deletion rolled back: bob.txt is removed, the next file cannot
	// be made (d is a dangling link), bob.txt is made again.
	err := call("patch", map[string]string{"patch": "--- a/bob.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bob\n--- /dev/null\n+++ b/d/new.txt\n@@ -0,0 +1 @@\n+x\n"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "restored")
	assert.Equal(t, "bob\n", e.read(t, "bob.txt"))
	assert.Equal(t, [3]uint32{65534, 65533, 0o646}, owner("bob.txt"), "made again: owner, group and mode kept")
}
