package main

import (
	"context"
	"net"
	"os"
	osexec "os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestBindTCPNoReusePort: with --bind-tcp P the command stays in the
// host's network namespace, and it may not join the SO_REUSEPORT group
// of a host daemon listening on P (red team round 25, R25c-2: the kernel
// then handed it about half of the daemon's clients). setsockopt
// SO_REUSEPORT is refused (EPERM) and the bind finds the port taken, in
// every layer. Control: the same program unconfined joins the group and
// listens.
func TestBindTCPNoReusePort(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	py := "/usr/bin/python3" // in the system preset (a pyenv shim under HOME is not)
	if _, err := os.Stat(py); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	t.Parallel()
	bin := landjailBin(t)
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		return serr
	}}
	daemon, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer daemon.Close()
	port := strconv.Itoa(daemon.Addr().(*net.TCPAddr).Port)
	impostor := `
import socket
s = socket.socket()
try:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    print("reuseport set")
except OSError as e:
    print("setsockopt errno", e.errno)
try:
    s.bind(("127.0.0.1", ` + port + `))
    s.listen()
    print("LISTENING")
except OSError as e:
    print("bind errno", e.errno)
`
	out, err := osexec.Command(py, "-c", impostor).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "LISTENING", "control: unconfined, the program joins the daemon's group")

	ws := wsDir(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		args := append([]string{"run", "--workspace", ws, "--bind-tcp", port, "--timeout", "1m"}, mode...)
		_, got := runBinCtx(t, 60*time.Second, bin, append(args, "--", py, "-c", impostor)...)
		assert.NotContains(t, got, "LISTENING", "%v: the command joined the host daemon's port", mode)
		assert.Contains(t, got, "setsockopt errno 1", "%v: %s", mode, got)
		assert.Contains(t, got, "bind errno 98", "%v: the port is taken (EADDRINUSE): %s", mode, got)
	}
}
