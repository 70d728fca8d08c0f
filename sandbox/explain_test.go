package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/tools"
)

// TestServerBashExplains: with explain on, each bash call's result (its
// text and its structured "network" lines) names what was refused in that
// call, with the flag: a UDP socket (seccomp: --allow-domain HOST), a read
// outside every root (Landlock, through the broker: --ro PATH), and, with
// the namespace view, a write outside the writable roots (EROFS: --rw
// DIR); the next call lists only its own. Control: the same call on a
// server without explain fails the same way and lists nothing.
func TestServerBashExplains(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := os.MkdirTemp("/var/tmp", "landjail-explain-mcp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o644))
	cmd := "cat " + secret + "; echo x > /etc/landjail-explain-mcp; /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'; exit 1"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	plain := server(t, &cliopts.Options{Workspace: ws})
	r, err := plain.Bash(ctx, tools.BashArgs{Command: cmd})
	require.NoError(t, err)
	assert.Equal(t, 1, r.ExitCode)
	assert.NotContains(t, r.Output, "s3cret")
	assert.Empty(t, r.Network, "control: no explanation without explain")

	k := server(t, &cliopts.Options{Workspace: ws, Explain: true})
	r, err = k.Bash(ctx, tools.BashArgs{Command: cmd})
	require.NoError(t, err)
	assert.Equal(t, 1, r.ExitCode)
	assert.NotContains(t, r.Output, "s3cret")
	text := r.String()
	lines := strings.Join(r.Network, "\n")
	assert.Contains(t, lines, "[seccomp] socket")
	assert.Contains(t, lines, "to allow: --allow-domain HOST")
	assert.Contains(t, lines, "read_file "+secret)
	assert.Contains(t, lines, "to allow: --ro "+secret)
	if strings.Contains(r.Output, "Read-only file system") {
		assert.Contains(t, lines, "[view] create /etc/landjail-explain-mcp")
		assert.Contains(t, lines, "to allow: --rw /etc")
	}
	assert.Contains(t, text, "[landjail: refused: [seccomp] socket")

	r, err = k.Bash(ctx, tools.BashArgs{Command: "true"})
	require.NoError(t, err)
	next := strings.Join(r.Network, "\n")
	assert.NotContains(t, next, secret, "the next call lists only its own")
	assert.NotContains(t, next, "SOCK_DGRAM", "the next call lists only its own")
}
