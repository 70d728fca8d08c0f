package exec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// freePort returns a TCP port free on the host's loopback now.
func freeTCPPort(t *testing.T) uint16 {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// TestInNamespaceListener: a listener made by Cmd.InNamespace belongs to
// the child's private network namespace. The child (Landlock allows
// connect to that port only, landlock.Options.ProxyTCP) reaches it and
// reads what the test's goroutine, in the host namespace, writes to the
// accepted connection; from the host the same address is refused
// (nothing listens there), which is the control that the socket is not
// the host's. The hook runs once per Start, before confinement (it could
// not bind under Landlock's TCP rules otherwise).
//
// Per matrix mode: with the namespace layer (root; native, openat2=ENOSYS)
// as above. Without it (ns=EPERM, landlock=ENOSYS, all=EPERM) there is no
// private network to put a listener in: the test checks only that the
// hook's error fails Start and that Exec refuses a Cmd with a hook.
func TestInNamespaceListener(t *testing.T) {
	ws, err := jail.New(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })

	t.Run("hook error fails Start", func(t *testing.T) {
		rs, err := landlock.Compile(ws, landlock.Options{System: true})
		require.NoError(t, err)
		defer rs.Close()
		boom := errors.New("boom")
		c := exec.CommandContext(context.Background(), ws, rs, "/bin/true")
		c.InNamespace = func() error { return boom }
		err = c.Start()
		require.ErrorIs(t, err, boom)
		assert.Nil(t, c.Process)
	})
	t.Run("Exec refuses a hook", func(t *testing.T) {
		c := exec.CommandContext(context.Background(), ws, nil, "/bin/true")
		c.InNamespace = func() error { return nil }
		assert.ErrorContains(t, c.Exec(), "InNamespace needs Start")
	})
	t.Run("listener inside the child's network namespace", func(t *testing.T) {
		_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
		_, llBlocked := kerneltest.Blocked(kerneltest.FeatureLandlock)
		if nsBlocked || llBlocked {
			t.Skipf("no namespace layer under %s=%s (it needs namespaces and Landlock): no private network to listen in", kerneltest.EnvEmulate, kerneltest.Emulated())
		}
		kerneltest.RequireLandlockABI(t, 4)
		kerneltest.RequireFeature(t, "mount and network namespaces", nsview.Probe())
		port := freeTCPPort(t)
		addr := "127.0.0.1:" + strconv.Itoa(int(port))
		rs, err := landlock.Compile(ws, landlock.Options{System: true, Namespaces: true, ProxyTCP: []uint16{port}})
		require.NoError(t, err)
		defer rs.Close()
		defer exec.Release(rs)
		require.True(t, rs.Report().PrivateNetwork, "ProxyTCP must keep the private network")
		assert.Equal(t, []uint16{port}, rs.Report().ProxyTCP)

		for i := range 2 { // one listener per Start, a fresh thread each
			var l net.Listener
			calls := 0
			c := exec.CommandContext(context.Background(), ws, rs, "/bin/bash", "-c",
				"exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(int(port))+" && cat <&3")
			c.InNamespace = func() error {
				calls++
				// Plain TCP (Go listens with MPTCP by default, which
				// Landlock's TCP rules do not cover).
				var lc net.ListenConfig
				lc.SetMultipathTCP(false)
				var err error
				l, err = lc.Listen(context.Background(), "tcp4", addr)
				return err
			}
			var out bytes.Buffer // one writer for both: os/exec gives the child one pipe
			c.Stdout, c.Stderr = &out, &out
			require.NoError(t, c.Start())
			require.Equal(t, 1, calls)
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				fmt.Fprintf(conn, "from the host side %d\n", i)
				conn.Close()
			}()
			// Control: the host's loopback has nothing on that port.
			_, err = net.Dial("tcp4", addr)
			assert.ErrorIs(t, err, unix.ECONNREFUSED, "the listener is in the host's namespace")
			require.NoError(t, c.Wait(), out.String())
			assert.Equal(t, fmt.Sprintf("from the host side %d\n", i), out.String())
			l.Close()
		}
	})
}
