package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestPatchRenameOutOfStickyDirectory (red team round 30, R30d-8): a
// root server's patch renaming a file it may write but not remove (in
// another user's sticky directory) fails cleanly: nothing is written, no
// file given to the old file's owner is left behind (the new name was
// written and given away first, and the rollback could not remove it:
// "ROLLBACK FAILED"). Control: outside the sticky directory the same
// rename succeeds.
func TestPatchRenameOutOfStickyDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	t.Parallel()
	e := newEnv(t, []string{"shared/a.txt=a\n", "free.txt=free\n"})
	shared := filepath.Join(e.root, "shared")
	require.NoError(t, os.Chown(shared, 65534, 65534))
	require.NoError(t, os.Chmod(shared, os.ModeSticky|0o777))
	for _, n := range []string{"shared/a.txt", "free.txt"} {
		require.NoError(t, os.Chown(filepath.Join(e.root, n), 1000, 1000))
		require.NoError(t, os.Chmod(filepath.Join(e.root, n), 0o666))
	}
	ctx := context.Background()
	call := func(tool string, args map[string]string) error {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		_, err = e.k.Call(ctx, tool, b)
		return err
	}
	patch := func(from, to string) string {
		return "diff --git a/" + from + " b/" + to + "\nrename from " + from + "\nrename to " + to + "\n--- a/" + from + "\n+++ b/" + to + "\n@@ -1 +1 @@\n-" + filepath.Base(from[:len(from)-4]) + "\n+AGENT\n"
	}
	require.NoError(t, call("read_file", map[string]string{"path": "shared/a.txt"}))
	err := call("patch", map[string]string{"patch": patch("shared/a.txt", "shared/b.txt")})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "ROLLBACK FAILED")
	assert.NoFileExists(t, filepath.Join(shared, "b.txt"), "no new file left")
	assert.Equal(t, "a\n", e.read(t, "shared/a.txt"))

	require.NoError(t, call("read_file", map[string]string{"path": "free.txt"}))
	require.NoError(t, call("patch", map[string]string{"patch": patch("free.txt", "moved.txt")}), "control")
	assert.Equal(t, "AGENT\n", e.read(t, "moved.txt"))
}

// TestPatchRenameKeepsOthersMode (red team round 31, R31a-3): a rename
// diff with a new mode of a file another user owns is refused (only the
// owner changes a mode: the agent's bash gets EPERM for the same chmod),
// nothing moved; it had made a uid-1000 0755 file of the agent's
// content. Controls: the same rename without a mode change is applied,
// and the mode change of the server's own file too.
func TestPatchRenameKeepsOthersMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	t.Parallel()
	e := newEnv(t, []string{"d/run.sh=run\n", "d/plain.sh=plain\n", "mine.sh=mine\n"})
	for _, n := range []string{"d/run.sh", "d/plain.sh"} {
		require.NoError(t, os.Chown(filepath.Join(e.root, n), 1000, 1000))
		require.NoError(t, os.Chmod(filepath.Join(e.root, n), 0o666))
	}
	require.NoError(t, os.Chmod(filepath.Join(e.root, "mine.sh"), 0o644))
	ctx := context.Background()
	call := func(tool string, args map[string]string) error {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		_, err = e.k.Call(ctx, tool, b)
		return err
	}
	patch := func(from, to, mode string) string {
		p := "diff --git a/" + from + " b/" + to + "\n"
		if mode != "" {
			p += "old mode 100644\nnew mode " + mode + "\n"
		}
		return p + "rename from " + from + "\nrename to " + to + "\n--- a/" + from + "\n+++ b/" + to + "\n@@ -1 +1 @@\n-" + strings.TrimSuffix(filepath.Base(from), ".sh") + "\n+AGENT\n"
	}
	require.NoError(t, call("read_file", map[string]string{"path": "d/run.sh"}))
	err := call("patch", map[string]string{"patch": patch("d/run.sh", "d/run2.sh", "100755")})
	require.Error(t, err)
	assert.NoFileExists(t, filepath.Join(e.root, "d/run2.sh"))
	assert.Equal(t, "run\n", e.read(t, "d/run.sh"))

	require.NoError(t, call("read_file", map[string]string{"path": "d/plain.sh"}))
	require.NoError(t, call("patch", map[string]string{"patch": patch("d/plain.sh", "d/plain2.sh", "")}), "control: no mode change")
	fi, err := os.Stat(filepath.Join(e.root, "d/plain2.sh"))
	require.NoError(t, err)
	assert.EqualValues(t, 1000, fi.Sys().(*syscall.Stat_t).Uid)
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())

	require.NoError(t, call("read_file", map[string]string{"path": "mine.sh"}))
	require.NoError(t, call("patch", map[string]string{"patch": patch("mine.sh", "mine2.sh", "100755")}), "control: the server's own file")
	fi, err = os.Stat(filepath.Join(e.root, "mine2.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

// TestPatchRollbackOfOthersFile (red team round 31, R31a-6): a patch
// whose second file fails rolls back the first, another user's file,
// without a chmod it may not make: the error says the patch failed, not
// ROLLBACK FAILED, and the first file is back as it was.
func TestPatchRollbackOfOthersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	t.Parallel()
	e := newEnv(t, []string{"d/u.txt=u1\n", "shared/b.txt=b1\n"})
	shared := filepath.Join(e.root, "shared")
	require.NoError(t, os.Chown(shared, 65534, 65534))
	require.NoError(t, os.Chmod(shared, os.ModeSticky|0o777))
	for _, n := range []string{"d/u.txt", "shared/b.txt"} {
		require.NoError(t, os.Chown(filepath.Join(e.root, n), 1000, 1000))
		require.NoError(t, os.Chmod(filepath.Join(e.root, n), 0o666))
	}
	ctx := context.Background()
	call := func(tool string, args map[string]string) error {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		_, err = e.k.Call(ctx, tool, b)
		return err
	}
	for _, n := range []string{"d/u.txt", "shared/b.txt"} {
		require.NoError(t, call("read_file", map[string]string{"path": n}))
	}
	diff := "--- a/d/u.txt\n+++ b/d/u.txt\n@@ -1 +1 @@\n-u1\n+u2\n--- a/shared/b.txt\n+++ b/shared/b.txt\n@@ -1 +1 @@\n-b1\n+b2\n"
	err := call("patch", map[string]string{"patch": diff})
	require.Error(t, err, "the sticky directory refuses the second file")
	assert.NotContains(t, err.Error(), "ROLLBACK FAILED")
	assert.Equal(t, "u1\n", e.read(t, "d/u.txt"))
	fi, err := os.Stat(filepath.Join(e.root, "d/u.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())
	assert.EqualValues(t, 1000, fi.Sys().(*syscall.Stat_t).Uid)
}
