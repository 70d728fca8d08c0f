package egressns

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// requireNetns skips (or fails under LANDJAIL_REQUIRE_KERNEL=1) where
// this process cannot make a network namespace.
func requireNetns(t testing.TB) {
	t.Helper()
	err := InNewNamespace(func() error { return nil })
	kerneltest.RequireNamespaces(t, err)
}

// dialFrom connects on the calling (namespaced) thread.
func dialFrom(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp4", addr, 2*time.Second)
}

// TestSetupRoutesSyntheticRange: after Setup a connection to any address
// of the synthetic range reaches the 0.0.0.0 listener, which sees that
// address as its local one. Control: the same connect in a namespace
// without Setup finds no route (ENETUNREACH), and UDP to a real address
// has none either way.
func TestSetupRoutesSyntheticRange(t *testing.T) {
	requireNetns(t)
	err := InNewNamespace(func() error {
		_, err := dialFrom("198.18.3.7:443")
		if !errors.Is(err, unix.ENETUNREACH) {
			return errors.New("control: before Setup, 198.18.3.7 was not unreachable: " + errString(err))
		}
		return nil
	})
	require.NoError(t, err)

	err = InNewNamespace(func() error {
		s, err := Setup([]uint16{443, 22})
		if err != nil {
			return err
		}
		defer s.Close()
		require.Len(t, s.TCP, 2)
		l, err := net.FileListener(s.TCP[0])
		require.NoError(t, err)
		defer l.Close()
		accepted := make(chan net.Addr, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				accepted <- nil
				return
			}
			accepted <- c.LocalAddr()
			c.Close()
		}()
		c, err := dialFrom("198.18.3.7:443")
		require.NoError(t, err)
		c.Close()
		assert.Equal(t, "198.18.3.7:443", (<-accepted).String())

		// The DNS socket answers on 127.0.0.1:53.
		pc, err := net.FilePacketConn(s.DNS)
		require.NoError(t, err)
		defer pc.Close()
		assert.Equal(t, "127.0.0.1:53", pc.LocalAddr().String())

		// Nothing else is routed: a real address stays unreachable.
		_, err = dialFrom("1.1.1.1:443")
		assert.ErrorIs(t, err, unix.ENETUNREACH)
		u, err := net.Dial("udp4", "1.1.1.1:53")
		if err == nil {
			_, err = u.Write([]byte("x"))
			u.Close()
		}
		assert.ErrorIs(t, err, unix.ENETUNREACH)
		return nil
	})
	require.NoError(t, err)
}

// TestSetupTwiceFails: the route exists once (NLM_F_EXCL); the kernel's
// refusal comes back as an error, so a failure to add it is not silent.
func TestSetupTwiceFails(t *testing.T) {
	requireNetns(t)
	err := InNewNamespace(func() error {
		s, err := Setup(nil)
		if err != nil {
			return err
		}
		s.Close()
		_, err = Setup(nil)
		assert.ErrorIs(t, err, unix.EEXIST)
		var se *os.SyscallError
		assert.ErrorAs(t, err, &se)
		return nil
	})
	require.NoError(t, err)
}

func errString(err error) string {
	if err == nil {
		return "connected"
	}
	return err.Error()
}
