package netproxy

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

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

// TestCPUsBoundDNS: the DNS responder (transparent egress) charges the
// same share at each query: a client sending queries as fast as it can
// for 1 s gets far fewer answers from a proxy with 0.05 CPU than from
// one without a share (control: thousands). Red without the charge in
// ServeDNS.
func TestCPUsBoundDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("CPU bound measured in the full pass")
	}
	answers := func(cpus float64) int {
		p, err := New(Config{Allow: []string{"example.com"}, CPUs: cpus})
		require.NoError(t, err)
		defer p.Close()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		go p.ServeDNS(pc)
		c, err := net.Dial("udp", pc.LocalAddr().String())
		require.NoError(t, err)
		defer c.Close()
		var got atomic.Int64
		go func() {
			b := make([]byte, 512)
			for {
				if _, err := c.Read(b); err != nil {
					return
				}
				got.Add(1)
			}
		}()
		q := dnsQuery(t, "example.com.", dnsmessage.TypeA)
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			c.Write(q)
		}
		time.Sleep(100 * time.Millisecond)
		return int(got.Load())
	}
	free := answers(0)
	held := answers(0.05)
	t.Logf("answers in 1 s: %d without a share, %d with 0.05 CPU", free, held)
	require.Greater(t, free, 2000, "control: the responder answers")
	assert.Less(t, held*4, free, "the share holds the responder back")
}
