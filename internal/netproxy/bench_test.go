package netproxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

const benchSize = 100 << 20 // 100 MiB

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// benchServers returns a plain and a TLS server answering /big with
// benchSize bytes and /small with 2 bytes.
func benchServers(b *testing.B) (plain, tlsUp *httptest.Server) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", "104857600")
			_, _ = io.CopyN(w, zeroReader{}, benchSize)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	plain, tlsUp = httptest.NewServer(h), httptest.NewTLSServer(h)
	b.Cleanup(plain.Close)
	b.Cleanup(tlsUp.Close)
	return plain, tlsUp
}

type benchCase struct {
	name   string
	client *http.Client
	url    func(path string) string
}

// benchCases returns direct and proxied clients for plain HTTP and HTTPS
// (CONNECT when proxied). keepAlive false opens a connection per request.
func benchCases(b *testing.B, keepAlive bool) []benchCase {
	plain, tlsUp := benchServers(b)
	_, pport, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, tport, _ := net.SplitHostPort(tlsUp.Listener.Addr().String())
	res := newResolver(map[string][]string{"registry.test": {"127.0.0.1"}})
	p, err := New(Config{Allow: []string{"registry.test:*"}, Resolver: res})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = p.Serve(l) }()
	b.Cleanup(func() { _ = p.Close() })
	addr := l.Addr().String()

	direct := func(up *httptest.Server) *http.Client {
		c := up.Client()
		c.Transport.(*http.Transport).DisableKeepAlives = !keepAlive
		return c
	}
	return []benchCase{
		{"http/direct", direct(plain), func(p string) string { return plain.URL + p }},
		{"http/proxy", proxyClient(addr, plain, keepAlive), func(p string) string { return "http://registry.test:" + pport + p }},
		{"connect/direct", direct(tlsUp), func(p string) string { return tlsUp.URL + p }},
		{"connect/proxy", proxyClient(addr, tlsUp, keepAlive), func(p string) string { return "https://registry.test:" + tport + p }},
	}
}

func fetch(b *testing.B, c *http.Client, u string, want int64) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != want || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d bytes, status %d, %v", u, n, resp.StatusCode, err)
	}
}

// BenchmarkDownload100MiB: throughput of one 100 MiB response, direct vs
// through the proxy, plain HTTP and TLS (CONNECT through the proxy).
func BenchmarkDownload100MiB(b *testing.B) {
	for _, bc := range benchCases(b, true) {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(benchSize)
			b.ReportAllocs()
			for b.Loop() {
				fetch(b, bc.client, bc.url("/big"), benchSize)
			}
		})
	}
}

// BenchmarkSmallGET: latency of a 2-byte GET, with keep-alive and with a
// new connection (and, for TLS, a new handshake and CONNECT) per request.
func BenchmarkSmallGET(b *testing.B) {
	for _, ka := range []bool{true, false} {
		name := map[bool]string{true: "keepalive", false: "newconn"}[ka]
		for _, bc := range benchCases(b, ka) {
			b.Run(name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					fetch(b, bc.client, bc.url("/small"), 2)
				}
			})
		}
	}
}
