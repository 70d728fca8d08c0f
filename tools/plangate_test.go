package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/tools"
)

// TestReplanGate: with Toolkit.Replan, a file tool's call plans the
// policy again once after each bash call (not before every call: the
// cost stays one plan per bash call), and while the plan fails every
// file tool refuses with its error (ErrPolicyRefused wrapping it), until
// a plan succeeds (red team round 26, R26e-5: the file tools answered
// while bash's planning refused the policy). Control: before any bash
// call, and once the plan succeeds again, read_file answers without
// planning.
func TestReplanGate(t *testing.T) {
	e := newEnv(t, []string{"f=hello\n"})
	withRuleset(t, e)
	errLink := errors.New("planted: .env is a symbolic link through /proc/self")
	var plans atomic.Int32
	var fail atomic.Bool
	e.k.Replan = func() error {
		plans.Add(1)
		if fail.Load() {
			return errLink
		}
		return nil
	}
	ctx := context.Background()
	call := func(name, args string) (tools.Result, error) {
		return e.k.Call(ctx, name, json.RawMessage(args))
	}
	read := func() error {
		_, err := call(tools.ToolReadFile, `{"path":"f"}`)
		return err
	}
	bash := func() {
		r, err := call(tools.ToolBash, `{"command":"true"}`)
		require.NoError(t, err)
		require.Contains(t, r.String(), "[exit code 0]")
	}

	require.NoError(t, read(), "control: no bash call yet")
	require.NoError(t, read())
	assert.Zero(t, plans.Load(), "no bash call ran: the start's plan holds")

	bash()
	require.NoError(t, read())
	require.NoError(t, read())
	assert.EqualValues(t, 1, plans.Load(), "one plan after the bash call, by the first file tool call")

	fail.Store(true)
	bash()
	for _, c := range [][2]string{
		{tools.ToolReadFile, `{"path":"f"}`},
		{tools.ToolGrep, `{"pattern":"hello"}`},
		{tools.ToolGlob, `{"pattern":"*"}`},
		{tools.ToolListDirectory, `{}`},
		{tools.ToolWriteFile, `{"path":"g","content":"x"}`},
	} {
		_, err := call(c[0], c[1])
		assertToolErr(t, err, tools.ErrPolicyRefused)
		assert.ErrorIs(t, err, errLink, c[0])
		assert.Contains(t, err.Error(), "symbolic link through /proc/self", c[0])
	}
	assert.EqualValues(t, 6, plans.Load(), "planned again at each call while it fails")

	fail.Store(false)
	require.NoError(t, read(), "a plan that succeeds lifts the refusal")
	require.NoError(t, read())
	assert.EqualValues(t, 7, plans.Load())
}

// TestReplanGateLeftovers: while a process a bash call left behind lives
// (Toolkit.Leftovers), every file tool call plans again, and so does the
// first one after it is gone (it may have planted a link after the last
// plan: red team round 27, R27d-2). Control: without leftovers, one plan
// per bash call.
func TestReplanGateLeftovers(t *testing.T) {
	e := newEnv(t, []string{"f=hello\n"})
	withRuleset(t, e)
	var plans atomic.Int32
	var left atomic.Bool
	e.k.Replan = func() error { plans.Add(1); return nil }
	e.k.Leftovers = func() (bool, error) { return left.Load(), nil }
	ctx := context.Background()
	read := func() {
		_, err := e.k.Call(ctx, tools.ToolReadFile, json.RawMessage(`{"path":"f"}`))
		require.NoError(t, err)
	}
	bash := func() {
		_, err := e.k.Call(ctx, tools.ToolBash, json.RawMessage(`{"command":"true"}`))
		require.NoError(t, err)
	}
	bash()
	read()
	read()
	assert.EqualValues(t, 1, plans.Load(), "control: one plan after the bash call")

	left.Store(true) // a setsid'd process of the next call lives on
	bash()
	read()
	read()
	read()
	assert.EqualValues(t, 4, plans.Load(), "a plan at each call while it lives")
	left.Store(false)
	read()
	assert.EqualValues(t, 5, plans.Load(), "and at the first call after it is gone")
	read()
	read()
	assert.EqualValues(t, 5, plans.Load(), "then the plan holds")
}

// TestAfterWrite: AfterWrite runs after each file tool call that changes
// the workspace (write_file, edit_file, patch) and its lines follow the
// result; it does not run for the tools that only read (landjail-mcp
// sweeps there: red team round 27, R27e-1, a bare repository's layout
// written by the file tools in a new directory stayed until the next
// bash call). Control: read_file, grep, list_directory do not call it.
func TestAfterWrite(t *testing.T) {
	e := newEnv(t, []string{"f=hello\n"})
	var calls atomic.Int32
	e.k.AfterWrite = func() []string { calls.Add(1); return []string{"quarantined src/HEAD"} }
	ctx := context.Background()
	for _, c := range [][2]string{
		{tools.ToolReadFile, `{"path":"f"}`},
		{tools.ToolGrep, `{"pattern":"hello"}`},
		{tools.ToolListDirectory, `{}`},
	} {
		_, err := e.k.Call(ctx, c[0], json.RawMessage(c[1]))
		require.NoError(t, err, c[0])
	}
	assert.Zero(t, calls.Load(), "control: the reading tools")
	r, err := e.k.Call(ctx, tools.ToolWriteFile, json.RawMessage(`{"path":"src/HEAD","content":"ref: refs/heads/main\n"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 1, calls.Load())
	assert.Contains(t, r.String(), "quarantined src/HEAD")
	_, err = e.k.Call(ctx, tools.ToolReadFile, json.RawMessage(`{"path":"src/HEAD"}`))
	require.NoError(t, err)
	_, err = e.k.Call(ctx, tools.ToolEditFile, json.RawMessage(`{"path":"f","old_string":"hello","new_string":"bye"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 2, calls.Load())
}
