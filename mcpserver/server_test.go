package mcpserver_test

//lint:file-ignore SA1019 the tests drive the (deprecated, still used) roots feature.

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/mcpserver"
	"github.com/landjail/landjail/tools"
)

// envServeDir makes the test binary an MCP server over stdio for the
// workspace it names (the stdio end-to-end test re-executes itself).
const envServeDir = "MCPSERVER_TEST_SERVE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envServeDir); dir != "" {
		os.Exit(serveStdio(dir))
	}
	kerneltest.Main(m)
}

// serveStdio is the server side of TestStdio.
func serveStdio(dir string) int {
	ws, err := jail.New(dir, jail.WithReadTracker(jail.NewReadTracker()))
	if err != nil {
		return 2
	}
	rs, err := landlock.Compile(ws, landlock.Options{System: true})
	if err != nil {
		return 2
	}
	if err := mcpserver.Serve(context.Background(), &tools.Toolkit{WS: ws, Ruleset: rs}, nil); err != nil {
		return 1
	}
	return 0
}

// fixture is a workspace $BASE/ws with a secret in $BASE/out.
type fixture struct {
	root, out string
	k         *tools.Toolkit
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &fixture{root: filepath.Join(base, "ws"), out: filepath.Join(base, "out")}
	for _, d := range []string{f.root + "/a", f.root + "/b", f.out} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(f.out+"/secret", "SECRET\n")
	write(f.root+"/a/f.txt", "alpha\nbeta\n")
	write(f.root+"/b/g.txt", "gamma\n")
	write(f.root+"/.env", "KEY=1\n")
	require.NoError(t, os.Symlink(f.out, f.root+"/outlink"))
	require.NoError(t, os.Symlink(f.out+"/secret", f.root+"/a/sec"))
	tr := jail.NewReadTracker()
	ws, err := jail.New(f.root, jail.WithReadTracker(tr), jail.WithDeny(".env"))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true})
	require.NoError(t, err)
	t.Cleanup(func() { rs.Close() })
	f.k = &tools.Toolkit{WS: ws, Ruleset: rs, Tracker: tr}
	return f
}

// connect serves k in memory and returns a connected client session.
func connect(t *testing.T, k *tools.Toolkit, copts *mcp.ClientOptions, roots ...*mcp.Root) (*mcp.ClientSession, *mcp.Client) {
	return connectVersion(t, k, copts, nil, roots...)
}

func connectVersion(t *testing.T, k *tools.Toolkit, copts *mcp.ClientOptions, versions []string, roots ...*mcp.Root) (*mcp.ClientSession, *mcp.Client) {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(k, &mcpserver.Options{ProtocolVersions: versions}).Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts)
	c.AddRoots(roots...)
	cs, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, c
}

// call calls a tool and returns its text and IsError; a protocol error
// fails the test (refusals must be tool results).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s(%v): protocol error", name, args)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestListTools(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		schema, ok := tool.InputSchema.(map[string]any)
		require.True(t, ok, "%s: schema %T", tool.Name, tool.InputSchema)
		assert.Equal(t, "object", schema["type"])
		assert.NotEmpty(t, tool.Description)
	}
	assert.ElementsMatch(t, []string{"read_file", "write_file", "edit_file", "list_directory", "glob", "grep", "bash", "patch"}, names)
	assert.Contains(t, cs.InitializeResult().Instructions, "workspace")
}

