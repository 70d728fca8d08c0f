package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/tools"
)

// TestHelpListsTools: --help names every tool the server serves (patch
// was missing from it), and no flag's line states two defaults (the
// usage's own "(default 2m ...)" and urfave/cli's "(default: 0s)").
func TestHelpListsTools(t *testing.T) {
	var out, errb bytes.Buffer
	require.NoError(t, newApp(strings.NewReader(""), &out, &errb).Run(context.Background(), []string{"landjail-mcp", "--help"}))
	text := out.String()
	defs := (*tools.Toolkit)(nil).Definitions() // a fixed list: no toolkit needed
	require.NotEmpty(t, defs)
	list, _, ok := strings.Cut(text, " over the Model Context Protocol")
	require.True(t, ok, "the help's first sentence lists the tools: %s", text)
	for _, d := range defs {
		assert.Regexp(t, `[ (\n]`+d.Name+`[,)]`, list, "the help's tool list")
	}
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, strings.Count(line, "(default"), 1, "two defaults in %q", line)
	}
}

// TestUnknownOption: a flag landjail-mcp does not know is one line naming
// it, and nothing on stdout, the client's MCP channel (checked red: the
// whole help went to stdout after "Incorrect Usage").
func TestUnknownOption(t *testing.T) {
	var out, errb bytes.Buffer
	err := newApp(strings.NewReader(""), &out, &errb).Run(context.Background(), []string{"landjail-mcp", "--bogus"})
	require.Error(t, err)
	assert.Equal(t, "unknown option --bogus (see landjail-mcp --help)", err.Error())
	assert.Empty(t, out.String())
	assert.NotContains(t, errb.String(), "Incorrect Usage")
}

// TestNofileFloor: --nofile below 128 is refused at start, naming the
// floor: under it every bash call failed with EMFILE in landjail's own
// spawn (red team round 25, R25a-2). Control: 128 is not refused for
// that (the session ends with stdin).
func TestNofileFloor(t *testing.T) {
	ws := t.TempDir()
	var out, errb bytes.Buffer
	err := newApp(strings.NewReader(""), &out, &errb).Run(context.Background(), []string{"landjail-mcp", "--workspace", ws, "--nofile", "64"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs at least 128")
	err = newApp(strings.NewReader(""), &out, &errb).Run(context.Background(), []string{"landjail-mcp", "--workspace", ws, "--nofile", "128"})
	if err != nil {
		assert.NotContains(t, err.Error(), "needs at least", "control")
	}
}
