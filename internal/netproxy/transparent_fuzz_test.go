package netproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"testing"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// FuzzCheckFirst: for any first bytes a client sends to the transparent
// address of example.test:443 (a bare entry: no opaque traffic), the
// check does not panic, reads at most MaxHeaderBytes, loses and invents
// no byte (what it consumed followed by the rest is the input), and lets
// the connection through only when the input is a TLS ClientHello whose
// SNI is example.test or an HTTP request whose Host is example.test[:443]
// (each re-checked here with a fresh parser).
func FuzzCheckFirst(f *testing.F) {
	p, err := New(Config{Allow: []string{"example.test"}})
	if err != nil {
		f.Fatal(err)
	}
	defer p.Close()
	f.Add([]byte("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"))
	f.Add([]byte("GET http://evil.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n"))
	f.Add([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
	f.Add([]byte{0x16, 3, 1, 0, 5, 1, 0, 0, 1, 0})
	f.Add(clientHelloBytes(f, "example.test"))
	f.Add(clientHelloBytes(f, "evil.test"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		seen, _, _, reason := p.checkFirst(br, len(data) == 0, "example.test", 443)
		if len(seen) > MaxHeaderBytes {
			t.Fatalf("read %d bytes, more than %d", len(seen), MaxHeaderBytes)
		}
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(append(append([]byte(nil), seen...), rest...), data) {
			t.Fatalf("bytes lost or invented: seen %q rest %q", seen, rest)
		}
		if reason != "" {
			return
		}
		if len(data) > 0 && data[0] == 0x16 {
			if sni := clientHelloSNI(bytes.NewReader(data)); sni == "" {
				t.Fatalf("TLS without SNI passed: %q", data)
			} else if st, err := allowlist.ParseTarget(sni, 443); err != nil || st.Name != "example.test" {
				t.Fatalf("TLS with SNI %q passed", sni)
			}
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			t.Fatalf("neither TLS nor HTTP, and passed without an opaque entry: %q", data)
		}
		if ht, err := allowlist.ParseTarget(req.Host, 443); err != nil || ht.Name != "example.test" || ht.Port != 443 {
			t.Fatalf("HTTP with Host %q passed", req.Host)
		}
	})
}

// clientHelloBytes is a real ClientHello for sni, as crypto/tls sends it.
func clientHelloBytes(f *testing.F, sni string) []byte {
	var out bytes.Buffer
	c := tlsClient(&out, sni)
	_ = c.Handshake() // fails: nothing answers; the hello was written
	return out.Bytes()
}

// writeOnlyConn records what a TLS client writes; reads end at once.
type writeOnlyConn struct {
	readOnlyConn
	w io.Writer
}

func (c writeOnlyConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c writeOnlyConn) Read([]byte) (int, error)    { return 0, io.EOF }

func tlsClient(w io.Writer, sni string) *tls.Conn {
	return tls.Client(writeOnlyConn{readOnlyConn{}, w}, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
}
