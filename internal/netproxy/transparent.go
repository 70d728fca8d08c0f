package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"golang.org/x/net/netutil"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// opaqueWait is how long a transparent connection may stay silent before
// the proxy decides it carries neither TLS nor HTTP (a protocol where the
// server speaks first: SMTP, FTP): such a connection starts that much
// later. An ssh client sends its banner at once.
const opaqueWait = time.Second

// ServeTransparent accepts connections on l (for landjail: a TCP
// listener on 0.0.0.0:PORT inside the command's network namespace, where
// allowlist.SyntheticPrefix is routed to loopback) until [Proxy.Close],
// then returns [ErrClosed]; any other error is l's Accept error. It takes
// ownership of l and closes it. At most MaxConns connections per
// listener are open at once.
//
// Each connection is to an address the DNS responder handed out
// ([Proxy.AnswerDNS]); the address gives the name, the listener's port
// the port. The proxy then reads what the client sends first, without
// forwarding it yet:
//
//   - a TLS ClientHello: its server name (SNI) must be that name;
//   - an HTTP/1 request: its Host must be that name (and port, if given);
//   - nothing within 1 s, or anything else (ssh): allowed only when an
//     entry for the name names this port alone or any port
//     (allowlist.OpaquePort);
//
// then runs the allowlist and rebinding checks of [Proxy] for name:port,
// dials a checked address and splices the two connections, the bytes it
// read first included. Refusals are counted ([ReasonNotSynthetic],
// [ReasonNameMismatch], [ReasonOpaque] and the proxy's own); an HTTP
// client gets a 403 response, others a closed connection.
//
// It does not look past the first message: later requests of a kept-alive
// HTTP connection, and everything inside TLS, are not checked (as for
// CONNECT tunnels: they reach only the listed name's servers). A client
// using Encrypted Client Hello sends the provider's public name as SNI
// and is refused.
func (p *Proxy) ServeTransparent(l net.Listener) error {
	if !p.track(l) {
		l.Close()
		return ErrClosed
	}
	defer p.untrack(l)
	ll := netutil.LimitListener(throttled(l, p.cpu), p.maxConns)
	for {
		c, err := ll.Accept()
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !p.track(c) {
			c.Close()
			return ErrClosed
		}
		go func() {
			defer p.untrack(c)
			defer c.Close()
			p.transparent(c)
		}()
	}
}

// transparent serves one accepted transparent connection.
func (p *Proxy) transparent(c net.Conn) {
	local, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil {
		return // cannot happen for a TCP socket
	}
	ip, port := local.Addr().Unmap(), local.Port()
	name, ok := p.syn.name(ip)
	if !ok {
		p.refuse(ip.String(), port, ReasonNotSynthetic)
		return
	}
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(opaqueWait))
	first, err := br.Peek(1)
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		return // closed before sending anything
	}
	c.SetReadDeadline(time.Now().Add(readHeaderTimeout))
	seen, isHTTP, asked, reason := p.checkFirst(br, len(first) == 0, name, port)
	if reason != "" {
		p.refuse(asked, port, reason)
		if isHTTP {
			writeRefusal(c, reason)
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultDialTimeout)
	defer cancel()
	d, why := p.decide(ctx, allowlist.Target{Name: name, Port: port})
	if d == nil {
		p.refuse(name, port, why)
		if isHTTP {
			writeRefusal(c, why)
		}
		return
	}
	up, err := p.dialDecision(ctx, d)
	if err != nil {
		if isHTTP {
			writeRefusal(c, err.Error())
		}
		return
	}
	defer up.Close()
	splice(c, up, io.MultiReader(bytes.NewReader(seen), br), p.idle)
}

