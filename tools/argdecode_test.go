package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/tools"
)

// TestCallArgumentErrors: a tool's arguments that do not decode are
// refused in the schema's terms, never Go's (the trial's model read
// "json: cannot unmarshal number into Go struct field
// ReadFileArgs.path of type string"). Checked red against the plain
// json.Decoder message.
func TestCallArgumentErrors(t *testing.T) {
	e := newEnv(t, []string{"a.txt=x\n"})
	for _, tc := range []struct{ tool, args, want string }{
		{tools.ToolReadFile, `{"path": 1}`, `read_file: invalid arguments: argument "path" must be a string, got a number`},
		{tools.ToolReadFile, `{"path": ["a"]}`, `argument "path" must be a string, got an array`},
		{tools.ToolReadFile, `{"path": "a.txt", "offset": "3"}`, `argument "offset" must be an integer, got a string`},
		{tools.ToolReadFile, `{"path": "a.txt", "offset": 1.5}`, `argument "offset" must be an integer, got a number (1.5)`},
		{tools.ToolGrep, `{"pattern": "x", "ignore_case": "yes"}`, `argument "ignore_case" must be true or false, got a string`},
		{tools.ToolReadFile, `[1]`, `the arguments must be an object, got an array`},
		{tools.ToolReadFile, `{"pth": "a.txt"}`, `unknown argument "pth"`},
		{tools.ToolReadFile, `{"path": "a.txt"} {}`, `trailing data after the arguments object`},
	} {
		_, err := e.k.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
		require.Error(t, err, tc.args)
		assert.ErrorIs(t, err, tools.ErrInvalidArgs, tc.args)
		assert.Contains(t, err.Error(), tc.want, tc.args)
		assert.NotContains(t, err.Error(), "Go struct", tc.args)
		assert.NotContains(t, err.Error(), "json:", tc.args)
	}
}
