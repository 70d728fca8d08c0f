package netproxy

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cpushare"
)

// TestThrottleConnHalfClose: a throttled client connection (Config.CPUs)
// still half-closes: its CloseWrite gives the peer end of file while
// the peer can still answer, as the TCP connection it wraps does (a
// tunnel's or a transparent connection's end in one direction).
func TestThrottleConnHalfClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	tl := throttled(l, cpushare.New(1))
	defer tl.Close()
	peer, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer peer.Close()
	c, err := tl.Accept()
	require.NoError(t, err)
	defer c.Close()
	hc, ok := c.(interface{ CloseWrite() error })
	require.True(t, ok, "the wrapper half-closes")
	_, err = c.Write([]byte("hi"))
	require.NoError(t, err)
	require.NoError(t, hc.CloseWrite())
	b, err := io.ReadAll(peer)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(b), "end of file after the data")
	_, err = peer.Write([]byte("back"))
	require.NoError(t, err)
	got := make([]byte, 4)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "back", string(got), "the other direction still open")
}
