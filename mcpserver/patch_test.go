package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/tools"
)

// patchPhrases is what the model reads for each error word of
// testdata/patch_attacks.toml.
var patchPhrases = map[string]string{
	"outside": "resolves outside the workspace", "denied": "policy denies", "readonly": "read-only",
	"notread": "has not been read", "exist": "already exists", "invalid": "invalid arguments",
	"unsupported": "unsupported change", "conflict": "does not apply", "notregular": "not a regular file",
	"toolarge": "size cap",
}

// TestPatchAttacks sends testdata/patch_attacks.toml through a real MCP
// client: reads with read_file, then the diff to patch. A refusal is a
// tool error (IsError) saying why, and the whole tree ($ROOT, $OUT,
// $ROOT-evil) is byte for byte unchanged; a control applies.
func TestPatchAttacks(t *testing.T) {
	for _, c := range attacktest.LoadPatchCases(t, "../testdata/patch_attacks.toml") {
		t.Run(c.Name, func(t *testing.T) {
			e := c.Build(t)
			cs, _ := connect(t, &tools.Toolkit{WS: c.Workspace(t, e), Limits: tools.Limits{FileBytes: c.FileBytes}}, nil)
			for _, r := range c.Read {
				text, isErr := call(t, cs, tools.ToolReadFile, map[string]any{"path": r})
				require.False(t, isErr, "read_file %s: %s", r, text)
			}
			before := attacktest.Snapshot(t, e.Base)
			text, isErr := call(t, cs, tools.ToolPatch, map[string]any{"patch": c.Diff(e)})
			if c.Expect == "ok" {
				require.False(t, isErr, "%s: %s", c.Why, text)
				c.CheckAfter(t, e)
				return
			}
			require.True(t, isErr, "%s: patch applied: %s", c.Why, text)
			phrase, ok := patchPhrases[c.Expect]
			require.True(t, ok, "no phrase for %q", c.Expect)
			assert.Contains(t, text, phrase)
			for _, s := range c.Contains {
				assert.Contains(t, text, s)
			}
			assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused patch changed the tree")
		})
	}
}