func TestReadWriteEdit(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil)

	text, isErr := call(t, cs, "write_file", map[string]any{"path": "new/n.txt", "content": "one\ntwo\n"})
	require.False(t, isErr, text)
	assert.Equal(t, "Created new/n.txt: 2 lines, 8 bytes", text)

	text, isErr = call(t, cs, "edit_file", map[string]any{"path": "a/f.txt", "old_string": "beta", "new_string": "BETA"})
	assert.True(t, isErr)
	assert.Contains(t, text, "has not been read in this session; call read_file on it first")

	text, isErr = call(t, cs, "read_file", map[string]any{"path": "a/f.txt"})
	require.False(t, isErr, text)
	assert.Equal(t, "     1\talpha\n     2\tbeta\n[a/f.txt: lines 1-2 of 2, 11 bytes]", text)

	text, isErr = call(t, cs, "edit_file", map[string]any{"path": "a/f.txt", "old_string": "beta", "new_string": "BETA"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "Replaced 1 occurrence in a/f.txt")
	b, err := os.ReadFile(f.root + "/a/f.txt")
	require.NoError(t, err)
	assert.Equal(t, "alpha\nBETA\n", string(b))

	text, isErr = call(t, cs, "grep", map[string]any{"pattern": "gam+a"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "b/g.txt:1:gamma")
	text, isErr = call(t, cs, "glob", map[string]any{"pattern": "**/*.txt"})
	require.False(t, isErr, text)
	assert.Equal(t, "a/f.txt\nb/g.txt\nnew/n.txt\n[glob \"**/*.txt\": 3 matches]", text)
	text, isErr = call(t, cs, "list_directory", nil)
	require.False(t, isErr, text)
	assert.NotContains(t, text, ".env")

	text, isErr = call(t, cs, "read_file", map[string]any{"path": "a/f.txt", "bogus": true})
	assert.True(t, isErr)
	assert.Contains(t, text, "invalid arguments")
}

// TestEscapes: each refused with a structured tool error (IsError), never
// a protocol error, and nothing outside read or changed. Some are caught
// by the argument guard (CheckToolArgs), the others by the Workspace.
func TestEscapes(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "../out/secret"}, `tool argument /path = "../out/secret" refused`},
		{"read_file", map[string]any{"path": f.out + "/secret"}, "outside the workspace"},
		{"read_file", map[string]any{"path": "/etc/shadow"}, "outside the workspace"},
		{"read_file", map[string]any{"path": "file://" + f.out + "/secret"}, "outside the workspace"},
		{"read_file", map[string]any{"path": "a/sec"}, "outside the workspace"},
		{"read_file", map[string]any{"path": "outlink/secret"}, "outside the workspace"},
		{"read_file", map[string]any{"path": "a/../../out/secret"}, "outside the workspace"},
		{"read_file", map[string]any{"path": ".env"}, "denied"},
		{"read_file", map[string]any{"path": "~/.ssh/id_rsa"}, "outside the workspace"},
		{"write_file", map[string]any{"path": "../out/pwn", "content": "x"}, "outside the workspace"},
		{"write_file", map[string]any{"path": "outlink/pwn", "content": "x"}, "outside the workspace"},
		{"edit_file", map[string]any{"path": "a/sec", "old_string": "SECRET", "new_string": "x"}, "outside the workspace"},
		{"list_directory", map[string]any{"path": "outlink"}, "outside the workspace"},
		{"list_directory", map[string]any{"path": "/"}, "outside the workspace"},
		{"glob", map[string]any{"pattern": "*", "path": "/etc"}, "outside the workspace"},
		{"glob", map[string]any{"pattern": "../out/*"}, "invalid arguments"},
		{"grep", map[string]any{"pattern": "SECRET", "path": "outlink"}, "outside the workspace"},
		{"grep", map[string]any{"pattern": "SECRET", "path": "/etc"}, "outside the workspace"},
	} {
		text, isErr := call(t, cs, c.tool, c.args)
		assert.True(t, isErr, "%s(%v) was not refused: %s", c.tool, c.args, text)
		assert.Contains(t, text, c.want, "%s(%v)", c.tool, c.args)
		assert.NotContains(t, text, "SECRET\n")
	}
	// grep over the workspace does not follow links out.
	text, isErr := call(t, cs, "grep", map[string]any{"pattern": "SECRET"})
	assert.False(t, isErr)
	assert.Contains(t, text, "0 matches")
	ents, err := os.ReadDir(f.out)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "something was created outside")
}

// TestBashConfined: the shell tool is confined like landjail run.
func TestBashConfined(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil)
	for _, cmd := range []string{"cat /etc/shadow", "cat ../out/secret", "cat outlink/secret", "echo pwned > " + f.out + "/pwn", "touch /tmp/landjail-mcp-pwn-$$"} {
		text, isErr := call(t, cs, "bash", map[string]any{"command": cmd})
		assert.False(t, isErr, "a failing command is a result, not a tool error: %s", text)
		assert.Contains(t, text, "Permission denied", cmd)
		assert.NotContains(t, text, "[exit code 0]", cmd)
		assert.NotContains(t, text, "SECRET", cmd)
	}
	assert.NoFileExists(t, f.out+"/pwn")
	// (The policy denies .env, so Landlock carves the root: new files go
	// in subdirectories; see landlock's carve-outs.)
	text, isErr := call(t, cs, "bash", map[string]any{"command": "echo hi > b/inside.txt && cat b/inside.txt a/f.txt && pwd"})
	require.False(t, isErr, text)
	assert.Equal(t, "hi\nalpha\nbeta\n"+f.root+"\n[exit code 0]", text)
}

