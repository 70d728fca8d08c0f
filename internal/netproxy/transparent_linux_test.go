package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/egressns"
	"github.com/landjail/landjail/internal/kerneltest"
)

// portDialer sends every checked dial of publicAddr:PORT to ups[PORT]
// (a loopback server of the host's namespace) and records the dials.
type portDialer struct {
	mu     sync.Mutex
	dialed []string
	ups    map[string]string
}

func (d *portDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != publicAddr || d.ups[port] == "" {
		return nil, fmt.Errorf("portDialer: refusing %q in tests", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.ups[port])
}

func (d *portDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.dialed)
}

// echoServer answers each line with "echo: LINE".
func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s := bufio.NewScanner(c)
				for s.Scan() {
					fmt.Fprintf(c, "echo: %s\n", s.Text())
				}
			}()
		}
	}()
	return l.Addr().String()
}

// transparentEnv is a proxy for allow serving transparent egress in a new
// network namespace (egressns.Setup there: DNS on 127.0.0.1:53, TCP on
// 80, 443 and 22), with upstreams for those ports; run executes client
// code on a thread in that namespace.
type transparentEnv struct {
	p      *Proxy
	dialer *portDialer
}

func newTransparent(t *testing.T, allow []string) (*transparentEnv, func(fn func() error)) {
	t.Helper()
	kerneltest.RequireNamespaces(t, egressns.InNewNamespace(func() error { return nil }))
	plain, tlsUp := newCountingServer(t, false), newCountingServer(t, true)
	d := &portDialer{ups: map[string]string{
		"80": plain.Listener.Addr().String(), "443": tlsUp.Listener.Addr().String(), "22": echoServer(t),
	}}
	res := newResolver(map[string][]string{"example.test": {publicAddr}, "git.test": {publicAddr}, "evil.test": {publicAddr}})
	p, err := New(Config{Allow: allow, Resolver: res, Dialer: d})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	e := &transparentEnv{p: p, dialer: d}
	// One namespace per test: the sockets are made on its thread, the
	// clients run there too (each run call gets a thread in it by
	// setns through /proc/PID/task/TID/ns/net).
	var nsPath string
	ready := make(chan error, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		err := egressns.InNewNamespace(func() error {
			s, err := egressns.Setup([]uint16{80, 443, 22})
			if err != nil {
				return err
			}
			for _, f := range s.TCP {
				l, err := net.FileListener(f)
				if err != nil {
					return err
				}
				go p.ServeTransparent(l)
			}
			pc, err := net.FilePacketConn(s.DNS)
			if err != nil {
				return err
			}
			go p.ServeDNS(pc)
			s.Close()
			nsPath = fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
			ready <- nil
			<-stop
			return nil
		})
		if err != nil {
			ready <- err
		}
	}()
	require.NoError(t, <-ready)
	run := func(fn func() error) {
		t.Helper()
		require.NoError(t, egressns.InNamespaceAt(nsPath, fn))
	}
	return e, run
}

// lookup asks the responder at 127.0.0.1:53 for name's A record (on the
// calling thread: in the namespace).
func lookup(name string) (dnsmessage.RCode, []netip.Addr, error) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 9, RecursionDesired: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name + "."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	q, _ := b.Finish()
	c, err := net.Dial("udp4", "127.0.0.1:53")
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(q); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		return 0, nil, err
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil {
		return 0, nil, err
	}
	var addrs []netip.Addr
	for _, a := range m.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			addrs = append(addrs, netip.AddrFrom4(r.A))
		}
	}
	return m.Header.RCode, addrs, nil
}

func mustLookup(t *testing.T, name string) netip.Addr {
	rc, addrs, err := lookup(name)
	require.NoError(t, err)
	require.Equal(t, dnsmessage.RCodeSuccess, rc)
	require.Len(t, addrs, 1)
	return addrs[0]
}

