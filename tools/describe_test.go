package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestDescriptionsMatchEnforcement: for each tool and each behaviour it
// enforces (needs a read first, size cap, skips ignored directories,
// refuses outside paths), the test exercises the behaviour through Call
// AND asserts the tool's description tells the model about it, so
// neither the code nor the description can drift alone. Every file tool
// must appear for "refuses outside".
func TestDescriptionsMatchEnforcement(t *testing.T) {
	const limit = 1024
	big := strings.Repeat("x", 2*limit)
	type check struct {
		tool, behaviour string
		phrases         []string // all must be in the description
		args            string
		// wantErr: the call must fail with it; else the result text must
		// contain inResult.
		wantErr  error
		inResult string
		// readFirst is read with read_file (its error ignored: a read
		// refused for its size still marks the file read) before the call.
		readFirst string
	}
	checks := []check{
		{tools.ToolWriteFile, "needs-read", []string{"read with read_file in this session"}, `{"path":"f","content":"x"}`, jail.ErrNotRead, "", ""},
		{tools.ToolEditFile, "needs-read", []string{"read with read_file in this session"}, `{"path":"f","old_string":"one","new_string":"x"}`, jail.ErrNotRead, "", ""},
		{tools.ToolPatch, "needs-read", []string{"read with read_file in this session"}, `{"patch":"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-one\n+x\n"}`, jail.ErrNotRead, "", ""},
		{tools.ToolReadFile, "size-cap", []string{"larger than the size cap"}, `{"path":"big"}`, tools.ErrFileTooLarge, "", ""},
		{tools.ToolWriteFile, "size-cap", []string{"larger than the size cap"}, `{"path":"new","content":"` + big + `"}`, tools.ErrFileTooLarge, "", ""},
		{tools.ToolEditFile, "size-cap", []string{"larger than the size cap"}, `{"path":"big","old_string":"x","new_string":"y"}`, tools.ErrFileTooLarge, "", "big"},
		{tools.ToolPatch, "size-cap", []string{"larger than the size cap"}, `{"patch":"--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+` + big + `\n"}`, tools.ErrFileTooLarge, "", ""},
		{tools.ToolGrep, "size-cap", []string{"larger than the size cap"}, `{"pattern":"x"}`, nil, "1 files skipped as larger than the size cap", ""},
		{tools.ToolGrep, "skips-ignored", []string{".gitignore", "ignored directories"}, `{"pattern":"HIDDEN"}`, nil, "ignored directories skipped", ""},
	}
	for _, name := range []string{tools.ToolReadFile, tools.ToolWriteFile, tools.ToolEditFile, tools.ToolPatch, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep} {
		args := `{"path":"../out"}`
		switch name {
		case tools.ToolWriteFile:
			args = `{"path":"../out/x","content":"x"}`
		case tools.ToolEditFile:
			args = `{"path":"../out/secret","old_string":"S","new_string":"x"}`
		case tools.ToolPatch:
			args = `{"patch":"--- a/o/secret\n+++ b/o/secret\n@@ -1 +1 @@\n-S\n+x\n"}`
		case tools.ToolGlob:
			args = `{"pattern":"*","path":"../out"}`
		case tools.ToolGrep:
			args = `{"pattern":"S","path":"../out"}`
		}
		checks = append(checks, check{name, "refuses-outside", []string{"outside the workspace"}, args, jail.ErrOutsideWorkspace, "", ""})
	}
	desc := map[string]string{}
	k0 := &tools.Toolkit{}
	for _, d := range k0.Definitions() {
		desc[d.Name] = d.Description
	}
	for _, c := range checks {
		t.Run(c.tool+"/"+c.behaviour, func(t *testing.T) {
			base := t.TempDir()
			root, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
			for _, d := range []string{root, out, filepath.Join(root, "ignored")} {
				require.NoError(t, os.MkdirAll(d, 0o755))
			}
			for name, content := range map[string]string{
				"ws/f": "one\n", "ws/big": big, "ws/.gitignore": "ignored/\n", "ws/ignored/h": "HIDDEN\n", "out/secret": "S\n",
			} {
				require.NoError(t, os.WriteFile(filepath.Join(base, name), []byte(content), 0o644))
			}
			require.NoError(t, os.Symlink(out, filepath.Join(root, "o")))
			ws, err := jail.New(root, jail.WithReadTracker(jail.NewReadTracker()))
			require.NoError(t, err)
			defer ws.Close()
			k := &tools.Toolkit{WS: ws, Limits: tools.Limits{FileBytes: limit, GrepFileBytes: limit}}
			for _, p := range c.phrases {
				assert.Contains(t, desc[c.tool], p, "%s enforces %s but its description does not say so", c.tool, c.behaviour)
			}
			if c.readFirst != "" {
				_, _ = k.ReadFile(tools.ReadFileArgs{Path: c.readFirst})
			}
			require.True(t, json.Valid([]byte(c.args)), c.args)
			res, err := k.Call(context.Background(), c.tool, json.RawMessage(c.args))
			if c.wantErr != nil {
				assert.ErrorIs(t, err, c.wantErr, "%s does not enforce %s", c.tool, c.behaviour)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, res.String(), c.inResult, "%s does not report %s in its result", c.tool, c.behaviour)
		})
	}
}
