package mcpserver_test

import (
	"context"
	"encoding/json"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/attacktest/toolcall"
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
		want, calls, ok := toolcall.For(c)
		if !ok {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			e := attacktest.Build(t, c)
			in := e.Input(t, c)
			if in == "" || !utf8.ValidString(in) {
				t.Skip("input is empty or not UTF-8: not expressible as a JSON tool argument")
			}
			k := &tools.Toolkit{WS: policyOf(t, e, c)}
			cs, _ := connect(t, k, nil)
			before := attacktest.Snapshot(t, e.Base)
			for _, tool := range calls {
				args := toolcall.Args(tool, in)
				text, isErr := call(t, cs, tool, args)
				assert.True(t, isErr, "%s(%q) not refused (%s): %s", tool, in, c.Why, text)
				// The refusal is the expected one: the argument guard's
				// (it names the sentinel) or, for what only the tool can
				// tell (a file not read yet), the tool's own message,
				// passed on unchanged.
				raw, err := json.Marshal(args)
				require.NoError(t, err)
				_, err = k.Call(context.Background(), tool, raw)
				require.ErrorIs(t, err, attacktest.Err(want), "%s(%q) in process", tool, in)
				if !strings.Contains(text, attacktest.Err(want).Error()) {
					assert.Equal(t, err.Error(), text, "%s(%q): refused for another reason than %q", tool, in, want)
				}
			}
			if !c.MayChangeOutside(attacktest.LayerWorkspace) {
				assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused tool call changed the tree")
			}
		})
	}
	assert.Greater(t, n, 50, "too few corpus cases ran")
}
