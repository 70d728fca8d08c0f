package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// patchWords are the tools' error words of testdata/patch_attacks.toml.
var patchWords = map[string]error{
	"invalid": tools.ErrInvalidArgs, "unsupported": tools.ErrPatchUnsupported,
	"conflict": tools.ErrPatchConflict, "notregular": tools.ErrNotRegular,
	"toolarge": tools.ErrFileTooLarge,
}

// TestPatchAttacks runs testdata/patch_attacks.toml through Toolkit.Call
// ("patch"): every refusal is an *Error wrapping the expected sentinel
// and leaves $ROOT, $OUT and $ROOT-evil byte for byte unchanged; every
// control applies and leaves the expected tree.
func TestPatchAttacks(t *testing.T) {
	for _, c := range attacktest.LoadPatchCases(t, "../testdata/patch_attacks.toml") {
		t.Run(c.Name, func(t *testing.T) {
			e := c.Build(t)
			k := &tools.Toolkit{WS: c.Workspace(t, e), Limits: tools.Limits{FileBytes: c.FileBytes}}
			for _, r := range c.Read {
				_, err := k.ReadFile(tools.ReadFileArgs{Path: r})
				require.NoError(t, err, "read_file %s", r)
			}
			before := attacktest.Snapshot(t, e.Base)
			raw, err := json.Marshal(tools.PatchArgs{Patch: c.Diff(e)})
			require.NoError(t, err)
			res, err := k.Call(context.Background(), tools.ToolPatch, raw)
			if c.Expect == "ok" {
				require.NoError(t, err, c.Why)
				c.CheckAfter(t, e)
				assert.Equal(t, attacktest.Snapshot(t, e.Out), map[string]string(filterPrefix(before, "out")), "outside changed")
				t.Log(res.String())
				return
			}
			require.Error(t, err, "%s: patch applied: %v", c.Why, res)
			var te *tools.Error
			assert.ErrorAs(t, err, &te)
			assert.True(t, attacktest.PatchErrIs(err, c.Expect, patchWords), "want %s, got %v", c.Expect, err)
			for _, s := range c.Contains {
				assert.Contains(t, err.Error(), s)
			}
			assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused patch changed the tree")
		})
	}
}

// filterPrefix returns the entries of snap under dir, relative to it.
func filterPrefix(snap map[string]string, dir string) map[string]string {
	m := map[string]string{}
	for k, v := range snap {
		if rel, err := filepath.Rel(dir, k); err == nil && k != dir && filepath.IsLocal(rel) {
			m[rel] = v
		} else if k == dir {
			m["."] = v
		}
	}
	return m
}

// TestPatchRollback makes the second write of a patch fail after the
// plan passed (d is a dangling symlink: the plan's checks accept
// d/new.txt, the write cannot create it) and checks that the first file,
// already written, is restored and the error says so.
func TestPatchRollback(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(dir, "d")))
	c := attacktest.PatchCase{Name: "rollback"}
	k := &tools.Toolkit{WS: c.Workspace(t, &attacktest.Env{Root: dir})}
	_, err := k.ReadFile(tools.ReadFileArgs{Path: "a.txt"})
	require.NoError(t, err)
	diff := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/d/new.txt\n@@ -0,0 +1 @@\n+x\n"
	_, err = k.Patch(tools.PatchArgs{Patch: diff})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "every file already written was restored")
	got, rerr := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, rerr)
	assert.Equal(t, "one\n", string(got), "the first file was not restored")
	// The restored file is usable again: the tracker knows its version.
	_, err = k.Patch(tools.PatchArgs{Patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"})
	require.NoError(t, err)
}

// TestPatchNaiveControl is the unconfined control: the same diffs
// applied naively (go-gitdiff, the name joined to the root, os.ReadFile
// and os.WriteFile) do change the file outside the workspace, so the
// refusals of TestPatchAttacks are landjail's doing.
func TestPatchNaiveControl(t *testing.T) {
	for _, c := range attacktest.LoadPatchCases(t, "../testdata/patch_attacks.toml") {
		switch c.Name {
		case "dotdot_traditional", "dotdot_git_header", "symlink_target_outside":
		default:
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			e := c.Build(t)
			files, _, err := gitdiff.Parse(strings.NewReader(c.Diff(e)))
			require.NoError(t, err)
			require.Len(t, files, 1)
			name := files[0].NewName
			if n, ok := strings.CutPrefix(name, "b/"); ok {
				name = n
			}
			p := filepath.Join(e.Root, name)
			old, err := os.ReadFile(p)
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, gitdiff.Apply(&out, bytes.NewReader(old), files[0]))
			require.NoError(t, os.WriteFile(p, out.Bytes(), 0o644))
			got, err := os.ReadFile(filepath.Join(e.Out, "secret"))
			require.NoError(t, err)
			assert.Equal(t, "PWNED\n", string(got), "the naive applier did not escape: the control is broken")
		})
	}
}

// TestPatchStale: a file read, then changed on disk by someone else, is
// refused (jail.ErrStale) and keeps the other writer's content.
func TestPatchStale(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	require.NoError(t, os.WriteFile(p, []byte("one\n"), 0o644))
	k := &tools.Toolkit{WS: (&attacktest.PatchCase{}).Workspace(t, &attacktest.Env{Root: dir})}
	_, err := k.ReadFile(tools.ReadFileArgs{Path: "a.txt"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte("one\nmore\n"), 0o644))
	_, err = k.Patch(tools.PatchArgs{Patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"})
	assert.ErrorIs(t, err, jail.ErrStale)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "one\nmore\n", string(got))
}

// TestPatchModes: mode lines set 0755 / 0644 on created and existing
// files (the only two modes patch writes).
func TestPatchModes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.sh"), []byte("echo\n"), 0o644))
	k := &tools.Toolkit{WS: (&attacktest.PatchCase{}).Workspace(t, &attacktest.Env{Root: dir})}
	_, err := k.ReadFile(tools.ReadFileArgs{Path: "run.sh"})
	require.NoError(t, err)
	_, err = k.Patch(tools.PatchArgs{Patch: "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/new.sh b/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/new.sh\n@@ -0,0 +1 @@\n+echo\n"})
	require.NoError(t, err)
	for _, n := range []string{"run.sh", "new.sh"} {
		fi, err := os.Stat(filepath.Join(dir, n))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), n)
	}
}
