package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/mcpserver"
)

// rawClient speaks newline-delimited JSON-RPC to a server by hand, so
// that it can send what no SDK client would.
type rawClient struct {
	t   *testing.T
	in  io.Writer
	out chan map[string]any
}

func newRawClient(t *testing.T, in io.Writer, out io.Reader) *rawClient {
	c := &rawClient{t: t, in: in, out: make(chan map[string]any, 16)}
	go func() {
		defer close(c.out)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(line, &m) != nil {
				m = map[string]any{"unparsable": string(line)}
			}
			c.out <- m
		}
	}()
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

// recv returns the next message, or nil when the server closed its
// output or said nothing for 10 seconds.
func (c *rawClient) recv() map[string]any {
	select {
	case m := <-c.out:
		return m
	case <-time.After(10 * time.Second):
		return nil
	}
}

// call sends a request and returns its response, skipping notifications.
func (c *rawClient) call(id int, method, params string) map[string]any {
	c.t.Helper()
	if params == "" {
		params = "{}"
	}
	c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + `}`)
	for {
		m := c.recv()
		if m == nil || m["id"] != nil {
			return m
		}
	}
}

const initParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`

// garbageLines are lines the SDK's stdio transport ends the session on,
// and a few valid messages that must not. code is the JSON-RPC error
// expected back (0: no answer), id its id (nil: null).
var garbageLines = []struct {
	name string
	line string
	code float64
	id   any
}{
	{"not-json", `hello, server`, -32700, nil},
	{"truncated-object", `{"jsonrpc":"2.0","id":5,"method":"ping"`, -32700, nil},
	{"two-values", `{} {}`, -32700, nil},
	{"not-utf8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"p\xffing\"}", -32700, nil},
	{"nested-100k-arrays", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), -32700, nil},
	{"nested-100k-in-params", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}}`, -32700, nil},
	{"over-long-line", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"` + strings.Repeat("a", 20<<20) + `"}}`, -32700, nil},
	{"number", `42`, -32600, nil},
	{"object-not-jsonrpc", `{"foo":1}`, -32600, nil},
	{"bad-method-type", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600, float64(7)},
	{"empty-batch", `[]`, -32600, nil},
	{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, nil},
	// Valid messages the server has no use for: no answer, no harm.
	{"response-unknown-id", `{"jsonrpc":"2.0","id":99,"result":{}}`, 0, nil},
	{"error-unknown-id", `{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}}`, 0, nil},
	{"notification-unknown", `{"jsonrpc":"2.0","method":"notifications/nonsense","params":[1,2]}`, 0, nil},
	{"blank", `   `, 0, nil},
	{"unknown-method", `{"jsonrpc":"2.0","id":97,"method":"no/such"}`, -32601, float64(97)},
}

// checkSurvives sends every garbage line to a server, each followed by
// a ping that must still be answered, then lists the tools.
func checkSurvives(t *testing.T, c *rawClient) {
	resp := c.call(1, "initialize", initParams)
	require.NotNil(t, resp, "no answer to initialize")
	require.Contains(t, resp, "result")
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, g := range garbageLines {
		t.Run(g.name, func(t *testing.T) {
			c.t = t
			c.send(g.line)
			if g.code == 0 {
				pong := c.call(200+i, "ping", "")
				require.NotNil(t, pong, "the session ended after the line")
				assert.Contains(t, pong, "result")
				return
			}
			m := c.recv()
			require.NotNil(t, m, "no answer to the garbage line: the session ended")
			require.Contains(t, m, "error", "%v", m)
			assert.Equal(t, g.code, m["error"].(map[string]any)["code"], "%v", m)
			assert.Equal(t, g.id, m["id"])
			assert.Contains(t, m, "id", "id null, not absent")
			pong := c.call(100+i, "ping", "")
			require.NotNil(t, pong, "the session ended after the garbage line")
			assert.Equal(t, float64(100+i), pong["id"])
			assert.Contains(t, pong, "result")
		})
	}
	c.t = t
	list := c.call(2, "tools/list", "")
	require.NotNil(t, list)
	assert.Len(t, list["result"].(map[string]any)["tools"], 8)
}

// TestGuardedTransportStdio: over the real stdio of a server process
// (this test binary re-executed as mcpserver.Serve), no line ends the
// session: each is answered with a parse or invalid-request error, and
// initialize, ping and tools/list keep working.
func TestGuardedTransportStdio(t *testing.T) {
	f := newFixture(t)
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeDir+"="+f.root)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	checkSurvives(t, newRawClient(t, stdin, stdout))
	require.NoError(t, stdin.Close())
	assert.NoError(t, cmd.Wait(), "the server exits 0 at the end of stdin")
}

// TestGuardedTransportControl: the SDK's own transport (what Serve used)
// ends the session at the first line that is not JSON.
func TestGuardedTransportControl(t *testing.T) {
	f := newFixture(t)
	for _, guarded := range []bool{false, true} {
		t.Run(map[bool]string{false: "sdk-iotransport", true: "guarded"}[guarded], func(t *testing.T) {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			var tr mcp.Transport = &mcp.IOTransport{Reader: sr, Writer: sw}
			if guarded {
				tr = &mcpserver.GuardedTransport{Reader: sr, Writer: sw}
			}
			done := make(chan error, 1)
			go func() { done <- mcpserver.New(f.k, nil).Run(context.Background(), tr); sw.Close() }()
			c := newRawClient(t, cw, cr)
			require.Contains(t, c.call(1, "initialize", initParams), "result")
			c.send("hello, server")
			if guarded {
				assert.Contains(t, c.recv(), "error")
				assert.Contains(t, c.call(2, "ping", ""), "result")
				cw.Close()
				assert.NoError(t, <-done)
				return
			}
			select {
			case err := <-done:
				assert.Error(t, err, "the SDK transport ends the session")
			case <-time.After(10 * time.Second):
				t.Fatal("the SDK transport survived garbage: the control no longer shows the bug")
			}
		})
	}
}

// TestGuardedTransportLimits: a line just under the cap passes, and
// MaxLineBytes and MaxDepth are honoured.
func TestGuardedTransportLimits(t *testing.T) {
	f := newFixture(t)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	tr := &mcpserver.GuardedTransport{Reader: sr, Writer: sw, MaxLineBytes: 4096, MaxDepth: 8}
	go func() { _ = mcpserver.New(f.k, nil).Run(context.Background(), tr); sw.Close() }()
	c := newRawClient(t, cw, cr)
	require.Contains(t, c.call(1, "initialize", initParams), "result")
	ping := func(pad int) string {
		return `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("a", pad) + `"}}}`
	}
	base := len(ping(0))
	assert.Contains(t, c.call(3, "ping", `{"_meta":{"x":"`+strings.Repeat("a", 4096-base)+`"}}`), "result", "a line of exactly 4096 bytes passes")
	c.send(ping(4097 - base))
	m := c.recv()
	require.NotNil(t, m)
	assert.Contains(t, m["error"].(map[string]any)["message"], "longer than 4096 bytes")
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"a":[[[[[[[1]]]]]]]}}}`)
	m = c.recv()
	require.NotNil(t, m)
	assert.Contains(t, m["error"].(map[string]any)["message"], "nested deeper than 8")
	assert.Contains(t, c.call(5, "ping", `{"_meta":{"a":[[[[[1]]]]]}}`), "result", "depth 8 passes")
	cw.Close()
}