// httpsGet does GET / over TLS with sni to addr:443, from this thread.
func httpsGet(addr netip.Addr, sni string) (string, error) {
	raw, err := net.DialTimeout("tcp4", netip.AddrPortFrom(addr, 443).String(), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(raw, &tls.Config{ServerName: sni, InsecureSkipVerify: true}) // the SNI is the point here, not the certificate
	if err := c.Handshake(); err != nil {
		return "", err
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strconv.Itoa(resp.StatusCode) + " " + string(b), nil
}

// httpGet does GET / with host as Host to addr:80.
func httpGet(addr netip.Addr, host string) (string, error) {
	c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(addr, 80).String(), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strconv.Itoa(resp.StatusCode) + " " + string(b), nil
}

// rawHTTP sends raw to addr:80 and returns the response's status line
// and body.
func rawHTTP(addr netip.Addr, raw string) (string, error) {
	c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(addr, 80).String(), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strconv.Itoa(resp.StatusCode) + " " + string(b), nil
}

// lineExchange sends line to addr:port and returns the first line back.
func lineExchange(addr netip.Addr, port uint16, line string) (string, error) {
	c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(addr, port).String(), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "%s\n", line)
	return bufio.NewReader(c).ReadString('\n')
}

// TestTransparentTLS: a client that knows nothing of the proxy resolves
// the listed name through the responder and reaches the upstream over
// TLS. Controls: the same address with another SNI, or none, is refused
// and counted, and nothing is dialled for it.
func TestTransparentTLS(t *testing.T) {
	e, run := newTransparent(t, []string{"example.test", "evil.test:80"})
	run(func() error {
		a := mustLookup(t, "example.test")
		out, err := httpsGet(a, "example.test")
		require.NoError(t, err)
		assert.Equal(t, "200 hello from upstream", out)
		dials := e.dialer.count()

		_, err = httpsGet(a, "evil.test")
		assert.Error(t, err, "SNI naming another (even listed) host")
		_, err = httpsGet(a, "")
		assert.Error(t, err, "no SNI")
		assert.Equal(t, dials, e.dialer.count(), "refused connections dial nothing")
		assert.Equal(t, 2, countReason(e.p, ReasonNameMismatch))
		return nil
	})
}

// TestTransparentHTTP: plain HTTP with the listed name as Host passes;
// another Host on the same address gets 403 and is counted.
func TestTransparentHTTP(t *testing.T) {
	e, run := newTransparent(t, []string{"example.test", "evil.test"})
	run(func() error {
		a := mustLookup(t, "example.test")
		out, err := httpGet(a, "example.test")
		require.NoError(t, err)
		assert.Equal(t, "200 hello from upstream", out)
		out, err = httpGet(a, "example.test:80")
		require.NoError(t, err)
		assert.Equal(t, "200 hello from upstream", out)

		out, err = httpGet(a, "evil.test")
		require.NoError(t, err)
		assert.Contains(t, out, "403 landjail proxy: refused: "+ReasonNameMismatch)
		out, err = httpGet(a, "example.test:8080")
		require.NoError(t, err)
		assert.Contains(t, out, "403 ")
		assert.Equal(t, 2, countReason(e.p, ReasonNameMismatch))

		// The request line's absolute form names the target too (a
		// server must prefer it to Host): another host there is refused.
		dials := e.dialer.count()
		for _, raw := range []string{
			"GET http://evil.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n",
			"CONNECT evil.test:443 HTTP/1.1\r\nHost: example.test\r\n\r\n",
			"GET / HTTP/1.1\r\nHost: example.test\r\nHost: evil.test\r\n\r\n",
			"GET / HTTP/1.1\r\n\r\n",
			"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		} {
			out, err := rawHTTP(a, raw)
			require.NoError(t, err, "%q", raw)
			assert.Contains(t, out, "403 ", "%q", raw)
		}
		assert.Equal(t, dials, e.dialer.count(), "refused requests dial nothing")
		return nil
	})
}

// TestTransparentOpaque: traffic that is neither TLS nor HTTP (an ssh
// banner) reaches a host whose entry names the port (git.test:22); the
// control, the same bytes to a bare entry's 443, is refused.
func TestTransparentOpaque(t *testing.T) {
	e, run := newTransparent(t, []string{"example.test", "git.test:22"})
	run(func() error {
		g := mustLookup(t, "git.test")
		out, err := lineExchange(g, 22, "SSH-2.0-test")
		require.NoError(t, err)
		assert.Equal(t, "echo: SSH-2.0-test\n", out)

		a := mustLookup(t, "example.test")
		_, err = lineExchange(a, 443, "SSH-2.0-test")
		assert.Error(t, err)
		assert.Equal(t, 1, countReason(e.p, ReasonOpaque))
		// git.test has no entry for 443: TLS naming it is refused by the
		// allowlist check after the SNI matched.
		_, err = httpsGet(g, "git.test")
		assert.Error(t, err)
		assert.Equal(t, 1, countReason(e.p, ReasonPort))
		return nil
	})
}

// TestTransparentRefusesUnlisted: an unlisted name does not resolve
// (NXDOMAIN, counted), an address never handed out and the namespace's
// own loopback are refused, and a real address has no route.
func TestTransparentRefusesUnlisted(t *testing.T) {
	e, run := newTransparent(t, []string{"example.test"})
	run(func() error {
		rc, addrs, err := lookup("evil.test")
		require.NoError(t, err)
		assert.Equal(t, dnsmessage.RCodeNameError, rc)
		assert.Empty(t, addrs)
		assert.Equal(t, 1, countReason(e.p, ReasonDNSNotListed))

		_, err = httpsGet(netip.MustParseAddr("198.18.77.1"), "example.test")
		assert.Error(t, err)
		_, err = httpsGet(netip.MustParseAddr("127.0.0.1"), "example.test")
		assert.Error(t, err)
		assert.Equal(t, 2, countReason(e.p, ReasonNotSynthetic))
		_, err = net.DialTimeout("tcp4", publicAddr+":443", 2*time.Second)
		assert.Error(t, err, "no route to a real address")
		assert.Zero(t, e.dialer.count())
		return nil
	})
}

// TestTransparentCloseEndsTunnels: Close ends a spliced connection (the
// client sees end of file), and serving after Close returns ErrClosed
// and closes what it was given.
func TestTransparentCloseEndsTunnels(t *testing.T) {
	e, run := newTransparent(t, []string{"git.test:22"})
	run(func() error {
		g := mustLookup(t, "git.test")
		c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(g, 22).String(), 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "SSH-2.0-test\n")
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "echo: SSH-2.0-test\n", line)

		require.NoError(t, e.p.Close())
		_, err = br.ReadString('\n')
		assert.ErrorIs(t, err, io.EOF, "the tunnel ended with Close")
		// Not only half-closed: the proxy let go of the client's
		// connection (listeners and DNS socket too) without waiting
		// for the client to write or the idle timeout.
		assert.Eventually(t, func() bool {
			e.p.mu.Lock()
			defer e.p.mu.Unlock()
			return len(e.p.serving) == 0
		}, 5*time.Second, 20*time.Millisecond, "the proxy still holds a connection or socket")
		return nil
	})
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	assert.ErrorIs(t, e.p.ServeTransparent(l), ErrClosed)
	_, err = l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	assert.ErrorIs(t, e.p.ServeDNS(pc), ErrClosed)
	_, _, err = pc.ReadFrom(make([]byte, 1))
	assert.ErrorIs(t, err, net.ErrClosed)
}

// TestTransparentSilentClient: a client that sends nothing (a protocol
// where the server speaks first) is decided after opaqueWait, not after
// the 30 s header timeout: refused for a bare entry, passed through for
// NAME:PORT (the echo server then answers what the client sends later).
func TestTransparentSilentClient(t *testing.T) {
	e, run := newTransparent(t, []string{"example.test", "git.test:22"})
	run(func() error {
		g := mustLookup(t, "git.test")
		c, err := net.DialTimeout("tcp4", netip.AddrPortFrom(g, 22).String(), 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		time.Sleep(opaqueWait + 500*time.Millisecond)
		fmt.Fprintf(c, "late\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "echo: late\n", line)

		a := mustLookup(t, "example.test")
		c2, err := net.DialTimeout("tcp4", netip.AddrPortFrom(a, 443).String(), 5*time.Second)
		require.NoError(t, err)
		defer c2.Close()
		c2.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = c2.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "closed after opaqueWait")
		assert.Equal(t, 1, countReason(e.p, ReasonOpaque))
		return nil
	})
}
