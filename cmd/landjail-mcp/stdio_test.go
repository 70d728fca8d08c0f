package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/tools"
)

// buildBinary builds landjail-mcp into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin, err = osexec.LookPath("go")
		require.NoError(t, err, "the go command builds the binary under test")
	}
	bin := filepath.Join(t.TempDir(), "landjail-mcp")
	out, err := osexec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestBinaryStdioSurvivesGarbage: a malformed line used to end the server. The
// built landjail-mcp, over its real stdin and stdout: a line that is not
// JSON, one nested 100k deep, and one longer than 16 MiB are each
// answered with a JSON-RPC parse error (-32700, id null), and the session
// goes on (initialize, tools/list, a read_file refused by
// --max-file-size). Before, the first such line ended the process.
func TestBinaryStdioSurvivesGarbage(t *testing.T) {
	bin := buildBinary(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("line\n", 1000)), 0o644))
	cmd := osexec.Command(bin, "--workspace", ws, "--max-file-size", "1KiB")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	lines := make(chan map[string]any, 8)
	go func() {
		defer close(lines)
		br := bufio.NewReader(stdout)
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(l, &m) != nil {
				m = map[string]any{"unparsable": string(l)}
			}
			lines <- m
		}
	}()
	send := func(s string) {
		_, err := io.WriteString(stdin, s+"\n")
		require.NoError(t, err)
	}
	recv := func() map[string]any {
		select {
		case m := <-lines:
			return m
		case <-time.After(20 * time.Second):
			return nil
		}
	}
	for _, garbage := range []string{
		"not json at all",
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		`{"x":"` + strings.Repeat("a", 17<<20) + `"}`,
	} {
		send(garbage)
		m := recv()
		require.NotNil(t, m, "no answer to a garbage line; stderr: %s", stderr.String())
		require.Contains(t, m, "error", "%v", m)
		assert.Equal(t, float64(-32700), m["error"].(map[string]any)["code"])
		assert.Nil(t, m["id"])
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	m := recv()
	require.NotNil(t, m, "the session ended; stderr: %s", stderr.String())
	require.Contains(t, m, "result", "%v", m)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m = recv()
	require.NotNil(t, m)
	assert.Len(t, m["result"].(map[string]any)["tools"], len((&tools.Toolkit{}).Definitions()))
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.txt"}}}`)
	m = recv()
	require.NotNil(t, m)
	res, _ := json.Marshal(m["result"])
	assert.Contains(t, string(res), `"isError":true`)
	assert.Contains(t, string(res), "more than the cap of 1024 bytes")
	assert.Contains(t, string(res), "--max-file-size")
	require.NoError(t, stdin.Close())
	assert.NoError(t, cmd.Wait(), "exits 0 at the end of stdin; stderr: %s", stderr.String())
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1", 1}, {"4096", 4096}, {"1K", 1 << 10}, {"1KiB", 1 << 10}, {"10MiB", 10 << 20},
		{"10m", 10 << 20}, {"2G", 2 << 30}, {"3gib", 3 << 30}, {"5B", 5},
		{"", 0}, {"0", 0}, {"-1", 0}, {"1T", 0}, {"MiB", 0}, {"1.5M", 0}, {"1 MiB", 0},
		{"9999999999G", 0},
	} {
		got, err := parseSize(tc.in)
		if tc.want == 0 {
			assert.Error(t, err, "%q", tc.in)
			continue
		}
		if assert.NoError(t, err, "%q", tc.in) {
			assert.Equal(t, tc.want, got, "%q", tc.in)
		}
	}
}
