package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
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
