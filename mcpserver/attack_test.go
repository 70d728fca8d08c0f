package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/attacktest/toolcall"
)

// TestAttacks sends every input of testdata/attacks.toml that the
// Workspace refuses by policy (outside, denied, read-only, ...) through a
// real MCP client to the tools that take it as a path: each must come
// back as a tool error (IsError, not a protocol error) and change nothing.
func TestAttacks(t *testing.T) {
	cases := attacktest.Load(t, "../testdata/attacks.toml")
	toolcall.Run(t, cases, func(t *testing.T, r toolcall.Refusal) {
		cs, _ := connect(t, r.Toolkit, nil)
		for _, tool := range r.Tools {
			args := toolcall.Args(tool, r.In)
			text, isErr := call(t, cs, tool, args)
			assert.True(t, isErr, "%s(%q) not refused (%s): %s", tool, r.In, r.Case.Why, text)
			// The refusal is the expected one: the argument guard's (it
			// names the sentinel) or, for what only the tool can tell (a
			// file not read yet), the tool's own message, passed on
			// unchanged.
			raw, err := json.Marshal(args)
			require.NoError(t, err)
			_, err = r.Toolkit.Call(context.Background(), tool, raw)
			require.ErrorIs(t, err, attacktest.Err(r.Want), "%s(%q) in process", tool, r.In)
			if !strings.Contains(text, attacktest.Err(r.Want).Error()) {
				assert.Equal(t, err.Error(), text, "%s(%q): refused for another reason than %q", tool, r.In, r.Want)
			}
		}
	})
}
