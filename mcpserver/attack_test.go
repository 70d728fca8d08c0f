package mcpserver_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// policyOf builds the case's policy, with a tracker.
func policyOf(t testing.TB, e *attacktest.Env, c *attacktest.Case) *jail.Workspace {
	t.Helper()
	return attacktest.NewWorkspace(t, e, c, jail.WithReadTracker(jail.NewReadTracker()))
}

// TestAttacks sends every input of testdata/attacks.toml that the
// Workspace refuses by policy (outside, denied, read-only, ...) through a
// real MCP client to the tools that take it as a path: each must come
// back as a tool error (IsError, not a protocol error) and change nothing.
func TestAttacks(t *testing.T) {
	cases := attacktest.Load(t, "../testdata/attacks.toml")
	n := 0
	for i := range cases {
		c := &cases[i]
		want, ok := c.Expect(attacktest.LayerWorkspace)
		if !ok || c.NeedsRoot {
			continue
		}
		switch want {
		case "outside", "denied", "readonly", "notexec", "absolute", "invalid", "notread", "stale", "hardlinked":
		default:
			continue
		}
		var calls []string
		switch c.Op {
		case "open", "stat", "lstat":
			calls = []string{tools.ToolReadFile, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep}
		case "write", "create":
			calls = []string{tools.ToolWriteFile, tools.ToolEditFile}
		default:
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			e := attacktest.Build(t, c)
			in := e.Input(t, c)
			if in == "" || !utf8.ValidString(in) {
				t.Skip("input is empty or not UTF-8: not expressible as a JSON tool argument")
			}
			cs, _ := connect(t, &tools.Toolkit{WS: policyOf(t, e, c)}, nil)
			before := attacktest.Snapshot(t, e.Base)
			for _, tool := range calls {
				args := map[string]any{"path": in}
				switch tool {
				case tools.ToolWriteFile:
					args["content"] = attacktest.Payload
				case tools.ToolEditFile:
					args["old_string"], args["new_string"] = "x", attacktest.Payload
				case tools.ToolGlob:
					args["pattern"] = "*"
				case tools.ToolGrep:
					args["pattern"] = "x"
				}
				text, isErr := call(t, cs, tool, args)
				assert.True(t, isErr, "%s(%q) not refused (%s): %s", tool, in, c.Why, text)
				assert.Contains(t, text, "refused", "%s(%q)", tool, in)
			}
			if !c.MayChangeOutside(attacktest.LayerWorkspace) {
				assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused tool call changed the tree")
			}
		})
	}
	assert.Greater(t, n, 50, "too few corpus cases ran")
}
