package netproxy

import (
	"errors"
	"os"
	"sync/atomic"
	"time"

	"net"
)

// idleConn is an upstream connection that fails a Read once neither
// direction has moved a byte for idle, and leaves the proxy's set of open
// upstream connections when closed.
type idleConn struct {
	net.Conn
	idle   time.Duration
	p      *Proxy
	last   atomic.Int64 // unix nanoseconds of the last byte moved
	closed atomic.Bool
}

func (c *idleConn) touch() { c.last.Store(time.Now().UnixNano()) }

// Read waits for data, extending its deadline while the other direction
// (Write) is active, and returns os.ErrDeadlineExceeded once the
// connection was idle both ways for c.idle.
func (c *idleConn) Read(b []byte) (int, error) {
	for {
		deadline := time.Unix(0, c.last.Load()).Add(c.idle)
		if err := c.Conn.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		n, err := c.Conn.Read(b)
		if n > 0 {
			c.touch()
		}
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && n == 0 &&
			time.Since(time.Unix(0, c.last.Load())) < c.idle {
			continue // the write side moved bytes meanwhile: not idle
		}
		return n, err
	}
}

func (c *idleConn) Write(b []byte) (int, error) {
	c.touch()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(b)
	c.touch()
	return n, err
}

// CloseWrite and CloseRead keep TCP half-close working through the
// wrapper (goproxy half-closes a tunnel when one side ends cleanly).
func (c *idleConn) CloseWrite() error {
	if tc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return tc.CloseWrite()
	}
	return c.Close()
}

func (c *idleConn) CloseRead() error {
	if tc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return tc.CloseRead()
	}
	return c.Close()
}

func (c *idleConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.p.mu.Lock()
	delete(c.p.upstream, c)
	c.p.mu.Unlock()
	return c.Conn.Close()
}
