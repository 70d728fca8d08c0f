// Package toolcall turns a case of the adversarial corpus
// (testdata/attacks.toml, see attacktest) into the agent tool calls that
// take its input as a path, so that the tools package and the MCP server
// send the same calls.
package toolcall

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// Refusal is one corpus case ready to be sent to the tools: the
// Workspace's expected refusal (an attacktest word), the tools that take
// the input as their path, the input, and a Toolkit on the case's policy.
type Refusal struct {
	Case    *attacktest.Case
	Want    string
	Tools   []string
	In      string
	Toolkit *tools.Toolkit
}

// Run runs a subtest per case of cases that For accepts: it builds the
// case's tree and a Workspace on its policy with a read tracker, a
// Toolkit on that, and calls fn; whatever fn calls must change nothing
// outside (unless the case says the layer may). A case whose input is
// empty (the tools' default path) or not UTF-8 (JSON cannot carry it) is
// skipped. Run fails the test when fewer than 50 cases ran.
func Run(t *testing.T, cases []attacktest.Case, fn func(t *testing.T, r Refusal)) {
	n := 0
	for i := range cases {
		c := &cases[i]
		want, calls, ok := For(c)
		if !ok {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			e := attacktest.Build(t, c)
			ws := attacktest.NewWorkspace(t, e, c, jail.WithReadTracker(jail.NewReadTracker()))
			in := e.Input(t, c)
			if in == "" || !utf8.ValidString(in) {
				t.Skip("input is empty or not UTF-8: not expressible as a JSON tool argument")
			}
			before := attacktest.Snapshot(t, e.Base)
			fn(t, Refusal{Case: c, Want: want, Tools: calls, In: in, Toolkit: &tools.Toolkit{WS: ws}})
			if !c.MayChangeOutside(attacktest.LayerWorkspace) {
				assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused tool call changed the tree")
			}
		})
	}
	assert.Greater(t, n, 50, "too few corpus cases ran")
}

// For returns the Workspace layer's expectation for c and the tools that
// take c's input as their path: read_file, list_directory, glob and grep
// for an "open", "stat" or "lstat" case; write_file and edit_file for
// "write" and "create". ok is false when the case does not apply: no
// Workspace expectation, an errno word rather than a policy refusal (a
// missing parent may legitimately differ: write_file creates parents), a
// case that needs root (the jail's tests run those), or another op.
func For(c *attacktest.Case) (want string, calls []string, ok bool) {
	want, ok = c.Expect(attacktest.LayerWorkspace)
	if !ok || !isPolicy(want) || c.NeedsRoot {
		return "", nil, false
	}
	switch c.Op {
	case "open", "stat", "lstat":
		return want, []string{tools.ToolReadFile, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep}, true
	case "write", "create":
		return want, []string{tools.ToolWriteFile, tools.ToolEditFile}, true
	}
	return "", nil, false
}

// Args returns the arguments of a call of tool with path in: the path,
// and what else the tool requires (attacktest.Payload as the content
// written, "*" or "x" as the pattern).
func Args(tool, in string) map[string]any {
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
	return args
}

// isPolicy reports whether word is a policy refusal of the Workspace
// layer (as opposed to an errno word such as "notexist").
func isPolicy(word string) bool {
	switch word {
	case "outside", "denied", "readonly", "notexec", "absolute", "invalid", "notread", "stale", "hardlinked":
		return true
	}
	return false
}
