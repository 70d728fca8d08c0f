package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestHandlerRefusesUncheckableSchema: a tool whose schema the guard
// cannot follow is refused at every call, before the tool runs (here the
// tool would have listed the workspace).
func TestHandlerRefusesUncheckableSchema(t *testing.T) {
	ws, err := jail.New(t.TempDir())
	require.NoError(t, err)
	defer ws.Close()
	s := &server{k: &tools.Toolkit{WS: ws}, scoped: map[*mcp.ServerSession]*tools.Toolkit{}, opts: Options{IgnoreRoots: true}}
	d := tools.Definition{
		Name:        tools.ToolListDirectory,
		InputSchema: json.RawMessage(`{"properties":{"path":{"$ref":"#/$defs/missing"}}}`),
		Access:      jail.Read,
	}
	schema, schemaErr := CompileToolSchema(d.InputSchema)
	require.ErrorIs(t, schemaErr, ErrInvalidSchema)
	res, err := s.handler(d, schema, schemaErr)(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: d.Name, Arguments: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "list_directory: refused: tool input schema cannot be checked")

	good, err := CompileToolSchema(json.RawMessage(`{"properties":{"path":{"type":"string"}}}`))
	require.NoError(t, err)
	res, err = s.handler(d, good, nil)(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: d.Name, Arguments: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	assert.False(t, res.IsError, "control: with a schema it can follow, the tool runs")
}