// checkFirst reads the client's first message from br (nothing when
// silent: the client sent nothing within opaqueWait) and checks it names
// name:port, as [Proxy.ServeTransparent] describes. It returns the bytes
// it consumed (at most MaxHeaderBytes, to be sent upstream before the
// rest of br), whether the client speaks HTTP (it then gets a 403 on
// refusal), and on refusal the reason and the host the client named
// (name when it named none).
func (p *Proxy) checkFirst(br *bufio.Reader, silent bool, name string, port uint16) (seen []byte, isHTTP bool, asked, reason string) {
	var buf bytes.Buffer
	tee := io.TeeReader(io.LimitReader(br, MaxHeaderBytes), &buf)
	var first []byte
	if !silent {
		first, _ = br.Peek(1) // buffered already: does not block
	}
	switch {
	case !silent && len(first) == 1 && first[0] == 0x16: // TLS handshake record
		sni := clientHelloSNI(tee)
		if st, err := allowlist.ParseTarget(sni, port); sni == "" || err != nil || st.Name != name {
			return buf.Bytes(), false, orName(sni, name), ReasonNameMismatch
		}
	case !silent && len(first) == 1 && looksLikeHTTP(br):
		req, err := http.ReadRequest(bufio.NewReader(tee))
		if err != nil {
			return buf.Bytes(), true, name, ReasonBadHost
		}
		ht, err := allowlist.ParseTarget(req.Host, port)
		if err != nil || ht.Name != name || ht.Port != port {
			return buf.Bytes(), true, orName(req.Host, name), ReasonNameMismatch
		}
		return buf.Bytes(), true, name, ""
	default:
		if !allowlist.OpaquePort(p.rules, name, port) {
			return buf.Bytes(), false, name, ReasonOpaque
		}
	}
	return buf.Bytes(), false, name, ""
}

// splice copies from (client's first bytes, then the client) to up, and
// from up to the client, half-closing each side when its source ends; it
// returns when both directions ended, or idle after the upstream ended.
func splice(c, up net.Conn, from io.Reader, idle time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(up, from)
		closeWrite(up)
	}()
	io.Copy(c, up)
	closeWrite(c)
	c.SetReadDeadline(time.Now().Add(idle))
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// orName is s (what the client named), or name when s is empty.
func orName(s, name string) string {
	if s == "" {
		return name
	}
	return s
}

// looksLikeHTTP reports whether the buffered start of br is an HTTP/1
// request line's method: 1 to 20 upper-case letters and a space. It waits
// for at most 21 bytes (bounded by the connection's read deadline).
func looksLikeHTTP(br *bufio.Reader) bool {
	for n := 1; n <= 21; n++ {
		b, err := br.Peek(n)
		if err != nil {
			return false
		}
		ch := b[n-1]
		switch {
		case ch == ' ':
			return n > 1
		case ch < 'A' || ch > 'Z':
			return false
		}
	}
	return false
}

// writeRefusal answers an HTTP client with 403 and the reason.
func writeRefusal(c net.Conn, reason string) {
	body := "landjail proxy: refused: " + reason + "\n"
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// errHelloSeen stops the handshake once the ClientHello was parsed.
var errHelloSeen = errors.New("client hello seen")

// clientHelloSNI reads a TLS ClientHello from r with crypto/tls's own
// parser and returns its server name ("" when it has none or does not
// parse). Nothing is written to the client.
func clientHelloSNI(r io.Reader) string {
	var sni string
	srv := tls.Server(readOnlyConn{r}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			sni = h.ServerName
			return nil, errHelloSeen
		},
	})
	_ = srv.Handshake()
	return sni
}

// readOnlyConn is a net.Conn reading from r whose writes vanish (the
// alert crypto/tls sends after errHelloSeen must not reach the client).
type readOnlyConn struct{ r io.Reader }

func (c readOnlyConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c readOnlyConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c readOnlyConn) Close() error                     { return nil }
func (c readOnlyConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c readOnlyConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c readOnlyConn) SetDeadline(time.Time) error      { return nil }
func (c readOnlyConn) SetReadDeadline(time.Time) error  { return nil }
func (c readOnlyConn) SetWriteDeadline(time.Time) error { return nil }
