// Package listentest gives tests a listener that a confined child may try
// to reach: it accepts and closes every connection until the test ends,
// and reports each accepted connection, so a test can tell a refused
// connect from one that got through.
package listentest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// Serve accepts and closes connections on l until the test ends, and
// closes l then. The returned channel receives a value per accepted
// connection; it holds up to 16, later ones are dropped while nobody
// reads (the accept loop never blocks on it).
func Serve(t testing.TB, l net.Listener) <-chan struct{} {
	t.Cleanup(func() { l.Close() })
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed at the end of the test
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
			c.Close()
		}
	}()
	return accepted
}

// Listen is net.Listen(network, address) followed by Serve; it fails the
// test if the listen fails.
func Listen(t testing.TB, network, address string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, address)
	require.NoError(t, err)
	Serve(t, l)
	return l
}

// Port is the TCP port l listens on.
func Port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago
// (listened on and closed again), for a test that needs a port nothing
// listens on, or one to grant before anything binds it.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := Port(l)
	require.NoError(t, l.Close())
	return p
}

// HTTPServer starts an httptest server for h on 127.0.0.1, with TLS
// (httptest's self-signed certificate) when tls is true, and closes it
// when the test ends.
func HTTPServer(t testing.TB, tls bool, h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}