// TestBashTimeoutIsError: a command landjail killed at its timeout is a
// tool error (isError) whose text says so; a command that fails on its
// own (exit 3) is a result.
func TestBashTimeoutIsError(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil)
	text, isErr := call(t, cs, "bash", map[string]any{"command": "echo started; sleep 30", "timeout": 1})
	assert.True(t, isErr, "a killed command was reported as a result: %s", text)
	assert.Contains(t, text, "started")
	assert.Contains(t, text, "[timed out after")
	text, isErr = call(t, cs, "bash", map[string]any{"command": "echo failing; exit 3"})
	assert.False(t, isErr, "a command's own failure was reported as a tool error: %s", text)
	assert.Equal(t, "failing\n[exit code 3]", text)
}

// TestRootsNarrow runs with the newest protocol (roots asked for with an
// input request, SEP-2322) and with 2025-11-25 (the SDK sends roots/list).
func TestRootsNarrow(t *testing.T) {
	for _, v := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol="+v, func(t *testing.T) {
			var versions []string
			if v != "" {
				versions = []string{v}
			}
			testRootsNarrow(t, versions)
		})
	}
}

func testRootsNarrow(t *testing.T, versions []string) {
	f := newFixture(t)
	cs, c := connectVersion(t, f.k, nil, versions,
		&mcp.Root{URI: "file://" + f.root + "/a"},
		&mcp.Root{URI: "file://" + f.out},       // outside the policy: ignored
		&mcp.Root{URI: "https://example.com/x"}, // not a file: ignored
	)
	if len(versions) > 0 {
		require.Equal(t, versions[0], cs.InitializeResult().ProtocolVersion)
	}
	text, isErr := call(t, cs, "read_file", map[string]any{"path": "a/f.txt"})
	assert.False(t, isErr, text)
	text, isErr = call(t, cs, "read_file", map[string]any{"path": "b/g.txt"})
	assert.True(t, isErr)
	assert.Contains(t, text, "outside the client's roots")
	// A root outside the policy widens nothing.
	text, isErr = call(t, cs, "read_file", map[string]any{"path": f.out + "/secret"})
	assert.True(t, isErr)
	assert.Contains(t, text, "outside the workspace")
	text, isErr = call(t, cs, "list_directory", nil)
	require.False(t, isErr, text)
	assert.Contains(t, text, "f f.txt")
	assert.NotContains(t, text, "a/\n")

	// The client changes its roots: the server lists them again.
	c.AddRoots(&mcp.Root{URI: "file://" + f.root + "/b"})
	require.Eventually(t, func() bool {
		_, isErr := call(t, cs, "read_file", map[string]any{"path": "b/g.txt"})
		return !isErr
	}, 5*time.Second, 10*time.Millisecond)
	c.RemoveRoots("file://"+f.root+"/a", "file://"+f.root+"/b")
	require.Eventually(t, func() bool {
		text, _ := call(t, cs, "read_file", map[string]any{"path": "a/f.txt"})
		return strings.Contains(text, "no path is allowed")
	}, 5*time.Second, 10*time.Millisecond, "only the outside root is left: nothing is allowed")
}

func TestRootsAllOutside(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.k, nil, &mcp.Root{URI: "file://" + f.out})
	text, isErr := call(t, cs, "read_file", map[string]any{"path": "a/f.txt"})
	assert.True(t, isErr)
	assert.Contains(t, text, "no path is allowed")
	text, isErr = call(t, cs, "read_file", map[string]any{"path": f.out + "/secret"})
	assert.True(t, isErr)
	assert.NotContains(t, text, "SECRET")
}

func TestNoRootsCapability(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.k, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	text, isErr := call(t, cs, "read_file", map[string]any{"path": "b/g.txt"})
	assert.False(t, isErr, text)
}

// TestStdio runs the server as a separate process (this test binary
// re-executed) and talks to it over stdin/stdout with the SDK's
// CommandTransport.
func TestStdio(t *testing.T) {
	f := newFixture(t)
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeDir+"="+f.root)
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, res.Tools, 8)
	text, isErr := call(t, cs, "read_file", map[string]any{"path": "a/f.txt"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "     1\talpha")
	text, isErr = call(t, cs, "read_file", map[string]any{"path": "../out/secret"})
	assert.True(t, isErr)
	assert.Contains(t, text, "outside the workspace")
	for _, tool := range res.Tools {
		if tool.Name == "read_file" {
			raw, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			assert.Contains(t, string(raw), `"format":"path"`)
		}
	}
}
