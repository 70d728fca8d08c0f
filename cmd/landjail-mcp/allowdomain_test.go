package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// TestBashAllowDomain: landjail-mcp --allow-domain localhost:PORT; two
// bash calls in one session, each with a proxy of its own: curl through
// the proxy reaches the host's local server, a name not on the list is
// refused (the server sees nothing) and the refusal is in that call's
// result text, not in the next call's; a direct connection around the
// proxy fails. Per matrix mode: airtight (native, openat2=ENOSYS: each
// call in its own network namespace) and advisory (ns=EPERM: Landlock
// connect to the proxy port only) behave alike here; without Landlock
// (landlock=ENOSYS, all=EPERM) the seccomp layer refuses every IP socket,
// so the proxy is unreachable: nothing reaches the server, nothing is
// refused, and the start-up warning says so.
func TestBashAllowDomain(t *testing.T) {
	if _, err := osexec.LookPath("curl"); err != nil {
		kerneltest.Missing(t, "curl is not installed (.ci/run installs it)")
	}
	_, llBlocked := kerneltest.Blocked(kerneltest.FeatureLandlock)
	unreachable := llBlocked || landlock.ABI() < 4
	if _, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); !nsBlocked && !unreachable {
		kerneltest.RequireFeature(t, "mount and network namespaces", nsview.Probe())
	}
	bin := filepath.Join(t.TempDir(), "landjail-netproxy")
	b := osexec.Command("go", "build", "-o", bin, "../landjail-netproxy")
	out, err := b.CombinedOutput()
	require.NoError(t, err, "%s", out)
	old := cliopts.NetproxyPath
	cliopts.NetproxyPath = bin
	defer func() { cliopts.NetproxyPath = old }()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // bash's private HOME goes there

	var hits, leaked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			leaked.Add(1)
		}
		hits.Add(1)
		fmt.Fprint(w, "hello through the proxy")
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)

	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	var stderr strings.Builder
	app := newApp(sr, sw, &stderr)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(context.Background(), []string{"landjail-mcp", "--workspace", ws, "--timeout", "30s", "--allow-domain", "localhost:" + port})
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	require.NoError(t, err)
	bash := func(script string) string {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "s.sh"), []byte(script), 0o644))
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "bash s.sh"}})
		require.NoError(t, err)
		text := r.Content[0].(*mcp.TextContent).Text
		require.False(t, r.IsError, text)
		return text
	}
	first := bash("curl -sS -m 10 http://localhost:" + port + "/ok; echo\n" +
		"curl -sS -m 10 -o /dev/null -w 'refused=%{http_code}\\n' http://notlisted.test:" + port + "/leak\n" +
		"curl -sS -m 5 --noproxy '*' http://127.0.0.1:" + port + "/direct || echo direct-failed\n")
	second := bash("curl -sS -m 10 http://localhost:" + port + "/ok; echo\n")
	require.NoError(t, cs.Close())
	cw.Close()
	require.NoError(t, <-done)

	assert.Contains(t, first, "direct-failed")
	assert.Zero(t, leaked.Load(), "the server saw a refused or direct request")
	refusal := "[landjail: proxy refused notlisted.test:" + port + " 1 time (not on the allowlist)]"
	if unreachable {
		assert.Zero(t, hits.Load())
		assert.NotContains(t, first, "hello through the proxy")
		assert.Contains(t, stderr.String(), "allowlist unusable, no network at all")
		return
	}
	assert.Contains(t, first, "hello through the proxy", first)
	assert.Contains(t, first, "refused=403")
	assert.Contains(t, first, refusal)
	assert.Contains(t, second, "hello through the proxy", second)
	assert.NotContains(t, second, "proxy refused", "a refusal of the first call in the second's result")
	assert.EqualValues(t, 2, hits.Load())
}
