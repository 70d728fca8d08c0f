package netproxy

import (
	"errors"
	"net"
	"time"

	"github.com/landjail/landjail/internal/cpushare"
)

// throttled returns l whose accepted connections charge s at each Read
// and Write (Config.CPUs), or l itself for a nil s.
func throttled(l net.Listener, s *cpushare.Share) net.Listener {
	if s == nil {
		return l
	}
	return throttleListener{l, s}
}

type throttleListener struct {
	net.Listener
	s *cpushare.Share
}

func (l throttleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &throttleConn{c, l.s}, nil
}

// throttleConn charges the proxy's CPU share after each Read and Write
// of a client connection and waits while it is owed: the client (the
// confined command) is held back, and with it what the proxy does for it.
type throttleConn struct {
	net.Conn
	s *cpushare.Share
}

func (c *throttleConn) Read(b []byte) (n int, err error) {
	c.s.Do(func() { n, err = c.Conn.Read(b) }, time.Sleep)
	return n, err
}

func (c *throttleConn) Write(b []byte) (n int, err error) {
	c.s.Do(func() { n, err = c.Conn.Write(b) }, time.Sleep)
	return n, err
}

// CloseWrite and CloseRead keep TCP half-close working through the
// wrapper (a CONNECT tunnel's or a transparent connection's end in one
// direction: transparent.go's closeWrite, goproxy's half-closable conn).
func (c *throttleConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *throttleConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return errors.ErrUnsupported
}
